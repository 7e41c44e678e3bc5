const REDACTED = '[REDACTED]';

/** The `Authorization` header value for HTTP Basic authentication (section 5). */
export function basicAuthorization(apiUsername: string, apiPassword: string): string {
  return `Basic ${Buffer.from(`${apiUsername}:${apiPassword}`, 'utf8').toString('base64')}`;
}

/**
 * Removes the API password and the Basic token from text leaving the library (log lines, error
 * messages, error bodies), in case a service or proxy echoes them back.
 */
export class SecretRedactor {
  private readonly secrets: readonly string[];

  constructor(apiUsername: string, apiPassword: string) {
    const token = basicAuthorization(apiUsername, apiPassword).slice('Basic '.length);
    const forms = [
      apiPassword,
      JSON.stringify(apiPassword).slice(1, -1),
      encodeURIComponent(apiPassword),
      token,
    ];
    // Longest first, so a secret containing another is replaced whole.
    this.secrets = [...new Set(forms)]
      .filter((s) => s.length > 0)
      .sort((a, b) => b.length - a.length);
  }

  /** `text` with every secret replaced by `[REDACTED]`. */
  text(text: string): string {
    let result = text;
    for (const secret of this.secrets) {
      if (result.includes(secret)) result = result.split(secret).join(REDACTED);
    }
    return result;
  }

  /** A deep copy of a JSON value with every string redacted. */
  value(value: unknown): unknown {
    if (typeof value === 'string') return this.text(value);
    if (Array.isArray(value)) return value.map((item) => this.value(item));
    if (typeof value === 'object' && value !== null) {
      // fromEntries defines own properties, so a `__proto__` key stays data.
      return Object.fromEntries(
        Object.entries(value).map(([key, item]) => [this.text(key), this.value(item)]),
      );
    }
    return value;
  }
}

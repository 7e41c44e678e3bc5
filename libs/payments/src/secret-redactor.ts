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

  /**
   * A JSON value with every string redacted. Unchanged parts keep their identity, so a body
   * without secrets comes back as the very same object.
   */
  value(value: unknown): unknown {
    if (typeof value === 'string') return this.text(value);
    if (Array.isArray(value)) {
      const items = value.map((item) => this.value(item));
      return items.every((item, i) => item === value[i]) ? value : items;
    }
    if (typeof value === 'object' && value !== null) {
      let changed = false;
      const entries = Object.entries(value).map(([key, item]) => {
        const [newKey, newItem] = [this.text(key), this.value(item)];
        changed ||= newKey !== key || newItem !== item;
        return [newKey, newItem];
      });
      // fromEntries defines own properties, so a `__proto__` key stays data.
      return changed ? Object.fromEntries(entries) : value;
    }
    return value;
  }

  /**
   * Parses JSON text and redacts the parsed value, so escaped forms of a secret (`\/`,
   * `\u0070`...) are caught too. `undefined` when the text is not JSON.
   */
  json(text: string): unknown {
    let parsed: unknown;
    try {
      parsed = JSON.parse(text) as unknown;
    } catch {
      return undefined;
    }
    // Escaped forms need a backslash: without one, and without a plain secret, nothing to do.
    if (!text.includes('\\') && !this.secrets.some((secret) => text.includes(secret)))
      return parsed;
    return this.value(parsed);
  }

  /** Text for a log line: JSON re-serialised after redaction, anything else redacted as text. */
  display(text: string): string {
    const parsed = this.json(text);
    return parsed === undefined ? this.text(text) : JSON.stringify(parsed);
  }
}

import fc from 'fast-check';
import { basicAuthorization, SecretRedactor } from './secret-redactor';

/** Every string of a JSON value, keys included. */
function stringsOf(value: unknown): string[] {
  if (typeof value === 'string') return [value];
  if (typeof value !== 'object' || value === null) return [];
  return Object.entries(value).flatMap(([key, item]) => [key, ...stringsOf(item)]);
}

/** JSON text of `value` with every character of its strings written as `\uXXXX` or `\/` at will. */
function escapedJson(value: unknown, escapeAll: boolean): string {
  return JSON.stringify(value).replace(/"((?:[^"\\]|\\.)*)"/g, (_match, inner: string) => {
    const decoded = JSON.parse(`"${inner}"`) as string;
    const body = escapeAll
      ? Array.from(
          { length: decoded.length },
          (_, i) => `\\u${decoded.charCodeAt(i).toString(16).padStart(4, '0')}`,
        ).join('')
      : inner.replaceAll('/', '\\/');
    return `"${body}"`;
  });
}

const password = fc.string({ unit: 'grapheme', minLength: 8, maxLength: 24 });
const username = fc.stringMatching(/^[a-z][a-z0-9-]{2,12}$/);

describe('SecretRedactor.json', () => {
  it('leaves no form of the credentials in any string it parses, however the JSON escapes it', () => {
    fc.assert(
      fc.property(username, password, fc.boolean(), fc.nat(3), (user, pass, escapeAll, where) => {
        const redactor = new SecretRedactor(user, pass);
        const token = basicAuthorization(user, pass).slice('Basic '.length);
        const echoed = [pass, token, Buffer.from(pass).toString('base64')][where % 3];
        const body = { success: true, message: `echo ${echoed} end`, nested: [{ [echoed]: 1 }] };
        const parsed = redactor.json(escapedJson(body, escapeAll));
        for (const text of stringsOf(parsed)) {
          expect(text).not.toContain(pass);
          expect(text).not.toContain(token);
        }
      }),
      { numRuns: 500 },
    );
  });

  it('redacts the password percent-encoded by any encoder, whichever characters it leaves', () => {
    const pass = "p@ss-w0rd!2026 é~'*";
    const redactor = new SecretRedactor('user', pass);
    const bytes = (char: string) => [...Buffer.from(char, 'utf8')];
    const hex = (byte: number) => byte.toString(16).padStart(2, '0');
    /** `pass` with every character outside `kept` escaped, in `upper` or lower hex, space as `space`. */
    const encoded = (kept: RegExp, upper: boolean, space: string) =>
      Array.from(pass, (char) =>
        kept.test(char)
          ? char
          : char === ' ' && space === '+'
            ? '+'
            : bytes(char)
                .map((byte) => `%${upper ? hex(byte).toUpperCase() : hex(byte)}`)
                .join(''),
      ).join('');
    const forms = [
      encodeURIComponent(pass),
      new URLSearchParams({ p: pass }).toString().slice('p='.length),
      // Python's quote(safe=''), Go's url.PathEscape: RFC 3986's unreserved characters kept.
      encoded(/[A-Za-z0-9._~-]/, true, '%20'),
      // Go's url.QueryEscape, Java's URLEncoder: a space as '+'.
      encoded(/[A-Za-z0-9._~-]/, true, '+'),
      encoded(/[A-Za-z0-9]/, false, '%20'),
      encoded(/(?!)/, true, '%20'),
      encoded(/(?!)/, false, '%20'),
    ];
    for (const form of forms) {
      expect(form).not.toBe(pass);
      expect(redactor.text(`user=user&password=${form}&x=1`)).toBe(
        'user=user&password=[REDACTED]&x=1',
      );
      const parsed = redactor.json(JSON.stringify({ echoed: `password=${form}` }));
      expect(parsed).toEqual({ echoed: 'password=[REDACTED]' });
    }
    // Ordinary answers with a percent sign are left as they are.
    const answer = { checkout_url: 'https://pay.example.com/c?x=%20y', success: true };
    expect(redactor.json(JSON.stringify(answer))).toEqual(answer);
  });

  it('returns the parsed value itself when the text cannot hold a secret', () => {
    const redactor = new SecretRedactor('bench-user', 'bench-password-123');
    const text = JSON.stringify({ success: true, items: Array.from({ length: 50 }, (_, i) => i) });
    expect(redactor.json(text)).toEqual(JSON.parse(text));
    expect(redactor.json(`{"url":"https:\\/\\/shop.example.com\\/cb"}`)).toEqual({
      url: 'https://shop.example.com/cb',
    });
  });

  it('catches the escaped forms the fast path lets through to the full walk', () => {
    const redactor = new SecretRedactor('user', 'p@ss/w+rd"\\x==é');
    const parsed = redactor.json(
      JSON.stringify({ a: 'p@ss/w+rd"\\x==é' }).replace('p@ss', '\\u0070@ss'),
    );
    expect(JSON.stringify(parsed)).not.toContain('rd');
    expect(parsed).toEqual({ a: '[REDACTED]' });
  });
});

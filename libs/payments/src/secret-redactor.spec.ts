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

/** `text` with its numeric and named HTML entities decoded. */
function decodeHtml(text: string): string {
  const named: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'" };
  return text
    .replace(/&#[xX]([0-9a-fA-F]+);/g, (_m, hex: string) => String.fromCodePoint(parseInt(hex, 16)))
    .replace(/&#(\d+);/g, (_m, dec: string) => String.fromCodePoint(Number(dec)))
    .replace(/&(amp|lt|gt|quot|apos);/g, (_m, name: string) => named[name]);
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
      // Percent-encoded twice (a URL inside a query parameter).
      encodeURIComponent(encodeURIComponent(pass)),
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

  it('redacts the Basic token percent-encoded (any case, / kept), and both HTML-escaped', () => {
    // A token with `+` and `/` in it, as helper tools print it.
    const [user, pass] = ['api-user', 'P@ss/w0rd+x?äö-🔑-Z9'];
    const redactor = new SecretRedactor(user, pass);
    const token = basicAuthorization(user, pass).slice('Basic '.length);
    expect(token).toMatch(/[+/]/);
    const html = (text: string, named: boolean) =>
      Array.from(text, (char) =>
        /[A-Za-z0-9]/.test(char)
          ? char
          : named && char === '>'
            ? '&gt;'
            : `&#x${char.codePointAt(0)!.toString(16).toUpperCase()};`,
      ).join('');
    const forms = [
      // Python's quote(): `/` kept, the rest upper-case; and lower-case hex.
      token.replaceAll('+', '%2B').replaceAll('=', '%3D'),
      encodeURIComponent(token).replace(/%[0-9A-F]{2}/g, (m) => m.toLowerCase()),
      html(pass, false),
      html(token, false),
      `&#47;${pass}`.replace('/', '&#0047;'),
    ];
    for (const form of forms) {
      const line = redactor.text(`echo ${form} end`);
      expect(line).toContain('[REDACTED]');
      expect(decodeHtml(decodeURIComponent(line))).not.toContain(pass);
      expect(decodeURIComponent(line)).not.toContain(token);
    }
    // Named entities, as HTML escaping writes `<`, `>`, `&`, `"` and `'`.
    const marked = `pa<ss>&"wo'rd1`;
    const named = marked
      .replaceAll('&', '&amp;')
      .replaceAll('<', '&lt;')
      .replaceAll('>', '&gt;')
      .replaceAll('"', '&quot;')
      .replaceAll("'", '&apos;');
    expect(new SecretRedactor(user, marked).text(`<p>${named}</p>`)).toBe('<p>[REDACTED]</p>');
  });

  it('redacts the password and the Basic token inside any longer base64 text, at any offset', () => {
    fc.assert(
      fc.property(
        username,
        password,
        fc.string({ maxLength: 5 }),
        fc.string({ maxLength: 5 }),
        fc.boolean(),
        (user, pass, before, after, asHeader) => {
          const redactor = new SecretRedactor(user, pass);
          const token = basicAuthorization(user, pass).slice('Basic '.length);
          const dump = asHeader ? `authorization: Basic ${token}\r\n` : `${before}${pass}${after}`;
          for (const encoding of ['base64', 'base64url'] as const) {
            const echoed = Buffer.from(dump, 'utf8').toString(encoding);
            const redacted = redactor.text(`dump=${echoed}`);
            const decoded = redacted
              .slice('dump='.length)
              .split('[REDACTED]')
              .map((part) => Buffer.from(part, encoding).toString('utf8'))
              .join('');
            expect(redacted).toContain('[REDACTED]');
            expect(decoded).not.toContain(pass);
            expect(decoded).not.toContain(token);
          }
        },
      ),
      { numRuns: 300 },
    );
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

describe('a credential echoed in a form that is not text of the body', () => {
  it('redacts a password of digits echoed as a JSON number, alone, inside a longer one, or beyond a double', () => {
    for (const pass of ['84726193051', '12345678901234567890']) {
      const redactor = new SecretRedactor('api-user', pass);
      const parsed = redactor.json(
        `{"success":false,"tried":${pass},"longer":9${pass}7,"list":[${pass}],"amount":1500}`,
      );
      expect(parsed).toEqual({
        success: false,
        tried: '[REDACTED]',
        longer: pass.length > 15 ? expect.anything() : '[REDACTED]',
        list: ['[REDACTED]'],
        amount: 1500,
      });
      expect(JSON.stringify(parsed)).not.toContain(String(Number(pass)));
      expect(redactor.display(`{"pin":${pass}}`)).toBe('{"pin":"[REDACTED]"}');
      expect(redactor.value(Number(pass))).toBe('[REDACTED]');
    }
  });

  it('redacts a password of digits echoed as a JSON number in exponent form', () => {
    const redactor = new SecretRedactor('api-user', '84726193051');
    for (const number of [
      '8.4726193051e10',
      '8.4726193051E+10',
      '847261930.51e2',
      '0.84726193051e11',
    ]) {
      const parsed = redactor.json(`{"status":${number},"amount":1500}`);
      expect(parsed).toEqual({ status: '[REDACTED]', amount: 1500 });
    }
    // A number in exponent form that spells no password is kept.
    expect(redactor.json('{"status":"Success","amount":1.5e3}')).toEqual({
      status: 'Success',
      amount: 1500,
    });
  });

  it('redacts the Basic token and the password echoed in UTF-16 text, either byte order', () => {
    const pass = 'S3cr3t-P@ssw0rd/Zq+9';
    const redactor = new SecretRedactor('acme-api', pass);
    const authorization = basicAuthorization('acme-api', pass);
    for (const echoed of [`auth ${authorization}`, `password ${pass}`]) {
      const le = Buffer.from(echoed, 'utf16le');
      const be = Buffer.from(le).swap16();
      for (const bytes of [le, be]) {
        // As the library reads an answer (UTF-8), and as a log line writes that text (JSON).
        const text = bytes.toString('utf8');
        for (const redacted of [redactor.text(text), redactor.text(JSON.stringify(text))]) {
          // What a reader sees once the NULs, raw or JSON-escaped, are dropped.
          const read = redacted.replaceAll('\\u0000', '').replaceAll(String.fromCharCode(0), '');
          expect(read).not.toContain(pass);
          expect(read).not.toContain(authorization.slice('Basic '.length));
        }
      }
    }
  });
});

describe('SecretRedactor.text', () => {
  const pass = 'Sécret-Päss<w>&rd/42';
  const redactor = new SecretRedactor('api-user', pass);
  const token = basicAuthorization('api-user', pass).slice('Basic '.length);
  /** `pass` with only the characters `escape` picks written as `\uXXXX`. */
  const partly = (escape: RegExp) =>
    Array.from(pass, (char) =>
      escape.test(char) ? `\\u${char.charCodeAt(0).toString(16).padStart(4, '0')}` : char,
    ).join('');

  it.each([
    ['non-ASCII escaped alone (Python json.dumps)', partly(/[^\x20-\x7e]/)],
    ['<, > and & escaped (Go encoding/json)', partly(/[<>&]/)],
    ['PHP json_encode (\\/ and \\u together)', partly(/[^\x20-\x7e]/).replaceAll('/', '\\/')],
    ['JSON escaped twice', JSON.stringify(JSON.stringify(pass)).slice(1, -1)],
    [
      'UTF-8 bytes as Python prints them',
      Array.from(Buffer.from(pass, 'utf8'), (byte) =>
        byte > 0x7e ? `\\x${byte.toString(16)}` : String.fromCharCode(byte),
      ).join(''),
    ],
    ['upper-cased', pass.toUpperCase()],
    ['the Basic token lower-cased', token.toLowerCase()],
  ])('redacts the password or token written with %s, in text that is not JSON', (_label, form) => {
    const redacted = redactor.text(`<p>denied: ${form}</p>`);
    expect(redacted).toContain('[REDACTED]');
    expect(redacted.toLowerCase()).not.toContain(pass.toLowerCase());
    expect(redacted.toLowerCase()).not.toContain(form.toLowerCase());
  });

  describe('a credential both in another case and encoded', () => {
    const password = 'Sup3r$ecret/Pass+word';
    const basic = basicAuthorization('shop-api-1', password).slice('Basic '.length);
    const casedAndEncoded = new SecretRedactor('shop-api-1', password);

    it.each([
      ['percent-encoded, upper-cased', encodeURIComponent(password).toUpperCase()],
      ['percent-encoded, lower-cased', encodeURIComponent(password).toLowerCase()],
      ['upper-cased, then as HTML entities', '&#83;UP3R&#36;ECRET&#x2F;PASS&#43;WORD'],
      ['the token upper-cased and percent-encoded', encodeURIComponent(basic.toUpperCase())],
      ['the token lower-cased without padding', basic.toLowerCase().replace(/=+$/, '')],
      ['"basic" and the token lower-cased', `basic ${basic.toLowerCase()}`],
    ])('redacts it %s, as text and as JSON', (_label, form) => {
      const lowerSecrets = [password.toLowerCase(), basic.toLowerCase().replace(/=+$/, '')];
      for (const redacted of [
        casedAndEncoded.text(`denied: ${form}.`),
        JSON.stringify(casedAndEncoded.json(JSON.stringify({ detail: `denied: ${form}.` }))),
      ]) {
        expect(redacted).toContain('[REDACTED]');
        expect(redacted).not.toContain(form);
        const decoded = decodeURIComponent(redacted.replace(/%(?![0-9a-f]{2})/gi, '%25'))
          .replace(/&#x([0-9a-f]+);/gi, (_, hex: string) => String.fromCodePoint(parseInt(hex, 16)))
          .replace(/&#(\d+);/g, (_, code: string) => String.fromCodePoint(Number(code)))
          .toLowerCase();
        for (const secret of lowerSecrets) expect(decoded).not.toContain(secret);
      }
    });
  });

  it.each([
    ['a newline', '\n'],
    ['CR LF', '\r\n'],
    ['spaces', '   '],
    ['a byte-order mark', '\ufeff'],
    ['a no-break space', '\u00a0'],
  ])('redacts a password configured with %s around it when it comes back trimmed', (_, pad) => {
    const real = 'Hst-APIpw-Z4q8';
    const trimming = new SecretRedactor('api-user', `${pad}${real}${pad}`);
    const trimmedToken = basicAuthorization('api-user', real).slice('Basic '.length);

    expect(trimming.text(`invalid credentials: password ${real}.`)).toBe(
      'invalid credentials: password [REDACTED].',
    );
    expect(trimming.text(`auth ${trimmedToken}`)).toBe('auth [REDACTED]');
    expect(
      JSON.stringify(trimming.json(`{"echo":"${Buffer.from(real).toString('base64')}"}`)),
    ).not.toContain(Buffer.from(real).toString('base64'));
  });

  it('leaves text whose escapes spell no credential as it is', () => {
    const text = 'path C:\\payments\\new \\u00e4 "\\/x"';
    expect(redactor.text(text)).toBe(text);
  });
  describe('a password read or sent in another charset', () => {
    const german = 'Straße-Äpfel-2025!';
    const redacts = new SecretRedactor('api-user', german);
    const utf8 = Buffer.from(german, 'utf8');
    const latin1 = Buffer.from(german, 'latin1');

    it.each([
      ['its UTF-8 bytes read as Latin-1 (Node reads header bytes so)', utf8.toString('latin1')],
      ['its UTF-8 bytes read as Windows-1252', 'Stra\u00c3\u0178e-\u00c3\u201epfel-2025!'],
      ['its Latin-1 bytes read as UTF-8', latin1.toString('utf8')],
      ['decomposed (NFD)', german.normalize('NFD')],
      ['its Latin-1 bytes in base64', latin1.toString('base64')],
      ['its Latin-1 bytes in hex, upper case', latin1.toString('hex').toUpperCase()],
      [
        'its Latin-1 bytes in hex, mixed case',
        latin1.toString('hex').replace(/[a-f]/, (d) => d.toUpperCase()),
      ],
      [
        'its Latin-1 bytes percent-encoded',
        Array.from(latin1, (byte) =>
          byte > 0x7e ? `%${byte.toString(16).toUpperCase()}` : String.fromCharCode(byte),
        ).join(''),
      ],
      [
        'its UTF-8 bytes read as Latin-1, percent-encoded',
        encodeURIComponent(utf8.toString('latin1')),
      ],
    ])('redacts %s', (_label, form) => {
      const redacted = redacts.text(`denied: ${form}.`);
      expect(redacted).toBe('denied: [REDACTED].');
    });
  });
});

describe('SecretRedactor.combining', () => {
  // Two registrations whose passwords start alike: the webhook module redacts both at once.
  const kes = new SecretRedactor('shop-kes', 'Sunflower2024');
  const usd = new SecretRedactor('shop-usd', 'Sunflower2024!Xq9');

  it.each([
    ['upper-cased', 'SUNFLOWER2024!XQ9'],
    ['percent-encoded where needed', 'Sunflower2024%21Xq9'],
    ['percent-encoded anywhere', '%53unflower2024!Xq9'],
    ['with a JSON escape', 'Sunflower2024\\u0021Xq9'],
    ['HTML-escaped', 'Sunflower2024&#33;Xq9'],
    ['plain', 'Sunflower2024!Xq9'],
  ])('redacts the longer password whole, %s, whichever registration comes first', (_, echo) => {
    for (const combined of [
      SecretRedactor.combining([kes, usd])!,
      SecretRedactor.combining([usd, kes])!,
    ]) {
      expect(combined.text(`denied: ${echo} for shop-usd`)).toBe('denied: [REDACTED] for shop-usd');
    }
    expect(SecretRedactor.combining([kes, usd])!.text('denied: Sunflower2024.')).toBe(
      'denied: [REDACTED].',
    );
  });
});

describe('SecretRedactor.text, a password holding a backslash', () => {
  it('redacts it whole beside a Basic token, which makes the text be decoded', () => {
    const password = 'Kq9\\Tr7Xy-2026';
    const redacts = new SecretRedactor('merchant', password);
    const echoed = `Authorization: ${basicAuthorization('merchant', password)} body={pw: ${password}}`;
    expect(redacts.text(echoed)).toBe('Authorization: Basic [REDACTED] body={pw: [REDACTED]}');
  });
});

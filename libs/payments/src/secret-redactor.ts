const REDACTED = '[REDACTED]';
import { printsAsNameOnly } from './secret-holders';

/**
 * Shortest password whose own forms are redacted: a shorter one would match ordinary words of
 * every answer (`p` in `payment_method`) and destroy the data. The Basic token, which includes the
 * username, is always redacted. `resolvePaymentsOptions` warns about such a password.
 */
export const MIN_REDACTED_PASSWORD_LENGTH = 8;

/** A username and password sent as HTTP Basic credentials. */
export interface BasicCredentials {
  readonly username: string;
  readonly password: string;
}

/** The credentials of a client's options. */
interface ClientCredentials {
  readonly apiUsername: string;
  readonly apiPassword: string;
  readonly proxy?: { readonly auth?: BasicCredentials } | undefined;
}

/**
 * The redactor of a client's credentials: the API's, and an explicit proxy's, whose password a
 * proxy may echo back (a 407's body, a debug header) as the service may echo the API's.
 */
export function credentialsRedactor(options: ClientCredentials): SecretRedactor {
  const proxy = options.proxy?.auth;
  return new SecretRedactor(options.apiUsername, options.apiPassword, proxy ? [proxy] : []);
}

/**
 * Whether {@link credentialsRedactor} of `options` redacts a number wherever it appears (a
 * password of digits only, once trimmed too): an amount equal to it then reads as `[REDACTED]`.
 * Asked without building the redactor.
 */
export function redactsNumbers(options: ClientCredentials): boolean {
  const proxy = options.proxy?.auth;
  const given = [{ username: options.apiUsername, password: options.apiPassword }];
  return withTrimmedPasswords(proxy ? [...given, proxy] : given).some(({ password }) =>
    isNumericSecret(password),
  );
}

/**
 * `credentials`, then each whose password has surrounding whitespace again, trimmed: a secret read
 * from a file or a vault often ends in a newline (or a BOM, a no-break space), and the service, a
 * proxy or a log pipeline that trims it echoes the account's real password.
 */
function withTrimmedPasswords(credentials: readonly BasicCredentials[]): BasicCredentials[] {
  const all = [...credentials];
  for (const { username, password } of credentials) {
    const trimmed = password.trim();
    if (trimmed !== password && trimmed !== '') all.push({ username, password: trimmed });
  }
  return all;
}

/** Whether `password` is redacted as a number too: echoed as a JSON number (`"pin":84726193`). */
function isNumericSecret(password: string): boolean {
  return password.length >= MIN_REDACTED_PASSWORD_LENGTH && /^\d+$/.test(password);
}

/** The `Authorization` header value for HTTP Basic authentication (section 5). */
export function basicAuthorization(apiUsername: string, apiPassword: string): string {
  return `Basic ${Buffer.from(`${apiUsername}:${apiPassword}`, 'utf8').toString('base64')}`;
}

/** `bytes` in base64 (padded or not, base64url, percent-encoded) and in hex, either case. */
function byteForms(bytes: Buffer): string[] {
  const base64 = bytes.toString('base64');
  const hex = bytes.toString('hex');
  return [
    base64,
    base64.replace(/=+$/, ''),
    bytes.toString('base64url'),
    encodeURIComponent(base64),
    hex,
    hex.toUpperCase(),
  ];
}

/**
 * The base64 text that `value` becomes inside any longer base64 text, at each of the three byte
 * alignments it can start at (base64 of a header dump, of a log line): only the characters made
 * of `value`'s bits alone, in base64 and base64url.
 */
function base64Cores(value: string): string[] {
  const bytes = Buffer.from(value, 'utf8');
  const cores: string[] = [];
  for (let offset = 0; offset < 3; offset += 1) {
    const text = Buffer.concat([Buffer.alloc(offset), bytes])
      .toString('base64')
      .replace(/=+$/, '');
    // Character i holds bits [6i, 6i + 6): keep those within value's bits.
    const first = Math.ceil((8 * offset) / 6);
    const end = Math.floor((8 * (offset + bytes.length)) / 6);
    const core = text.slice(first, end);
    cores.push(core, core.replaceAll('+', '-').replaceAll('/', '_'));
  }
  return cores;
}

/**
 * `text` with its backslash escapes decoded, for a look at what it spells: `\uXXXX`, runs of
 * `\xXX` bytes (UTF-8, as Python prints bytes), then any other escaped character as itself (`\/`,
 * and the doubled backslashes of JSON escaped twice).
 */
function decodeEscapes(text: string): string {
  return text
    .replace(/\\u([0-9a-fA-F]{4})/g, (_match, hex: string) =>
      String.fromCharCode(parseInt(hex, 16)),
    )
    .replace(/(?:\\x[0-9a-fA-F]{2})+/g, (run) =>
      Buffer.from(run.replaceAll('\\x', ''), 'hex').toString('utf8'),
    )
    .replace(/\\(.)/g, '$1');
}

/** Named HTML entities of the characters that HTML escaping always writes as one. */
const HTML_NAMED: Readonly<Record<string, string>> = {
  '&': 'amp',
  '<': 'lt',
  '>': 'gt',
  '"': 'quot',
  "'": 'apos',
};

/**
 * A pattern of `value` with any of its characters percent-encoded (its UTF-8 bytes as `%XX`, in
 * either case of hex digit, and a space also as `+`: what every percent-encoder writes, whichever
 * characters it leaves as they are: `encodeURIComponent`, RFC 3986, form encoding, Python, Go,
 * Java) or HTML-escaped (`&#x2F;`, `&#47;`, `&gt;`). With `charset` `latin1`, its Latin-1 bytes
 * (`%DF` for `ß`), as an encoder of text sent as ISO-8859-1 writes them.
 */
function encodedPattern(value: string, charset: 'utf8' | 'latin1' = 'utf8'): string {
  const hexDigit = (digit: string) =>
    /[a-f]/i.test(digit) ? `[${digit.toLowerCase()}${digit.toUpperCase()}]` : digit;
  const byte = (value: number) => {
    const [high, low] = value.toString(16).padStart(2, '0');
    // `%25` for `%`: text percent-encoded twice (a URL put in a query parameter).
    return `%(?:25)?${hexDigit(high)}${hexDigit(low)}`;
  };
  const character = (char: string) => {
    const literal = char.replace(/[\\^$.*+?()[\]{}|/-]/g, '\\$&');
    const encoded = [...Buffer.from(char, charset)].map(byte).join('');
    const code = char.codePointAt(0)!;
    const hex = [...code.toString(16)].map(hexDigit).join('');
    const html = [`&#[xX]0*${hex};`, `&#0*${code};`];
    if (HTML_NAMED[char] !== undefined) html.push(`&${HTML_NAMED[char]};`);
    return `(?:${literal}|${encoded}|${html.join('|')}${char === ' ' ? '|\\+' : ''})`;
  };
  return Array.from(value, character).join('');
}

/**
 * Windows-1252's characters for the bytes 0x80–0x9F, where it differs from Latin-1 (the five
 * bytes it leaves undefined read as Latin-1's). Node's `TextDecoder('windows-1252')` reads them
 * as Latin-1, so the table is here.
 */
const WINDOWS_1252_HIGH =
  '\u20ac\u0081\u201a\u0192\u201e\u2026\u2020\u2021\u02c6\u2030\u0160\u2039\u0152\u008d\u017d\u008f' +
  '\u0090\u2018\u2019\u201c\u201d\u2022\u2013\u2014\u02dc\u2122\u0161\u203a\u0153\u009d\u017e\u0178';

/** `bytes` read as Windows-1252, as Windows and browsers read text of an unknown charset. */
function asWindows1252(bytes: Buffer): string {
  return Array.from(bytes, (byte) =>
    byte >= 0x80 && byte <= 0x9f ? WINDOWS_1252_HIGH[byte - 0x80] : String.fromCharCode(byte),
  ).join('');
}

/**
 * `value` as it reads after a wrong charset on the way: composed or decomposed (NFC, NFD: `ä` as
 * one character or as `a` and a combining mark), its UTF-8 bytes read as Latin-1 (as Node reads
 * header bytes: `Ã¤`) or Windows-1252 (`ÃŸ` for `ß`), and its Latin-1 bytes read as UTF-8 (a
 * body sent as ISO-8859-1: `�`). Only the forms that differ from `value`; none for ASCII text.
 */
function charsetForms(value: string): string[] {
  // ASCII (one byte per character in UTF-8) reads the same in every one of them.
  if (Buffer.byteLength(value, 'utf8') === value.length) return [];
  const forms = new Set<string>();
  for (const text of [value, value.normalize('NFC'), value.normalize('NFD')]) {
    forms.add(text);
    const utf8 = Buffer.from(text, 'utf8');
    forms.add(utf8.toString('latin1'));
    forms.add(asWindows1252(utf8));
    if (fitsLatin1(text)) forms.add(Buffer.from(text, 'latin1').toString('utf8'));
  }
  forms.delete(value);
  return [...forms];
}

/** Only text that Latin-1 can hold: beyond U+00FF its encoder writes other characters. */
const fitsLatin1 = (text: string): boolean => !/[\u0100-\uffff]/.test(text);

/**
 * `value`'s Latin-1 bytes (a password sent as ISO-8859-1, then encoded). None for ASCII text, whose
 * bytes are its UTF-8 ones, or for text Latin-1 cannot hold.
 */
function latin1Bytes(value: string): Buffer | undefined {
  if (Buffer.byteLength(value, 'utf8') === value.length || !fitsLatin1(value)) return undefined;
  return Buffer.from(value, 'latin1');
}

/**
 * Every `\uXXXX` escape of `value`, in lower- and upper-case hex. Per UTF-16 code unit, as JSON
 * writes them: a character outside the BMP is a surrogate pair (`\ud83d\udd11`).
 */
function unicodeEscapes(value: string): string[] {
  const escaped = Array.from(
    { length: value.length },
    (_, i) => `\\u${value.charCodeAt(i).toString(16).padStart(4, '0')}`,
  ).join('');
  return [escaped, escaped.toUpperCase().replace(/\\U/g, '\\u')];
}

/**
 * `value` as UTF-16 text reads when taken for UTF-8 or Latin-1 (a server's error page in UTF-16
 * echoing a header): each character beside a NUL, in either byte order, so the form is the
 * characters joined by NULs; and that as JSON writes it (`\u0000`). None for text that is not
 * ASCII, whose UTF-16 units are not one character each.
 */
function utf16Forms(value: string): string[] {
  if (!/^[\x20-\x7e]+$/.test(value)) return [];
  const characters = Array.from(value);
  return [characters.join('\0'), characters.join('\\u0000')];
}

/** `text` with each of `forms` (longest first) replaced by `[REDACTED]`. */
function withoutForms(text: string, forms: readonly string[]): string {
  let result = text;
  for (const form of forms) {
    if (result.includes(form)) result = result.split(form).join(REDACTED);
  }
  return result;
}

/**
 * Removes the credentials from text leaving the library (log lines, error messages, error
 * bodies, `_raw`), in case a service or proxy echoes them back, in any of the encodings a server
 * or a log pipeline commonly applies: plain, JSON-escaped, percent-encoded (as the common encoders
 * write it), HTML-escaped, base64 (padded or not, base64url, alone or inside longer base64 text),
 * hex, and `\u` escapes.
 */
export class SecretRedactor {
  private readonly secrets: readonly string[];
  /** The {@link secrets} that hold a backslash, longest first. */
  private readonly backslashedSecrets: readonly string[];
  /**
   * The forms that can stand in JSON text without a backslash, none containing another: if the
   * text holds none of them and no backslash, no string parsed from it can hold any secret.
   */
  private readonly unescapedForms: readonly string[];
  /**
   * The Basic token, and the password unless short, with any of their characters percent-encoded
   * or HTML-escaped, in any case.
   */
  private readonly escapedPattern: RegExp;
  /** The Basic tokens, and the passwords unless short, lower-cased: looked for in any case. */
  private readonly caselessForms: readonly string[];
  /** {@link caselessForms} as a pattern that ignores case. */
  private readonly caselessPattern: RegExp;
  /** What a text must hold to contain {@link escapedPattern} in any form but the plain one. */
  private readonly escapeMarks: readonly string[];
  /** The passwords of digits only, as the numbers JSON would read them as. */
  private readonly numericSecrets: ReadonlySet<number>;
  /** The credentials it was made of, for {@link SecretRedactor.combining}. */
  private readonly credentials: readonly BasicCredentials[];

  /**
   * One redactor of the credentials of all `redactors`: their forms are replaced longest first
   * together, where one after another would let one password, inside another, cut the longer one
   * before its own redactor saw it. Undefined when there is none.
   */
  static combining(redactors: readonly SecretRedactor[]): SecretRedactor | undefined {
    const [first, ...others] = redactors.flatMap((redactor) => redactor.credentials);
    return first && new SecretRedactor(first.username, first.password, others);
  }

  constructor(
    apiUsername: string,
    apiPassword: string,
    /** More credentials sent with the calls: an explicit proxy's (`Proxy-Authorization`). */
    others: readonly BasicCredentials[] = [],
  ) {
    const forms: string[] = [];
    const numeric = new Set<number>();
    /** Each form's pattern, by the length of the form, so that the longest is tried first. */
    const encoded: { length: number; pattern: string }[] = [];
    const encode = (form: string, charset?: 'latin1') =>
      encoded.push({ length: form.length, pattern: encodedPattern(form, charset) });
    const caseless: string[] = [];
    let spaced = false;
    this.credentials = [{ username: apiUsername, password: apiPassword }, ...others];
    for (const { username, password } of withTrimmedPasswords(this.credentials)) {
      const token = basicAuthorization(username, password).slice('Basic '.length);
      const tokenHex = Buffer.from(token, 'utf8').toString('hex');
      forms.push(token, token.replace(/=+$/, ''), encodeURIComponent(token));
      forms.push(Buffer.from(token, 'base64').toString('base64url'), ...base64Cores(token));
      // A header dump in hex holds the token's hex whole: it decodes to the username and password.
      forms.push(tokenHex, tokenHex.toUpperCase(), ...utf16Forms(token.replace(/=+$/, '')));
      encode(token);
      // Without its padding, which a token cut or re-encoded in another case often loses.
      caseless.push(token.replace(/=+$/, ''));
      if (password.length < MIN_REDACTED_PASSWORD_LENGTH) continue;
      caseless.push(password);
      encode(password);
      spaced ||= password.includes(' ');
      const utf8 = Buffer.from(password, 'utf8');
      // In errors and log lines, hex in any case (`4A6f...`).
      caseless.push(utf8.toString('hex'));
      const misread = charsetForms(password);
      for (const form of misread) encode(form);
      const latin1 = latin1Bytes(password);
      if (latin1 !== undefined) {
        // Its percent-encoding as a pattern, its hex in any case too.
        encode(password, 'latin1');
        caseless.push(latin1.toString('hex'));
      }
      forms.push(
        ...misread,
        ...(latin1 === undefined ? [] : byteForms(latin1)),
        password,
        JSON.stringify(password).slice(1, -1),
        encodeURIComponent(password),
        ...byteForms(utf8),
        ...base64Cores(password),
        ...unicodeEscapes(password),
        ...utf16Forms(password),
      );
      // Beyond the digits a double holds too (`"pin":84726193051`).
      if (isNumericSecret(password)) numeric.add(Number(password));
    }
    this.numericSecrets = numeric;
    this.escapeMarks = spaced ? ['%', '&', '+'] : ['%', '&'];
    this.caselessForms = caseless.map((form) => form.toLowerCase());
    // Longest first: a pattern takes the first alternative that matches, and a password that
    // starts another account's would otherwise leave the longer one's tail.
    this.caselessPattern = new RegExp(
      [...caseless]
        .sort((a, b) => b.length - a.length)
        .map((form) => form.replace(/[\\^$.*+?()[\]{}|/-]/g, '\\$&'))
        .join('|'),
      'gi',
    );
    // In any case: a server that upper-cases an answer upper-cases its escapes with it
    // (`SUP3R%24ECRET`), and `%2f`, `&#X2F;` are the same escapes.
    this.escapedPattern = new RegExp(
      encoded
        .sort((a, b) => b.length - a.length)
        .map((form) => form.pattern)
        .join('|'),
      'gi',
    );
    // With escaped slashes, as JSON encoders such as PHP's write them, inside a body that is not
    // JSON as a whole (so parsing cannot undo the escape).
    forms.push(...forms.filter((s) => s.includes('/')).map((s) => s.replaceAll('/', '\\/')));
    // Longest first, so a secret containing another is replaced whole.
    this.secrets = [...new Set(forms)]
      .filter((s) => s.length > 0)
      .sort((a, b) => b.length - a.length);
    this.backslashedSecrets = this.secrets.filter((secret) => secret.includes('\\'));
    const unescaped = this.secrets.filter((secret) => !secret.includes('\\'));
    // A form containing a shorter one is found whenever it is: checking the shorter one suffices.
    this.unescapedForms = unescaped.filter(
      (secret) => !unescaped.some((other) => other !== secret && secret.includes(other)),
    );
  }

  /**
   * `text` with every secret replaced by `[REDACTED]`. The escaped and disguised forms go before
   * the plain ones: a plain password cut out of another's escaped form (`Sunflower2024` of
   * `Sunflower2024%21Xq9`, two accounts) would leave the longer one's tail and hide the rest.
   */
  text(text: string): string {
    let result = text;
    if (this.mayBeEscaped(result)) {
      result = result.replace(this.escapedPattern, REDACTED);
    }
    // The forms with a backslash (a password holding one, its `\u` escapes) before decoding, which
    // would take their backslashes and leave them to be found by nothing.
    if (result.includes('\\')) {
      result = withoutForms(result, this.backslashedSecrets);
    }
    return withoutForms(this.withoutDisguised(result), this.secrets);
  }

  /**
   * `text` when neither its escapes decoded (`\u00e4` or `\u0026` for some characters only, as
   * Python's and Go's JSON write them; `\xc3\xa4` bytes; `\/`; JSON escaped twice) nor a change
   * of case show a credential; else the decoded text with each one redacted, in any case.
   */
  private withoutDisguised(text: string): string {
    const decoded = text.includes('\\') ? decodeEscapes(text) : text;
    const lower = decoded.toLowerCase();
    if (!this.caselessForms.some((form) => lower.includes(form))) return text;
    return withoutForms(decoded, this.secrets).replace(this.caselessPattern, REDACTED);
  }

  /** Whether `text` may hold the password percent-encoded (then the pattern is run). */
  private mayBeEscaped(text: string): boolean {
    return this.escapeMarks.some((mark) => text.includes(mark));
  }

  /**
   * A JSON value with every string, and every number that spells a password, redacted. Unchanged parts keep their identity, so a body
   * without secrets comes back as the very same object. Iterative, so no depth of nesting can
   * overflow the stack.
   */
  value(value: unknown): unknown {
    if (typeof value === 'string') return this.text(value);
    if (typeof value === 'number') return this.number(value);
    if (typeof value !== 'object' || value === null) return value;
    // Post-order walk with an explicit stack: children are redacted before their parent.
    type Frame = { source: object; entries: [string, unknown][]; index: number; changed: boolean };
    const results = new Map<object, unknown>();
    const stack: Frame[] = [
      { source: value, entries: Object.entries(value), index: 0, changed: false },
    ];
    while (stack.length > 0) {
      const frame = stack[stack.length - 1];
      if (frame.index < frame.entries.length) {
        const child = frame.entries[frame.index][1];
        if (typeof child === 'object' && child !== null && !results.has(child)) {
          stack.push({ source: child, entries: Object.entries(child), index: 0, changed: false });
          continue;
        }
        const [key, item] = frame.entries[frame.index];
        const newKey = this.text(key);
        const newItem =
          typeof item === 'string'
            ? this.text(item)
            : typeof item === 'number'
              ? this.number(item)
              : typeof item === 'object' && item !== null
                ? results.get(item)
                : item;
        frame.changed ||= newKey !== key || newItem !== item;
        frame.entries[frame.index] = [newKey, newItem];
        frame.index += 1;
        continue;
      }
      stack.pop();
      let result: unknown = frame.source;
      if (frame.changed) {
        result = Array.isArray(frame.source)
          ? frame.entries.map(([, item]) => item)
          : // fromEntries defines own properties, so a `__proto__` key stays data.
            Object.fromEntries(frame.entries);
      }
      results.set(frame.source, result);
    }
    return results.get(value);
  }

  /**
   * `value`, or `[REDACTED]` when its digits hold a password (a password of digits echoed as a
   * JSON number, alone or inside a longer one).
   */
  private number(value: number): number | string {
    const text = String(value);
    return this.numericSecrets.has(value) || this.text(text) !== text ? REDACTED : value;
  }

  /**
   * Parses JSON text and redacts the parsed value, so escaped forms of a secret (`\/`,
   * `\u0070`...) are caught too. `undefined` when the text is not JSON (or nests too deep to parse).
   */
  json(text: string): unknown {
    let parsed: unknown;
    try {
      parsed = JSON.parse(text) as unknown;
    } catch {
      return undefined;
    }
    // Escaped forms need a backslash: without one, without an unescaped form and without one in
    // another case (`STR0NGPASSW0RD`), nothing to do. A password of digits may also come back as
    // a number in exponent form (`8.4726193051e10`), which spells none of its forms.
    if (
      !text.includes('\\') &&
      !this.unescapedForms.some((form) => text.includes(form)) &&
      !(this.mayBeEscaped(text) && this.holdsEscaped(text)) &&
      !this.holdsCaseless(text) &&
      !(this.numericSecrets.size > 0 && /\d[eE]/.test(text))
    ) {
      return parsed;
    }
    return this.value(parsed);
  }

  private holdsCaseless(text: string): boolean {
    const lower = text.toLowerCase();
    return this.caselessForms.some((form) => lower.includes(form));
  }

  private holdsEscaped(text: string): boolean {
    const pattern = this.escapedPattern;
    pattern.lastIndex = 0;
    const found = pattern.test(text);
    pattern.lastIndex = 0;
    return found;
  }

  /** Text for a log line: JSON re-serialised after redaction, anything else redacted as text. */
  display(text: string): string {
    const parsed = this.json(text);
    if (parsed === undefined) return this.text(text);
    try {
      return JSON.stringify(parsed);
    } catch {
      // Too deep to serialise: the text itself, redacted.
      return this.text(text);
    }
  }
}

printsAsNameOnly(SecretRedactor.prototype, 'SecretRedactor');

import { nationalNumber } from '../phone-numbers';

/** Fields of a request that name a person or their account (docs/journal.md: what is not stored). */
const PERSONAL_REQUEST_FIELDS = ['phoneNumber', 'accountNumber', 'accountHolderName'] as const;

/** What a personal text becomes in a kept field. */
const MASK = '[personal data]';

/** Texts shorter than this are not looked for: they would mask ordinary words. */
const MIN_MASKED_LENGTH = 3;

/** Words of a name looked for, besides the whole name. */
const MAX_MASKED_WORDS = 64;

/**
 * What may stand between the digits of a written phone number: `0712 345-678`, `(0712)345.678`,
 * `0712_345,678`, `0712%20345678` (a URL's space): up to four marks or percent escapes.
 */
const SEPARATOR = '(?:[^\\p{L}\\p{M}\\p{N}]|%[0-9A-Fa-f]{2}){0,4}';

/** Before a word of a name: no letter, mark or digit, unless the digits end a percent escape. */
const WORD_START = '(?:(?<=%[0-9A-Fa-f]{2})|(?<![\\p{L}\\p{M}\\p{N}]))';

/** The apostrophes of a name (`O'Brien`, `O’Brien`, `Ng'ang'a`): any one stands for the others. */
const APOSTROPHES = "'\u2018\u2019\u02BC\u0060";
const APOSTROPHE = new RegExp(`[${APOSTROPHES}]`, 'gu');

/**
 * An email address in free text (the service's, about someone the request did not name), from the
 * start of a word: a match is tried once per word, so a long text without spaces costs its length,
 * not its square.
 */
const EMAIL_ADDRESS =
  /(?<![^\s@<>()[\]{},;:"'\u0060])[^\s@<>()[\]{},;:"'\u0060]+@[^\s@<>()[\]{},;:"'\u0060]+\.\p{L}{2,}/u
    .source;

/**
 * Nine digits or more, with up to three marks between two of them as phone and account numbers
 * are written (`+254 712 345-678`, `(0712) 345.678`, `0712 – 345 – 678`, `0712/345/678`, a
 * no-break space): a phone or account number, whoever's it is.
 */
const LONG_NUMBER = /\+?\p{Nd}(?:[^\p{L}\p{M}\p{N}]{0,3}\p{Nd}){8,}/u.source;

/**
 * Masks, in place, the request's personal data in `answer[key]` for each of `keys` that is text:
 * its phone number (and an account number that is one) however its national digits are written
 * (`0712345678`, `+254 (0)712 345 678`, `254-712-345-678`), the account number in any case (also
 * inside longer text), and the holder's name (or each of several names) and each word of it as
 * whole words in any case and Unicode form. The journal keeps an accepting answer's free-text
 * fields to answer a repeated call: a service that echoes the payee ("Sent to 0712345678") must
 * not put a phone number or name in it in clear. One pattern, one pass per field: a mask is never
 * searched again (a name of the mask's words would grow the text without end).
 * @internal
 */
export function maskPersonalData(
  answer: Record<string, unknown>,
  request: object,
  keys: readonly string[],
  /** Also any email address and any number of nine digits or more, whoever's they are. */
  contactDetails = false,
): void {
  const texts = new Map<string, string>();
  let longest = 0;
  for (const key of keys) {
    const value = answer[key];
    if (typeof value !== 'string' || value === '') continue;
    // NFKC: full-width digits (`０７１２…`) and other compatibility forms read as what they stand for.
    const text = value.normalize('NFKC');
    texts.set(key, text);
    longest = Math.max(longest, text.length);
  }
  if (texts.size === 0) return;
  // A text more than twice as long as every field cannot be in one (an `i̇` of two characters
  // matches one `İ`): left out, so that no record's text, however long, makes the pattern too big.
  const fits = (text: string): boolean => text.length <= 2 * longest;
  const phones = new Set<string>();
  // By their lower case, so that `ADA ada Ada` takes one of the 64 places of a name's words.
  const literals = new Map<string, string>();
  const words = new Map<string, string>();
  for (const field of PERSONAL_REQUEST_FIELDS) {
    const value: unknown = (request as Record<string, unknown>)[field];
    const given = Array.isArray(value) ? (value as unknown[]) : [value];
    for (const each of given) {
      if (typeof each !== 'string') continue;
      // Not lower-cased: the pattern ignores case, and `İ` lower-cased is two characters that an
      // `İLKER` in the answer would not match.
      const text = each.trim().normalize('NFKC').replace(APOSTROPHE, "'");
      if (field === 'accountHolderName') {
        if (text.length >= MIN_MASKED_LENGTH && fits(text)) literals.set(text.toLowerCase(), text);
        for (const word of text.split(/[^\p{L}\p{M}\p{N}']+/u)) {
          if (word.length >= MIN_MASKED_LENGTH && fits(word) && words.size < MAX_MASKED_WORDS) {
            words.set(word.toLowerCase(), word);
          }
        }
        continue;
      }
      const national = nationalNumber(text);
      if (national !== undefined) phones.add(national);
      else if (text.length >= MIN_MASKED_LENGTH && fits(text)) {
        literals.set(text.toLowerCase(), text);
      }
    }
  }
  if (!contactDetails && phones.size === 0 && literals.size === 0 && words.size === 0) return;
  const onlyDigits = !contactDetails && literals.size === 0 && words.size === 0;
  let pattern: RegExp | undefined;
  for (const [key, text] of texts) {
    // The common case, an M-Pesa call's "Processed successfully", builds no pattern.
    if (onlyDigits && !/\d/u.test(text)) continue;
    pattern ??= personalPattern(
      phones,
      [...literals.values()],
      [...words.values()],
      contactDetails,
    );
    const masked = text.replace(pattern, MASK);
    // The service's own words stay as it wrote them unless something in them was masked.
    if (masked !== text) answer[key] = masked;
  }
}

/** One pattern of every personal text, so that one pass masks them all. */
function personalPattern(
  phones: ReadonlySet<string>,
  literals: readonly string[],
  words: readonly string[],
  contactDetails: boolean,
): RegExp {
  // With contact details, a name that runs up to an `@` (`Mr Ali@mail.example`) is left to the
  // email address that starts within it, which would otherwise keep its domain in clear.
  const notBeforeAt = contactDetails ? '(?!@)' : '';
  const alternatives = [
    // First: a name's word at the start of an email address would leave its domain in clear.
    ...(contactDetails ? [EMAIL_ADDRESS] : []),
    // An optional trunk `0` or `(0)` before the national digits, any separators between them.
    ...[...phones].map((digits) => `(?:\\(?0\\)?${SEPARATOR})?${[...digits].join(SEPARATOR)}`),
    // Longest first: a whole name is masked before one of its words would break it up.
    ...[...literals]
      .sort((a, b) => b.length - a.length)
      .map((literal) => `${escapeRegExp(literal)}${notBeforeAt}`),
    ...[...words]
      .sort((a, b) => b.length - a.length)
      // Whole words only: the name "Success" must not mask "successfully".
      .map((word) => `${WORD_START}${escapeRegExp(word)}(?![\\p{L}\\p{M}\\p{N}])${notBeforeAt}`),
    ...(contactDetails ? [LONG_NUMBER] : []),
  ];
  return new RegExp(alternatives.join('|'), 'giu');
}

/**
 * `text` as a pattern of itself: any apostrophe in it matches any other, and any `i` any of the
 * four Turkish ones (`İLKER ÇELİK` is `İlker Çelik`, which case folding alone does not see).
 */
function escapeRegExp(text: string): string {
  return text
    .replace(/[.*+?^${}()|[\]\\]/gu, '\\$&')
    .replace(/'/gu, `[${APOSTROPHES}]`)
    .replace(/[iIİı]\u0307?/gu, '(?:[iIİı]\u0307?)');
}

/**
 * The most of the service's free text that is read: a text from a hostile or broken service may
 * be megabytes long, and what is kept of it is far shorter.
 */
const MAX_READ_SERVICE_TEXT = 1_000;

/**
 * What the service's free text may not hold where people read it: control characters (a
 * terminal's escape codes, NUL, tabs and line breaks), format characters (bidi marks and
 * overrides, zero-width ones) and line or paragraph separators, which a CSV cell does not quote.
 */
const UNREADABLE_IN_TEXT = /[\p{Cc}\p{Cf}\p{Zl}\p{Zp}]/gu;

/**
 * The service's free `text` about a transaction (a failure's reason, a refusal's message) as kept
 * where people read it (a journal entry, an item's reason, a report): unreadable characters made
 * spaces; the `personal` data (`phoneNumber`, `accountNumber`, `accountHolderName`: a name or a
 * list of names) masked as {@link maskPersonalData} masks it, and any other email address or
 * number of nine digits or more; at most `max` characters. Only the first
 * {@link MAX_READ_SERVICE_TEXT} characters are read, less the word they cut and the marks and
 * digits before it, so that no part of a number is kept. Undefined for no text, or for a text
 * that could not be masked: nothing is kept that might hold what it should not.
 * @internal
 */
export function keptServiceText(text: unknown, personal: object, max: number): string | undefined {
  if (typeof text !== 'string') return undefined;
  const cut = text.length > MAX_READ_SERVICE_TEXT;
  const read = cut
    ? text
        .slice(0, MAX_READ_SERVICE_TEXT)
        .replace(/\S*$/u, '')
        .replace(/[^\p{L}]+$/u, '')
    : text;
  const readable = read.replace(UNREADABLE_IN_TEXT, ' ').trim();
  if (readable === '') return undefined;
  const kept: Record<string, unknown> = { text: readable };
  try {
    maskPersonalData(kept, personal, ['text'], true);
    const masked = keptText(String(kept.text), max);
    return cut && !masked.endsWith('…') ? `${masked}…` : masked;
  } catch {
    return undefined;
  }
}

/**
 * The service's free `text` as kept where people read it (a journal entry, an item's reason): at
 * most `max` characters, whole ones (never half a surrogate pair), `…` marking a cut.
 * @internal
 */
export function keptText(text: string, max: number): string {
  const characters = Array.from(text);
  return characters.length > max ? `${characters.slice(0, max).join('')}…` : text;
}

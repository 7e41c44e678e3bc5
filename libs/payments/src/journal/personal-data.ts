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
const APOSTROPHES = "'\u2018\u2019\u02BC`";
const APOSTROPHE = new RegExp(`[${APOSTROPHES}]`, 'gu');

/**
 * Masks, in place, the request's personal data in `answer[key]` for each of `keys` that is text:
 * its phone number (and an account number that is one) however its national digits are written
 * (`0712345678`, `+254 (0)712 345 678`, `254-712-345-678`), the account number in any case (also
 * inside longer text), and the holder's name and each word of it as whole words in any case and
 * Unicode form. The journal keeps an accepting answer's free-text fields to answer a repeated
 * call: a service that echoes the payee ("Sent to 0712345678") must not put a phone number or
 * name in it in clear. One pattern, one pass per field: a mask is never searched again (a name of
 * the mask's words would grow the text without end).
 * @internal
 */
export function maskPersonalData(
  answer: Record<string, unknown>,
  request: object,
  keys: readonly string[],
): void {
  const phones = new Set<string>();
  // By their lower case, so that `ADA ada Ada` takes one of the 64 places of a name's words.
  const literals = new Map<string, string>();
  const words = new Map<string, string>();
  for (const field of PERSONAL_REQUEST_FIELDS) {
    const value: unknown = (request as Record<string, unknown>)[field];
    if (typeof value !== 'string') continue;
    // Not lower-cased: the pattern ignores case, and `İ` lower-cased is two characters that an
    // `İLKER` in the answer would not match.
    const text = value.trim().normalize('NFKC').replace(APOSTROPHE, "'");
    if (field === 'accountHolderName') {
      if (text.length >= MIN_MASKED_LENGTH) literals.set(text.toLowerCase(), text);
      for (const word of text.split(/[^\p{L}\p{M}\p{N}']+/u)) {
        if (word.length >= MIN_MASKED_LENGTH && words.size < MAX_MASKED_WORDS) {
          words.set(word.toLowerCase(), word);
        }
      }
      continue;
    }
    const national = nationalNumber(text);
    if (national !== undefined) phones.add(national);
    else if (text.length >= MIN_MASKED_LENGTH) literals.set(text.toLowerCase(), text);
  }
  if (phones.size === 0 && literals.size === 0 && words.size === 0) return;
  const onlyDigits = literals.size === 0 && words.size === 0;
  let pattern: RegExp | undefined;
  for (const key of keys) {
    const value = answer[key];
    if (typeof value !== 'string' || value === '') continue;
    // NFKC: full-width digits (`０７１２…`) and other compatibility forms read as what they stand for.
    const text = value.normalize('NFKC');
    // The common case, an M-Pesa call's "Processed successfully", builds no pattern.
    if (onlyDigits && !/\d/u.test(text)) continue;
    pattern ??= personalPattern(phones, [...literals.values()], [...words.values()]);
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
): RegExp {
  const alternatives = [
    // An optional trunk `0` or `(0)` before the national digits, any separators between them.
    ...[...phones].map((digits) => `(?:\\(?0\\)?${SEPARATOR})?${[...digits].join(SEPARATOR)}`),
    // Longest first: a whole name is masked before one of its words would break it up.
    ...[...literals].sort((a, b) => b.length - a.length).map(escapeRegExp),
    ...[...words]
      .sort((a, b) => b.length - a.length)
      // Whole words only: the name "Success" must not mask "successfully".
      .map((word) => `${WORD_START}${escapeRegExp(word)}(?![\\p{L}\\p{M}\\p{N}])`),
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

/** An email address in free text. */
const EMAIL_ADDRESS = /[^\s@<>()[\]{},;:"'`]+@[^\s@<>()[\]{},;:"'`]+\.\p{L}{2,}/gu;

/**
 * Nine digits or more, with the marks phone and account numbers are written with (`+254 712
 * 345-678`, `(0712) 345.678`): a phone or account number, whoever's it is.
 */
const LONG_NUMBER = /\+?\p{Nd}(?:[ \-.()]*\p{Nd}){8,}/gu;

/**
 * `text` with every email address and every number of nine digits or more masked: for the
 * service's own free text about a transaction, which may name someone the request did not (a
 * record without the payee's phone number, or with the payer's email address).
 * @internal
 */
export function maskContactDetails(text: string): string {
  return text.replace(EMAIL_ADDRESS, MASK).replace(LONG_NUMBER, MASK);
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

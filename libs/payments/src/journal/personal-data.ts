import { nationalNumber } from '../phone-numbers';

/** Fields of a request that name a person or their account (docs/journal.md: what is not stored). */
const PERSONAL_REQUEST_FIELDS = ['phoneNumber', 'accountNumber', 'accountHolderName'] as const;

/** What a personal text becomes in a kept field. */
const MASK = '[personal data]';

/** Texts shorter than this are not looked for: they would mask ordinary words. */
const MIN_MASKED_LENGTH = 3;

/** Words of a name looked for: a name of 255 characters has at most this many of 3 or more. */
const MAX_MASKED_WORDS = 64;

/** A phone number as a text may write it: `+254 712 345 678`, `(0712) 345-678`, `254712345678`. */
const PHONE_LIKE = /[+(]?\d[\d\s().-]{5,}\d/gu;

/**
 * Masks, in place, the request's personal data in `answer[key]` for each of `keys` that is text:
 * its phone number (and an account number that is one) in any writing of the same national
 * number, the account number (also inside longer digits), the holder's name and each word of it
 * as whole words in any case. The journal keeps an accepting answer's free-text fields to answer
 * a repeated call: a service that echoes the payee ("Sent to 0712345678") must not put a phone
 * number or name in it in clear. One pass per field, so a mask is never searched again (a name
 * of the words of the mask would grow it without end), and at most one pattern per call.
 * @internal
 */
export function maskPersonalData(
  answer: Record<string, unknown>,
  request: object,
  keys: readonly string[],
): void {
  const nationals: string[] = [];
  const digits = new Set<string>();
  const words = new Set<string>();
  for (const field of PERSONAL_REQUEST_FIELDS) {
    const value: unknown = (request as Record<string, unknown>)[field];
    if (typeof value !== 'string') continue;
    const text = value.trim();
    if (field === 'accountHolderName') {
      words.add(text.toLowerCase());
      for (const word of text.toLowerCase().split(/[\s,.-]+/u)) words.add(word);
      continue;
    }
    const national = nationalNumber(text);
    if (national !== undefined) nationals.push(national);
    digits.add(national ?? text);
  }
  // Longest first: a longer number or a whole name is masked before a part of it.
  const numbers = [...digits]
    .filter((text) => text.length >= MIN_MASKED_LENGTH)
    .sort((a, b) => b.length - a.length);
  const names = [...words]
    .filter((word) => word.length >= MIN_MASKED_LENGTH)
    .slice(0, MAX_MASKED_WORDS)
    .sort((a, b) => b.length - a.length)
    // Whole words only: the name "Success" must not mask "successfully".
    .map((word) => `(?<![\\p{L}\\p{N}])${escapeRegExp(word)}(?![\\p{L}\\p{N}])`);
  if (numbers.length === 0 && names.length === 0) return;
  // Built only for an answer with text and a request with a name: an M-Pesa call builds none.
  let namePattern: RegExp | undefined;
  for (const key of keys) {
    const value = answer[key];
    if (typeof value !== 'string' || value === '') continue;
    if (names.length > 0) namePattern ??= new RegExp(names.join('|'), 'giu');
    answer[key] = masked(value, nationals, numbers, namePattern);
  }
}

/**
 * `text` with phone-like runs of `nationals` masked, then `numbers` and matches of `namePattern`,
 * each in one pass over the parts between masks: a mask is never searched again.
 */
function masked(
  text: string,
  nationals: readonly string[],
  numbers: readonly string[],
  namePattern: RegExp | undefined,
): string {
  const hasDigits = /\d/u.test(text);
  if (!hasDigits && namePattern === undefined) return text;
  let parts: (string | undefined)[] =
    hasDigits && nationals.length > 0
      ? text.split(PHONE_LIKE_CAPTURED).map((part, index) =>
          // Odd parts are the phone-like runs `split` captured.
          index % 2 === 1 && nationals.includes(nationalNumber(part) ?? '') ? undefined : part,
        )
      : [text];
  if (hasDigits) {
    for (const number of numbers) {
      parts = parts.flatMap((part) =>
        part === undefined || !part.includes(number)
          ? [part]
          : part
              .split(number)
              .flatMap((piece, index) => (index === 0 ? [piece] : [undefined, piece])),
      );
    }
  }
  // A masked run stays masked: names are looked for only in the parts around it.
  return parts
    .map((part) =>
      part === undefined
        ? MASK
        : namePattern === undefined
          ? part
          : part.replace(namePattern, MASK),
    )
    .join('');
}

const PHONE_LIKE_CAPTURED = new RegExp(`(${PHONE_LIKE.source})`, 'u');

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/gu, '\\$&');
}

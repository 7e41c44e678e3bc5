import { nationalNumber } from '../phone-numbers';

/** Fields of a request that name a person or their account (docs/journal.md: what is not stored). */
const PERSONAL_REQUEST_FIELDS = ['phoneNumber', 'accountNumber', 'accountHolderName'] as const;

/** What a personal text becomes in a kept message. */
const MASK = '[personal data]';

/** Texts shorter than this are not looked for: they would mask ordinary words. */
const MIN_MASKED_LENGTH = 3;

/** A phone number as a message may write it: `+254 712 345 678`, `(0712) 345-678`, `254712345678`. */
const PHONE_LIKE = /[+(]?\d[\d\s().-]{5,}\d/gu;

const DIGITS_ONLY = /^\d+$/u;

/**
 * The string fields of `answer` with the request's personal data masked, in any case and form:
 * its phone number (and an account number that is one) in any writing of the same national
 * number, the account number, the holder's name and each word of it. The journal keeps an
 * accepting answer's fields to answer a repeated call: a service that echoes the payee ("Sent to
 * 0712345678", `?msisdn=254712345678`) must not put a phone number or name in it in clear.
 * @internal
 */
export function maskPersonalData(
  answer: Record<string, unknown>,
  request: object,
  /** A field kept whole: the service's transaction reference, which a replay must give exactly. */
  exceptKey: string,
): void {
  const nationals: string[] = [];
  const texts: string[] = [];
  for (const field of PERSONAL_REQUEST_FIELDS) {
    const value: unknown = (request as Record<string, unknown>)[field];
    if (typeof value !== 'string') continue;
    const text = value.trim();
    const national = field === 'accountHolderName' ? undefined : nationalNumber(text);
    if (national !== undefined) nationals.push(national);
    if (field === 'accountHolderName') texts.push(...text.split(/\s+/u));
    texts.push(national ?? text);
  }
  // Longest first: a whole name is masked before its words would break it up.
  const masked = texts.filter((text) => text.length >= MIN_MASKED_LENGTH);
  if (masked.length === 0) return;
  masked.sort((a, b) => b.length - a.length);
  for (const [key, value] of Object.entries(answer)) {
    if (key === exceptKey || typeof value !== 'string' || value === '') continue;
    answer[key] = masking(value, nationals, masked);
  }
}

/** `text` with the national numbers in any writing, and each of `texts` in any case, masked. */
function masking(text: string, nationals: readonly string[], texts: readonly string[]): string {
  const hasDigits = /\d/u.test(text);
  let result = text;
  if (hasDigits && nationals.length > 0) {
    result = result.replace(PHONE_LIKE, (found) =>
      nationals.includes(nationalNumber(found) ?? '') ? MASK : found,
    );
  }
  for (const personal of texts) {
    if (DIGITS_ONLY.test(personal)) {
      // Digits have no case: the common path (an M-Pesa payout) builds no pattern.
      if (hasDigits && result.includes(personal)) result = result.split(personal).join(MASK);
      continue;
    }
    result = result.replace(new RegExp(escapeRegExp(personal), 'giu'), MASK);
  }
  return result;
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/gu, '\\$&');
}

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
 * `message` with the request's personal data masked, in any case and form: its phone number (and
 * an account number that is one) in any writing of the same national number, the account number,
 * the holder's name and each word of it. The journal keeps an accepting answer's `message` to
 * answer a repeated call: a service that echoes the payee ("Sent to 0712345678") must not put a
 * phone number or name in the journal in clear.
 * @internal
 */
export function withoutPersonalData(message: string, request: object): string {
  const nationals: string[] = [];
  const texts: string[] = [];
  for (const field of PERSONAL_REQUEST_FIELDS) {
    const value: unknown = (request as Record<string, unknown>)[field];
    if (typeof value !== 'string') continue;
    const text = value.trim();
    const national = field === 'accountHolderName' ? undefined : nationalNumber(text);
    if (national !== undefined) nationals.push(national);
    texts.push(national ?? text);
    if (field === 'accountHolderName') texts.push(...text.split(/\s+/u));
  }
  const hasDigits = /\d/u.test(message);
  let masked = message;
  if (hasDigits && nationals.length > 0) {
    masked = masked.replace(PHONE_LIKE, (found) =>
      nationals.includes(nationalNumber(found) ?? '') ? MASK : found,
    );
  }
  // Longest first: a whole name is masked before its words would break it up.
  for (const text of texts.sort((a, b) => b.length - a.length)) {
    if (text.length < MIN_MASKED_LENGTH) continue;
    if (DIGITS_ONLY.test(text)) {
      // Digits have no case: the common path (an M-Pesa payout) builds no pattern.
      if (hasDigits && masked.includes(text)) masked = masked.split(text).join(MASK);
      continue;
    }
    masked = masked.replace(new RegExp(escapeRegExp(text), 'giu'), MASK);
  }
  return masked;
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/gu, '\\$&');
}

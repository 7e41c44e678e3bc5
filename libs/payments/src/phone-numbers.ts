/**
 * Calling codes of the African numbering zone (ITU-T E.164 zone 2) that have two digits; every
 * other code of the zone has three (`254` Kenya, `234` Nigeria, `256` Uganda...).
 */
const TWO_DIGIT_CALLING_CODES = ['20', '27'];

/** What a phone number may be written with besides its digits. */
const PUNCTUATION = /[\s+().\-/_]/g;

/**
 * The national significant number of an African phone number however it is written, or
 * `undefined` when it is not a plain number (a masked `254712***678`, a name): digits only, without
 * the country calling code (`+254…`, `254…`) or the trunk `0` (`07…`). `0712345678`,
 * `+254 712 345 678` and `254712345678` give `712345678`; `+2348031234567` and `08031234567` give
 * `8031234567`, and so do `002348031234567`, `+234 (0) 803 123 4567` and `0803/123/4567`. A number
 * of another zone keeps its calling code.
 */
export function nationalNumber(phone: string): string | undefined {
  // NFKC: full-width digits (`０７１２…`) are the digits they look like.
  let digits = phone.normalize('NFKC').replace(PUNCTUATION, '');
  if (!/^\d{7,17}$/.test(digits)) return undefined;
  // `00` is the international prefix of most African networks: `00254…` is `+254…`.
  const dialledOut = digits.startsWith('00');
  if (dialledOut) digits = digits.slice(2);
  if (digits.length > 15) return undefined;
  const international =
    dialledOut ||
    phone.trimStart().startsWith('+') ||
    (digits.length >= 11 && !digits.startsWith('0'));
  if (international && digits.startsWith('2')) {
    const code = TWO_DIGIT_CALLING_CODES.some((two) => digits.startsWith(two)) ? 2 : 3;
    // A trunk `0` kept after the code (`+234 (0) 803…`): no national number of the zone starts
    // with 0.
    const national = digits.slice(code);
    return national.startsWith('0') ? national.slice(1) : national;
  }
  if (!international && digits.startsWith('0')) return digits.slice(1);
  return digits;
}

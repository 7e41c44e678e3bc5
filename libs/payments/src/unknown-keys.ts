import type { PaymentsFieldError } from './errors';

/** Longest part of an unknown key shown in an error: a key is caller input of any length. */
const MAX_SHOWN_KEY_LENGTH = 64;

/**
 * The `whitelist` problem of one unknown key, worded by `message` for the key as shown (cut to
 * 64 characters).
 * @internal
 */
export function unknownKeyProblem(
  key: string,
  message: (shown: string) => string,
): PaymentsFieldError {
  const shown = key.slice(0, MAX_SHOWN_KEY_LENGTH);
  return { field: shown, rule: 'whitelist', message: message(shown) };
}

/**
 * The `whitelist` problem of every own key of `value` that `known` lacks, in key order. Options,
 * call options and resolutions are refused on them rather than ignored: a misspelt
 * `idempotencykey`, `runID` or `refrence`, ignored, pays again or records the wrong thing.
 * @internal
 */
export function unknownKeyProblems(
  value: object,
  known: ReadonlySet<string>,
  message: (shown: string) => string,
): PaymentsFieldError[] {
  const problems: PaymentsFieldError[] = [];
  for (const key of Object.keys(value)) {
    if (!known.has(key)) problems.push(unknownKeyProblem(key, message));
  }
  return problems;
}

/**
 * The problems of an argument that must be a plain object of `known` keys: an `isObject` problem
 * of `field` (worded `notObject`) when it is not one (`null`, an array, a string), else those of
 * {@link unknownKeyProblems}. Empty when it is fine; each caller throws its own error type.
 * @internal
 */
export function objectOfKnownKeysProblems(
  value: unknown,
  field: string,
  notObject: string,
  known: ReadonlySet<string>,
  message: (shown: string) => string,
): PaymentsFieldError[] {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    return [{ field, rule: 'isObject', message: notObject }];
  }
  return unknownKeyProblems(value, known, message);
}

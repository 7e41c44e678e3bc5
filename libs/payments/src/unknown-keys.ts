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
 * of `field` (worded `notObject`) when it is not one (`null`, an array, a `Date`, a `Map`, a
 * string, a Proxy that cannot be read), else a `whitelist` problem for each unknown key it shows:
 * its own keys, enumerable or not, and what its prototypes add (a getter, a field) besides
 * methods. A `Date` given as a filter, or a misspelt key a class or prototype holds, ignored,
 * would list or reconcile everything, or give a run a random id. Empty when it is fine; each
 * caller throws its own error type.
 * @internal
 */
export function objectOfKnownKeysProblems(
  value: unknown,
  field: string,
  notObject: string,
  known: ReadonlySet<string>,
  message: (shown: string) => string,
): PaymentsFieldError[] {
  const notAnObject = [{ field, rule: 'isObject', message: notObject }];
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return notAnObject;
  try {
    if (Object.prototype.toString.call(value) !== '[object Object]') return notAnObject;
    const shown = new Set(Object.getOwnPropertyNames(value));
    // Up to the root prototype, which has none: `Object.prototype`, of this realm or another's.
    for (
      let prototype: object | null = Object.getPrototypeOf(value) as object | null;
      prototype !== null && Object.getPrototypeOf(prototype) !== null;
      prototype = Object.getPrototypeOf(prototype) as object | null
    ) {
      for (const [key, descriptor] of Object.entries(Object.getOwnPropertyDescriptors(prototype))) {
        if (key !== 'constructor' && typeof descriptor.value !== 'function') shown.add(key);
      }
    }
    const problems: PaymentsFieldError[] = [];
    for (const key of shown) {
      if (!known.has(key)) problems.push(unknownKeyProblem(key, message));
    }
    return problems;
  } catch {
    // A Proxy whose traps throw.
    return notAnObject;
  }
}

/**
 * The `known` fields of an argument that must be a plain object of them, copied into a plain
 * object (a list copied too), each read once: checks then read the copy, so that a getter cannot
 * answer one thing to the check and another to the work. Or the problems of
 * {@link objectOfKnownKeysProblems}, or an `isReadable` problem of `field` when reading one throws
 * (a getter, a Proxy): the caller's bad argument rather than some later step's. Each caller throws
 * its own error type.
 * @internal
 */
export function readObjectOfKnownKeys(
  value: unknown,
  field: string,
  notObject: string,
  known: ReadonlySet<string>,
  message: (shown: string) => string,
): { fields: Record<string, unknown>; problems?: undefined } | { problems: PaymentsFieldError[] } {
  const problems = objectOfKnownKeysProblems(value, field, notObject, known, message);
  if (problems.length > 0) return { problems };
  const fields = readKnownFields(value as object, known);
  if (fields === undefined) {
    return { problems: [{ field, rule: 'isReadable', message: `${field} could not be read` }] };
  }
  return { fields };
}

/**
 * The `known` fields of `value` that are set, copied into a plain object (a list copied too), each
 * read once; undefined when reading one throws (a getter, a Proxy).
 * @internal
 */
export function readKnownFields(
  value: object,
  known: Iterable<string>,
): Record<string, unknown> | undefined {
  const fields: Record<string, unknown> = {};
  try {
    for (const key of known) {
      const read: unknown = (value as Record<string, unknown>)[key];
      if (read !== undefined) fields[key] = Array.isArray(read) ? [...(read as unknown[])] : read;
    }
  } catch {
    return undefined;
  }
  return fields;
}

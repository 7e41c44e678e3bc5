import { PaymentsValidationError } from './errors';
import { unknownKeyProblems } from './unknown-keys';

/**
 * Fails on keys of `options` that are not in `names` (a typo such as `ratePerSecound` would leave
 * the default in place without a word), naming each and the module's options.
 * @throws PaymentsValidationError naming the options (`whitelist`).
 * @internal
 */
export function assertKnownOptions(
  moduleName: string,
  options: object,
  names: Readonly<Record<string, true>>,
  note = '',
): void {
  const listed = Object.keys(names);
  const problems = unknownKeyProblems(
    options,
    new Set(listed),
    (shown) => `${shown} is not an option of ${moduleName} (options: ${listed.join(', ')}${note})`,
  );
  if (problems.length > 0) throw new PaymentsValidationError(`${moduleName}Options`, problems);
}

/**
 * Fails on `forRootAsync` options that say neither how the module's options are made: without
 * `useFactory`, `useClass` or `useExisting`, Nest fails later, on a dependency it cannot resolve,
 * in words that do not name the cause.
 * @throws PaymentsValidationError (`useFactory`, `isDefined`).
 * @internal
 */
export function assertAsyncOptionsSource(moduleName: string, options: object): void {
  const { useFactory, useClass, useExisting } = options as Record<string, unknown>;
  if (useFactory !== undefined || useClass !== undefined || useExisting !== undefined) return;
  throw moduleOptionError(
    `${moduleName}Async`,
    'useFactory',
    'isDefined',
    `${moduleName}.forRootAsync() needs useFactory, useClass or useExisting to make its options`,
  );
}

/**
 * The error that stops the boot on a module's option that breaks its rule, as `PaymentsModule`'s
 * own: `target` is `<module>Options`, and the option and its rule are named.
 * @internal
 */
export function moduleOptionError(
  moduleName: string,
  field: string,
  rule: string,
  message: string,
): PaymentsValidationError {
  return new PaymentsValidationError(`${moduleName}Options`, [{ field, rule, message }]);
}

/**
 * `value` when it is a whole number of at least `min` (`1`: positive), else the error naming the
 * option of `owner` (a module, or a class its options are given to) and the rule.
 * @throws PaymentsValidationError (`isPositiveInteger` or `isNonNegativeInteger`).
 * @internal
 */
export function wholeNumberOption(
  owner: string,
  field: string,
  value: number,
  { min, unit = '' }: { min: 0 | 1; unit?: string },
): number {
  if (Number.isSafeInteger(value) && value >= min) return value;
  throw moduleOptionError(
    owner,
    field,
    min === 1 ? 'isPositiveInteger' : 'isNonNegativeInteger',
    `${field} must be ${min === 1 ? 'a positive integer' : 'a whole number, 0 or more'}${unit}`,
  );
}

/**
 * `value` when it is a string, not empty, or not given, else the error naming the option of `owner`.
 * @throws PaymentsValidationError (`isString`, `isNotEmpty`).
 * @internal
 */
export function textOption(owner: string, field: string, value: unknown): string | undefined {
  if (value === '') {
    // An empty prefix (an env var set to nothing) puts the keys beside every other app's.
    throw moduleOptionError(owner, field, 'isNotEmpty', `${field} must not be empty`);
  }
  if (value === undefined || typeof value === 'string') return value;
  throw moduleOptionError(owner, field, 'isString', `${field} must be a string`);
}

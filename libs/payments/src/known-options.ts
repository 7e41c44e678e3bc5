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

import { PaymentsValidationError } from './errors';

/** Longest part of an unknown option's name shown in an error message. */
const MAX_SHOWN_NAME_LENGTH = 64;

/**
 * Fails on a key of `options` that is not in `names` (a typo such as `ratePerSecound` would leave
 * the default in place without a word), naming it and the module's options.
 * @throws PaymentsValidationError naming the option (`whitelist`).
 * @internal
 */
export function assertKnownOptions(
  moduleName: string,
  options: object,
  names: Readonly<Record<string, true>>,
  note = '',
): void {
  for (const key of Object.keys(options)) {
    if (!Object.hasOwn(names, key)) {
      const shown = key.slice(0, MAX_SHOWN_NAME_LENGTH);
      throw moduleOptionError(
        moduleName,
        shown,
        'whitelist',
        `${shown} is not an option of ${moduleName} (options: ${Object.keys(names).join(', ')}${note})`,
      );
    }
  }
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

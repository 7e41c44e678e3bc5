/** Longest part of an unknown option's name shown in an error message. */
const MAX_SHOWN_NAME_LENGTH = 64;

/**
 * Fails on a key of `options` that is not in `names` (a typo such as `ratePerSecound` would leave
 * the default in place without a word), naming it and the module's options.
 * @throws Error naming the option.
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
      throw new Error(
        `The ${moduleName} option ${key.slice(0, MAX_SHOWN_NAME_LENGTH)} is not an option (options: ${Object.keys(names).join(', ')}${note})`,
      );
    }
  }
}

import { inspect } from 'node:util';

/**
 * Makes `holder` (a class's prototype, for all its instances, or one object) print
 * (`console.log`, `util.inspect`) and serialise (`JSON.stringify`) as `name` alone. Each holds the
 * API credentials, keys derived from them or a Redis connection, itself or deeper down, which no
 * log line may show; so the services that hold one can be printed whole.
 * @internal
 */
export function printsAsNameOnly(holder: object, name: string): void {
  const shown = `[${name}]`;
  Object.defineProperty(holder, inspect.custom, { value: () => shown });
  Object.defineProperty(holder, 'toJSON', { value: () => shown });
}

/**
 * `options`, frozen, printing and serialising with the values of `secretKeys` as `[REDACTED]`.
 * @internal
 */
export function withSecretsHidden<T extends object>(
  options: T,
  secretKeys: readonly (keyof T)[],
): Readonly<T> {
  const shown = (): Record<string, unknown> => {
    const copy: Record<string, unknown> = { ...(options as Record<string, unknown>) };
    for (const key of secretKeys) {
      if (copy[key as string] !== undefined) copy[key as string] = '[REDACTED]';
    }
    return copy;
  };
  Object.defineProperty(options, inspect.custom, {
    value: (_depth: number, inspectOptions: object) => inspect(shown(), inspectOptions),
  });
  Object.defineProperty(options, 'toJSON', { value: shown });
  return Object.freeze(options);
}

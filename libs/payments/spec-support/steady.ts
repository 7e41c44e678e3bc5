/**
 * Polls `read` until `done(value)` holds, then until the value is the same (`JSON.stringify`) for
 * `reads` reads `intervalMs` apart, and returns it: "wait for the expected state, then check that
 * nothing more happens", with no assumption on how long the machine takes. Fails after
 * `timeoutMs` (generous: a bound for a broken test, not a figure the test asserts).
 */
export async function steady<T>(
  read: () => T | Promise<T>,
  what: string,
  {
    done = () => true,
    reads = 3,
    intervalMs = 100,
    timeoutMs = 20_000,
  }: {
    done?: (value: T) => boolean;
    reads?: number;
    intervalMs?: number;
    timeoutMs?: number;
  } = {},
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let value = await read();
  let last = JSON.stringify(value);
  let same = 1;
  while (!(done(value) && same >= reads)) {
    if (Date.now() > deadline) {
      throw new Error(`timed out waiting for ${what} to settle (last seen: ${last})`);
    }
    await new Promise((resolve) => setTimeout(resolve, done(value) ? intervalMs : 25));
    value = await read();
    const now = JSON.stringify(value);
    same = now === last ? same + 1 : 1;
    last = now;
  }
  return value;
}

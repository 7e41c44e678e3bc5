/** How long a warning is not repeated: the first of a burst is logged, then one per window. */
const WINDOW_MS = 10_000;

/**
 * A warning logger that logs a message once per window, counting the repeats it held back, and
 * says how many with the next one it logs. During a Redis outage a BullMQ worker emits the same
 * error thousands of times a second; each logged whole would swamp the app's logs.
 * @internal
 */
export function throttledWarning(
  warn: (line: string) => void,
  now: () => number = Date.now,
): (message: string) => void {
  let last: { message: string; at: number } | undefined;
  let heldBack = 0;
  return (message) => {
    const at = now();
    if (last !== undefined && last.message === message && at - last.at < WINDOW_MS) {
      heldBack += 1;
      return;
    }
    warn(heldBack > 0 ? `${message} (${heldBack} more warnings held back before it)` : message);
    last = { message, at };
    heldBack = 0;
  };
}

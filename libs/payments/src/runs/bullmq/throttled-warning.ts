/** How long a warning is not repeated: the first of a burst is logged, then one per window. */
const WINDOW_MS = 10_000;
/** Messages remembered at once: BullMQ's errors of one run are a handful of kinds. */
const MAX_MESSAGES = 32;

/**
 * A warning logger that logs each message once per window, counting the repeats it held back, and
 * says how many the next time it logs that message. During a Redis outage a BullMQ worker emits
 * the same few errors thousands of times a second; each logged whole would swamp the app's logs.
 * @internal
 */
export function throttledWarning(
  warn: (line: string) => void,
  now: () => number = Date.now,
): (message: string) => void {
  const seen = new Map<string, { at: number; heldBack: number }>();
  return (message) => {
    const at = now();
    const last = seen.get(message);
    if (last !== undefined && at - last.at < WINDOW_MS) {
      last.heldBack += 1;
      return;
    }
    const heldBack = last?.heldBack ?? 0;
    warn(heldBack > 0 ? `${message} (${heldBack} more like it held back before it)` : message);
    // Re-inserted, so the first key is always the one logged longest ago.
    seen.delete(message);
    seen.set(message, { at, heldBack: 0 });
    if (seen.size > MAX_MESSAGES) seen.delete(seen.keys().next().value as string);
  };
}

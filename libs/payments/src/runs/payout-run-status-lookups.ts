/** The longest wait between two status look-ups of one item (ms). */
const MAX_INTERVAL_MS = 6 * 60 * 60 * 1000;
/** Items whose next look-up is remembered at most; the oldest are forgotten first. */
const MAX_ITEMS = 100_000;

/**
 * When a run looks up the status of a sent item itself (docs/payout-runs.md, "Lost webhooks"):
 * `afterMs` after the item was accepted, when its webhook should long have come, then at doubling
 * intervals up to 6 hours. An item whose webhook was lost so settles without a scheduled
 * `reconcile()`, and a run whose webhooks arrive makes no look-up at all. 0 never looks up.
 */
export class PayoutRunStatusLookups {
  private readonly next = new Map<string, { at: number; intervalMs: number }>();

  constructor(
    private readonly afterMs: number,
    private readonly now: () => number = Date.now,
  ) {}

  /**
   * Whether the item, in its state since `since` (an ISO time), is due a look-up now; when it
   * is, the next one is scheduled.
   */
  take(runId: string, itemId: string, since: string): boolean {
    if (this.afterMs === 0) return false;
    const key = `${runId}\n${itemId}`;
    const now = this.now();
    const known = this.next.get(key);
    const sinceMs = Date.parse(since);
    const due = known?.at ?? (Number.isNaN(sinceMs) ? now : sinceMs) + this.afterMs;
    if (known === undefined && due > now) {
      this.remember(key, { at: due, intervalMs: this.afterMs });
      return false;
    }
    if (due > now) return false;
    const intervalMs = Math.min(MAX_INTERVAL_MS, (known?.intervalMs ?? this.afterMs) * 2);
    this.remember(key, { at: now + intervalMs, intervalMs });
    return true;
  }

  /** The item settled: nothing kept for it. */
  forget(runId: string, itemId: string): void {
    this.next.delete(`${runId}\n${itemId}`);
  }

  private remember(key: string, next: { at: number; intervalMs: number }): void {
    this.next.delete(key);
    this.next.set(key, next);
    if (this.next.size > MAX_ITEMS) this.next.delete(this.next.keys().next().value as string);
  }
}

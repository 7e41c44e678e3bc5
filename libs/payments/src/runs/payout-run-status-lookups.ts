import { MAX_SETTLEMENT_READ_DELAY_MS } from './payout-run-settlement-schedule';

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
    /** Items whose next look-up is remembered at most; the oldest are forgotten first. */
    private readonly maxItems = MAX_ITEMS,
    /** The longest wait between two reads of an item by the engine (its schedule's, one poll). */
    private readonly readGapMs = MAX_SETTLEMENT_READ_DELAY_MS,
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
    if (known !== undefined) {
      if (known.at > now) return false;
      const intervalMs = Math.min(MAX_INTERVAL_MS, known.intervalMs * 2);
      this.remember(key, { at: now + intervalMs, intervalMs });
      return true;
    }
    const sinceMs = Date.parse(since);
    const first = (Number.isNaN(sinceMs) ? now : sinceMs) + this.afterMs;
    if (first > now) {
      this.remember(key, { at: first, intervalMs: this.afterMs });
      return false;
    }
    // Past its first look-up and not remembered: never looked up (a new item, a restarted
    // process), or forgotten for room. While the table is full, looked up only when one of its
    // look-ups fell due since its previous read, never at each read: else each look-up would
    // forget another item, and every item past the bound be looked up at every read.
    const latest = this.latestLookUp(first, now);
    if (this.next.size >= this.maxItems && now - latest.at >= this.readGapMs) {
      return false;
    }
    // The schedule goes on from that look-up: the next interval is its, not the first.
    this.remember(key, { at: now + latest.nextIntervalMs, intervalMs: latest.nextIntervalMs });
    return true;
  }

  /**
   * The latest look-up of the schedule that starts at `first` (then doubling intervals up to
   * {@link MAX_INTERVAL_MS}) at or before `now`, and the interval after it.
   */
  private latestLookUp(first: number, now: number): { at: number; nextIntervalMs: number } {
    let at = first;
    let intervalMs = Math.min(MAX_INTERVAL_MS, this.afterMs * 2);
    while (at + intervalMs <= now) {
      if (intervalMs === MAX_INTERVAL_MS) {
        // Past the doubling, every interval is the longest: the latest look-up at once.
        at += Math.floor((now - at) / intervalMs) * intervalMs;
        break;
      }
      at += intervalMs;
      intervalMs = Math.min(MAX_INTERVAL_MS, intervalMs * 2);
    }
    return { at, nextIntervalMs: intervalMs };
  }

  /** The item settled: nothing kept for it. */
  forget(runId: string, itemId: string): void {
    this.next.delete(`${runId}\n${itemId}`);
  }

  private remember(key: string, next: { at: number; intervalMs: number }): void {
    this.next.delete(key);
    this.next.set(key, next);
    if (this.next.size > this.maxItems) this.next.delete(this.next.keys().next().value as string);
  }
}

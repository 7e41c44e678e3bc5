/** Reads at the poll interval before an item's reads start to slow down. */
const FAST_READS = 30;
/** Longest wait between two reads of one item's journal entry (ms). */
export const MAX_SETTLEMENT_READ_DELAY_MS = 5 * 60 * 1000;
/** Journal entries read at once. */
export const SETTLEMENT_BATCH = 32;

/**
 * When the run next reads the journal entry of each accepted or in-doubt item
 * (docs/payout-runs.md, "Scale"): every `settlementPollMs` at first (a webhook settles most within
 * seconds), then less and less often for an item long unsettled, up to five minutes apart.
 */
export class PayoutRunSettlementSchedule {
  private readonly items = new Map<string, { due: number; misses: number }>();

  constructor(
    private readonly pollMs: number,
    private readonly now: () => number = Date.now,
  ) {}

  /** Whether the item's entry should be read now (an item never read is due). */
  isDue(runId: string, itemId: string): boolean {
    const next = this.items.get(`${runId}\n${itemId}`);
    return next === undefined || next.due <= this.now();
  }

  /** The entry said nothing new: the next read waits longer, once past the fast reads. */
  missed(runId: string, itemId: string): void {
    const key = `${runId}\n${itemId}`;
    const misses = (this.items.get(key)?.misses ?? 0) + 1;
    const slow = misses - FAST_READS;
    const delay =
      slow <= 0
        ? this.pollMs
        : Math.min(MAX_SETTLEMENT_READ_DELAY_MS, this.pollMs * 2 ** Math.min(20, slow / 5));
    this.items.set(key, { due: this.now() + delay, misses });
  }

  /** The item settled (or the run is let go): no schedule kept. */
  forget(runId: string, itemId?: string): void {
    if (itemId !== undefined) {
      this.items.delete(`${runId}\n${itemId}`);
      return;
    }
    for (const key of this.items.keys()) if (key.startsWith(`${runId}\n`)) this.items.delete(key);
  }
}

/**
 * Runs `visit` over `values`, `SETTLEMENT_BATCH` at a time. Between batches it lets the event loop
 * run: an in-memory store and journal answer without I/O, and thousands of reads in one go would
 * hold back the run's sends (and their arrival at the service) for as long.
 */
export async function inBatches<T>(
  values: readonly T[],
  visit: (value: T) => Promise<void>,
): Promise<void> {
  for (let start = 0; start < values.length; start += SETTLEMENT_BATCH) {
    if (start > 0) await new Promise((resolve) => setImmediate(resolve));
    await Promise.all(values.slice(start, start + SETTLEMENT_BATCH).map(visit));
  }
}

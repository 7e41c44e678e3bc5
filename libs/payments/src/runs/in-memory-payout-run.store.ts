import { assertKnownOptions, wholeNumberOption } from '../known-options';
import type { PayoutRunItemState, PayoutRunState } from './payout-run.interfaces';
import { itemMinorUnits, PayoutRunTally } from './payout-run-tally';
import {
  cursorPosition,
  FINAL_ITEM_STATES,
  pastTheEnd,
  PayoutRunExistsError,
} from './payout-run.store';
import type {
  PayoutRunChange,
  PayoutRunCondition,
  PayoutRunItemChange,
  PayoutRunItemRecord,
  PayoutRunRecord,
  PayoutRunStore,
  PayoutRunSummary,
} from './payout-run.store';

interface StoredRun {
  run: PayoutRunRecord;
  items: PayoutRunItemRecord[];
  byId: Map<string, number>;
  tally: PayoutRunTally;
}

/** Options of {@link InMemoryPayoutRunStore}: how long finished runs are kept. */
export interface InMemoryPayoutRunStoreOptions {
  /** A run is forgotten this long after it finished (ms). Default 24 hours. */
  retainFinishedMs?: number;
  /** At most this many finished runs are kept; the oldest finished go first. Default 100. */
  maxFinishedRuns?: number;
  /** Milliseconds since the epoch. Default `Date.now`. */
  now?: () => number;
}

const OPTION_NAMES: Readonly<Record<keyof InMemoryPayoutRunStoreOptions, true>> = {
  retainFinishedMs: true,
  maxFinishedRuns: true,
  now: true,
};

/**
 * Runs in this process's memory: the embedded default. **Lost on restart** (docs/payout-runs.md,
 * "Crashes"): the payments journal still says which items were sent and how they ended. Finished
 * runs are forgotten after `retainFinishedMs` or beyond `maxFinishedRuns` (docs/payout-runs.md,
 * "What expires"), so a long-lived process does not grow with every run it paid.
 */
export class InMemoryPayoutRunStore implements PayoutRunStore {
  private readonly runs = new Map<string, StoredRun>();
  private readonly retainFinishedMs: number;
  private readonly maxFinishedRuns: number;
  private readonly now: () => number;

  /** @throws PaymentsValidationError for an unknown option or a count or time below 0. */
  constructor(options: InMemoryPayoutRunStoreOptions = {}) {
    assertKnownOptions('InMemoryPayoutRunStore', options, OPTION_NAMES);
    this.retainFinishedMs = wholeNumberOption(
      'InMemoryPayoutRunStore',
      'retainFinishedMs',
      options.retainFinishedMs ?? 24 * 60 * 60 * 1000,
      { min: 0, unit: ' (ms)' },
    );
    this.maxFinishedRuns = wholeNumberOption(
      'InMemoryPayoutRunStore',
      'maxFinishedRuns',
      options.maxFinishedRuns ?? 100,
      { min: 0 },
    );
    this.now = options.now ?? Date.now;
  }

  createRun(run: PayoutRunRecord, items: readonly PayoutRunItemRecord[]): Promise<void> {
    this.expire();
    if (this.runs.has(run.runId)) {
      return Promise.reject(new PayoutRunExistsError(run.runId));
    }
    const tally = new PayoutRunTally();
    for (const item of items) tally.add(item.state, item.currency, itemMinorUnits(item));
    this.runs.set(run.runId, {
      run: { ...run },
      items: items.map((item) => ({ ...item })),
      byId: new Map(items.map((item, index) => [item.itemId, index])),
      tally,
    });
    return Promise.resolve();
  }

  getRun(runId: string): Promise<PayoutRunRecord | undefined> {
    const stored = this.runs.get(runId);
    return Promise.resolve(stored && { ...stored.run });
  }

  updateRun(
    runId: string,
    change: PayoutRunChange,
    when: PayoutRunCondition = {},
  ): Promise<PayoutRunRecord | undefined> {
    const stored = this.runs.get(runId);
    if (!stored) return Promise.resolve(undefined);
    if (when.states && !when.states.includes(stored.run.state)) return Promise.resolve(undefined);
    if (when.unfinished && stored.run.finishedAt !== undefined) return Promise.resolve(undefined);
    stored.run = { ...stored.run, ...change, updatedAt: new Date().toISOString() };
    return Promise.resolve({ ...stored.run });
  }

  getItem(runId: string, itemId: string): Promise<PayoutRunItemRecord | undefined> {
    const item = this.itemOf(runId, itemId);
    return Promise.resolve(item && { ...item });
  }

  updateItem(
    runId: string,
    itemId: string,
    change: PayoutRunItemChange,
    from?: readonly PayoutRunItemState[],
    runStates?: readonly PayoutRunState[],
  ): Promise<PayoutRunItemRecord | undefined> {
    const stored = this.runs.get(runId);
    const index = stored?.byId.get(itemId);
    if (!stored || index === undefined) return Promise.resolve(undefined);
    const item = stored.items[index];
    if (from && !from.includes(item.state)) return Promise.resolve(undefined);
    if (runStates && !runStates.includes(stored.run.state)) return Promise.resolve(undefined);
    const next: { -readonly [K in keyof PayoutRunItemRecord]: PayoutRunItemRecord[K] } = {
      ...item,
      ...change,
      updatedAt: new Date().toISOString(),
    };
    if (change.reason === undefined && change.state !== undefined) delete next.reason;
    // A final item is never sent again: its receiver's numbers need not stay.
    if (FINAL_ITEM_STATES.includes(next.state)) delete next.request;
    stored.tally.move(item.state, next.state, item.currency, itemMinorUnits(item));
    stored.items[index] = next;
    return Promise.resolve({ ...next });
  }

  listItems(
    runId: string,
    query: { states?: readonly PayoutRunItemState[]; cursor?: string; limit: number },
  ): Promise<{ items: PayoutRunItemRecord[]; nextCursor?: string }> {
    const stored = this.runs.get(runId);
    if (!stored) return Promise.resolve({ items: [] });
    const start = cursorPosition(query.cursor);
    if (start instanceof RangeError) return Promise.reject(start);
    const beyond = pastTheEnd(start, stored.items.length);
    if (beyond) return Promise.reject(beyond);
    const items: PayoutRunItemRecord[] = [];
    let index = start;
    for (; index < stored.items.length && items.length < query.limit; index += 1) {
      const item = stored.items[index];
      if (!query.states || query.states.includes(item.state)) items.push({ ...item });
    }
    return Promise.resolve(
      index < stored.items.length ? { items, nextCursor: String(index) } : { items },
    );
  }

  summary(runId: string): Promise<PayoutRunSummary> {
    return Promise.resolve((this.runs.get(runId)?.tally ?? new PayoutRunTally()).summary());
  }

  /** Forgets finished runs past `retainFinishedMs`, then the oldest beyond `maxFinishedRuns`. */
  private expire(): void {
    const finished: [string, number][] = [];
    const oldest = this.now() - this.retainFinishedMs;
    for (const [runId, { run }] of this.runs) {
      if (run.finishedAt === undefined) continue;
      const at = Date.parse(run.finishedAt);
      if (at <= oldest) this.runs.delete(runId);
      else finished.push([runId, at]);
    }
    finished.sort((a, b) => a[1] - b[1]);
    for (const [runId] of finished.slice(0, Math.max(0, finished.length - this.maxFinishedRuns))) {
      this.runs.delete(runId);
    }
  }

  private itemOf(runId: string, itemId: string): PayoutRunItemRecord | undefined {
    const stored = this.runs.get(runId);
    const index = stored?.byId.get(itemId);
    return index === undefined ? undefined : stored?.items[index];
  }
}

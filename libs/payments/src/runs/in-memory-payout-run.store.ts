import { addMoney } from './payout-run-balance';
import { PAYOUT_RUN_ITEM_STATES } from './payout-run.interfaces';
import type { PayoutRunItemState, PayoutRunTotal } from './payout-run.interfaces';
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
}

/**
 * Runs in this process's memory: the embedded default. **Lost on restart** (docs/payout-runs.md,
 * "Crashes"): the payments journal still says which items were sent and how they ended.
 */
export class InMemoryPayoutRunStore implements PayoutRunStore {
  private readonly runs = new Map<string, StoredRun>();

  createRun(run: PayoutRunRecord, items: readonly PayoutRunItemRecord[]): Promise<void> {
    if (this.runs.has(run.runId)) {
      return Promise.reject(new Error(`The payout run ${run.runId} exists already`));
    }
    this.runs.set(run.runId, {
      run: { ...run },
      items: items.map((item) => ({ ...item })),
      byId: new Map(items.map((item, index) => [item.itemId, index])),
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
  ): Promise<PayoutRunItemRecord | undefined> {
    const stored = this.runs.get(runId);
    const index = stored?.byId.get(itemId);
    if (!stored || index === undefined) return Promise.resolve(undefined);
    const item = stored.items[index];
    if (from && !from.includes(item.state)) return Promise.resolve(undefined);
    const next: PayoutRunItemRecord = { ...item, ...change, updatedAt: new Date().toISOString() };
    if (change.reason === undefined && change.state !== undefined) delete next.reason;
    stored.items[index] = next;
    return Promise.resolve({ ...next });
  }

  listItems(
    runId: string,
    query: { states?: readonly PayoutRunItemState[]; cursor?: string; limit: number },
  ): Promise<{ items: PayoutRunItemRecord[]; nextCursor?: string }> {
    const stored = this.runs.get(runId);
    if (!stored) return Promise.resolve({ items: [] });
    const start = query.cursor === undefined ? 0 : Number(query.cursor);
    if (!Number.isSafeInteger(start) || start < 0) {
      return Promise.reject(new Error('cursor must be a nextCursor of this run'));
    }
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
    const counts = Object.fromEntries(PAYOUT_RUN_ITEM_STATES.map((state) => [state, 0])) as Record<
      PayoutRunItemState,
      number
    >;
    const all: Record<string, PayoutRunTotal> = {};
    const succeeded: Record<string, PayoutRunTotal> = {};
    const add = (totals: Record<string, PayoutRunTotal>, item: PayoutRunItemRecord) => {
      const total = (totals[item.currency] ??= { count: 0, amount: 0 });
      total.count += 1;
      total.amount = addMoney(total.amount, item.amount);
    };
    for (const item of this.runs.get(runId)?.items ?? []) {
      counts[item.state] += 1;
      add(all, item);
      if (item.state === 'succeeded') add(succeeded, item);
    }
    return Promise.resolve({ counts, totals: { all, succeeded } });
  }

  private itemOf(runId: string, itemId: string): PayoutRunItemRecord | undefined {
    const stored = this.runs.get(runId);
    const index = stored?.byId.get(itemId);
    return index === undefined ? undefined : stored?.items[index];
  }
}

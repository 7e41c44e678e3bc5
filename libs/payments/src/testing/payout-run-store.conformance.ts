import { deepStrictEqual, ok, rejects, strictEqual } from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { assertSameData } from './assert-same-data';
import type { PayoutRunItemState } from '../runs/payout-run.interfaces';
import { PayoutRunExistsError } from '../runs/payout-run.store';
import type {
  PayoutRunItemRecord,
  PayoutRunRecord,
  PayoutRunStore,
} from '../runs/payout-run.store';

/** One check of the payout-run store contract (docs/payout-runs.md, "Engines"). */
export interface PayoutRunStoreConformanceCase {
  readonly name: string;
  /** Rejects (node:assert) when `store` breaks the contract. Uses a run of its own: stores may be shared. */
  readonly run: (store: PayoutRunStore) => Promise<void>;
}

const AT = '2026-01-01T00:00:00.000Z';

function runRecord(runId: string, changes: Partial<PayoutRunRecord> = {}): PayoutRunRecord {
  return {
    runId,
    name: 'conformance',
    state: 'running',
    createdAt: AT,
    updatedAt: AT,
    concurrency: 4,
    ratePerSecond: 10,
    balanceCheck: { checked: [{ currency: 'KES', required: 1, available: 2 }], unchecked: [] },
    rateLimited: 0,
    itemsDigest: 'digest-of-the-items',
    account: 'digest-of-the-account',
    ...changes,
  };
}

/** `count` queued items: KES amounts 100.10, 101.10...; every third in USD. */
function items(runId: string, count: number): PayoutRunItemRecord[] {
  return Array.from({ length: count }, (_, index) => ({
    runId,
    itemId: `item:${index}`,
    operation: 'payouts.mpesa' as const,
    idempotencyKey: `run-${runId}-item:${index}`,
    amount: 100.1 + index,
    currency: index % 3 === 2 ? 'USD' : 'KES',
    state: 'queued' as const,
    sends: 0,
    updatedAt: AT,
    request: { phoneNumber: '0712345678', amount: 100.1 + index, nested: { list: [1, 'a'] } },
  }));
}

/** Every item, following `nextCursor` pages of `limit`. */
async function allPages(
  store: PayoutRunStore,
  runId: string,
  limit: number,
  states?: readonly PayoutRunItemState[],
): Promise<string[]> {
  const ids: string[] = [];
  for (let cursor: string | undefined, first = true; first || cursor; first = false) {
    const page = await store.listItems(runId, {
      limit,
      ...(states ? { states } : {}),
      ...(cursor === undefined ? {} : { cursor }),
    });
    ok(page.items.length <= limit);
    ids.push(...page.items.map((item) => item.itemId));
    cursor = page.nextCursor;
  }
  return ids;
}

const CASES: readonly PayoutRunStoreConformanceCase[] = [
  {
    name: 'createRun keeps the run and its items as given, all of them readable, and refuses its id again with PayoutRunExistsError',
    run: async (store) => {
      const runId = randomUUID();
      const given = items(runId, 3);
      await store.createRun(runRecord(runId), given);
      assertSameData(await store.getRun(runId), runRecord(runId));
      assertSameData(await store.getItem(runId, 'item:1'), given[1]);
      strictEqual(await store.getItem(runId, 'absent'), undefined);
      strictEqual(await store.getRun(randomUUID()), undefined);
      await rejects(store.createRun(runRecord(runId), given), PayoutRunExistsError);
    },
  },
  {
    name: 'of createRun calls racing with one run id, exactly one creates it and the others reject with PayoutRunExistsError',
    run: async (store) => {
      const runId = randomUUID();
      const results = await Promise.allSettled(
        Array.from({ length: 10 }, (_, index) =>
          store.createRun(runRecord(runId, { name: `racer ${index}` }), items(runId, 2)),
        ),
      );
      strictEqual(results.filter((result) => result.status === 'fulfilled').length, 1);
      for (const result of results) {
        if (result.status === 'rejected') ok(result.reason instanceof PayoutRunExistsError);
      }
    },
  },
  {
    name: 'summary totals a currency of 3 decimals exactly',
    run: async (store) => {
      const runId = randomUUID();
      const given = items(runId, 3).map((item) => ({ ...item, amount: 1.005, currency: 'TND' }));
      await store.createRun(runRecord(runId), given);
      assertSameData((await store.summary(runId)).totals.all, {
        TND: { count: 3, amount: 3.015 },
      });
    },
  },
  {
    name: 'updateItem changes an item only from the states given, and drops a reason on a new state',
    run: async (store) => {
      const runId = randomUUID();
      await store.createRun(runRecord(runId), items(runId, 2));
      strictEqual(
        await store.updateItem(runId, 'item:0', { state: 'accepted' }, ['sending']),
        undefined,
      );
      strictEqual(await store.updateItem(runId, 'item:0', { sends: 1 }, []), undefined);
      strictEqual(await store.updateItem(runId, 'absent', { state: 'sending' }), undefined);
      const sending = await store.updateItem(runId, 'item:0', { state: 'sending', sends: 1 }, [
        'queued',
      ]);
      strictEqual(sending?.state, 'sending');
      strictEqual(sending?.sends, 1);
      const doubtful = await store.updateItem(
        runId,
        'item:0',
        { state: 'in_doubt', reason: 'timeout' },
        ['sending'],
      );
      strictEqual(doubtful?.reason, 'timeout');
      const settled = await store.updateItem(
        runId,
        'item:0',
        { state: 'succeeded', reference: 'REF1' },
        ['in_doubt'],
      );
      strictEqual(settled?.state, 'succeeded');
      strictEqual(settled?.reason, undefined);
      strictEqual(settled?.reference, 'REF1');
      strictEqual(settled?.sends, 1);
      assertSameData(await store.getItem(runId, 'item:0'), settled);
      strictEqual((await store.getItem(runId, 'item:1'))?.state, 'queued');
    },
  },
  {
    name: 'updateItem keeps the send claim with the item, for getItem to read back',
    run: async (store) => {
      const runId = randomUUID();
      await store.createRun(runRecord(runId), items(runId, 1));
      const claim = randomUUID();
      const sending = await store.updateItem(
        runId,
        'item:0',
        { state: 'sending', sends: 1, sendClaim: claim },
        ['queued'],
      );
      strictEqual(sending?.sendClaim, claim);
      // The same write run again (its answer lost, the command re-sent) finds the item moved on.
      strictEqual(
        await store.updateItem(runId, 'item:0', { state: 'sending', sends: 1, sendClaim: claim }, [
          'queued',
        ]),
        undefined,
      );
      strictEqual((await store.getItem(runId, 'item:0'))?.sendClaim, claim);
    },
  },
  {
    name: "updateItem keeps an item's unsent call ids until a change names others",
    run: async (store) => {
      const runId = randomUUID();
      await store.createRun(runRecord(runId), items(runId, 1));
      await store.updateItem(runId, 'item:0', { state: 'sending', sends: 1 }, ['queued']);
      const queued = await store.updateItem(
        runId,
        'item:0',
        { state: 'queued', unsentCallIds: ['call-1'] },
        ['sending'],
      );
      deepStrictEqual(queued?.unsentCallIds, ['call-1']);
      // A change that does not name them keeps them: the next sender reads them.
      await store.updateItem(runId, 'item:0', { state: 'sending', sends: 2 }, ['queued']);
      deepStrictEqual((await store.getItem(runId, 'item:0'))?.unsentCallIds, ['call-1']);
      await store.updateItem(
        runId,
        'item:0',
        { state: 'queued', unsentCallIds: ['call-1', 'call-2'] },
        ['sending'],
      );
      deepStrictEqual((await store.getItem(runId, 'item:0'))?.unsentCallIds, ['call-1', 'call-2']);
    },
  },
  {
    name: 'of updateItem calls racing from the same state, exactly one wins',
    run: async (store) => {
      const runId = randomUUID();
      await store.createRun(runRecord(runId), items(runId, 1));
      const results = await Promise.all(
        Array.from({ length: 10 }, (_, attempt) =>
          store.updateItem(runId, 'item:0', { state: 'sending', sends: attempt + 1 }, ['queued']),
        ),
      );
      strictEqual(results.filter((result) => result !== undefined).length, 1);
      strictEqual((await store.summary(runId)).counts.sending, 1);
    },
  },
  {
    name: 'updateItem calls on different items of one run at once all land, and the counts follow',
    run: async (store) => {
      const runId = randomUUID();
      const count = 40;
      await store.createRun(runRecord(runId), items(runId, count));
      const ids = Array.from({ length: count }, (_, index) => `item:${index}`);
      const sent = await Promise.all(
        ids.map((itemId) =>
          store.updateItem(runId, itemId, { state: 'sending', sends: 1 }, ['queued']),
        ),
      );
      ok(
        sent.every((item) => item?.state === 'sending'),
        'an update of another item was lost',
      );
      await Promise.all(
        ids.map((itemId, index) =>
          store.updateItem(
            runId,
            itemId,
            index % 2 === 0 ? { state: 'accepted', reference: `R${index}` } : { state: 'failed' },
            ['sending'],
          ),
        ),
      );
      for (const [index, itemId] of ids.entries()) {
        strictEqual(
          (await store.getItem(runId, itemId))?.state,
          index % 2 === 0 ? 'accepted' : 'failed',
          `${itemId} lost an update`,
        );
      }
      const { counts } = await store.summary(runId);
      assertSameData(counts, {
        queued: 0,
        sending: 0,
        accepted: count / 2,
        succeeded: 0,
        failed: count / 2,
        refused: 0,
        in_doubt: 0,
      });
    },
  },
  {
    name: 'summary counts items per state and totals per currency, all and succeeded, to the cent',
    run: async (store) => {
      const runId = randomUUID();
      await store.createRun(runRecord(runId), items(runId, 6));
      for (const itemId of ['item:0', 'item:1', 'item:2']) {
        await store.updateItem(runId, itemId, { state: 'succeeded' }, ['queued']);
      }
      await store.updateItem(runId, 'item:3', { state: 'refused', reason: 'no' }, ['queued']);
      const summary = await store.summary(runId);
      assertSameData(summary.counts, {
        queued: 2,
        sending: 0,
        accepted: 0,
        succeeded: 3,
        failed: 0,
        refused: 1,
        in_doubt: 0,
      });
      assertSameData(summary.totals.all, {
        KES: { count: 4, amount: 408.4 },
        USD: { count: 2, amount: 207.2 },
      });
      assertSameData(summary.totals.succeeded, {
        KES: { count: 2, amount: 201.2 },
        USD: { count: 1, amount: 102.1 },
      });
      assertSameData(summary.totals.byState.queued, {
        KES: { count: 1, amount: 104.1 },
        USD: { count: 1, amount: 105.1 },
      });
      assertSameData(summary.totals.byState.refused, { KES: { count: 1, amount: 103.1 } });
      assertSameData(summary.totals.byState.in_doubt, {});
    },
  },
  {
    name: 'updateItem with runStates changes an item only while its run is in one of them',
    run: async (store) => {
      const runId = randomUUID();
      await store.createRun(runRecord(runId), items(runId, 2));
      await store.updateRun(runId, { state: 'paused' });
      strictEqual(
        await store.updateItem(runId, 'item:0', { state: 'sending' }, ['queued'], ['running']),
        undefined,
      );
      strictEqual((await store.getItem(runId, 'item:0'))?.state, 'queued');
      await store.updateRun(runId, { state: 'running' });
      const sending = await store.updateItem(
        runId,
        'item:0',
        { state: 'sending' },
        ['queued'],
        ['running'],
      );
      strictEqual(sending?.state, 'sending');
    },
  },
  {
    name: 'drops the request of an item once it is final, keeps it while it may still be sent',
    run: async (store) => {
      const runId = randomUUID();
      await store.createRun(runRecord(runId), items(runId, 3));
      await store.updateItem(runId, 'item:0', { state: 'in_doubt', reason: 'r' });
      ok((await store.getItem(runId, 'item:0'))?.request);
      for (const [itemId, state] of [
        ['item:0', 'succeeded'],
        ['item:1', 'failed'],
        ['item:2', 'refused'],
      ] as const) {
        const changed = await store.updateItem(runId, itemId, { state });
        strictEqual(changed?.request, undefined);
        strictEqual((await store.getItem(runId, itemId))?.request, undefined);
      }
    },
  },
  {
    name: 'listItems gives items in the order given, by state, page after page from nextCursor; refuses a cursor it did not give with a RangeError',
    run: async (store) => {
      const runId = randomUUID();
      const given = items(runId, 25);
      await store.createRun(runRecord(runId), given);
      for (const index of [3, 4, 10, 24]) {
        await store.updateItem(runId, `item:${index}`, { state: 'in_doubt', reason: 'r' });
      }
      await store.updateItem(runId, 'item:7', { state: 'accepted' });
      const ids = given.map((item) => item.itemId);
      assertSameData(await allPages(store, runId, 4), ids);
      assertSameData(await allPages(store, runId, 100), ids);
      assertSameData(await allPages(store, runId, 2, ['in_doubt', 'accepted']), [
        'item:3',
        'item:4',
        'item:7',
        'item:10',
        'item:24',
      ]);
      assertSameData(await allPages(store, runId, 3, ['failed']), []);
      const page = await store.listItems(runId, { limit: 2 });
      assertSameData(page.items[0], given[0]);
      // A RangeError, which PayoutRunsService answers as a validation error on `cursor`.
      for (const cursor of ['not a cursor', '', ' 3', '1e1', '0x2', '-1', '25', '1000']) {
        await rejects(store.listItems(runId, { limit: 2, cursor }), RangeError);
      }
      // The cursor of the last item is one a store gives (after a page ending at item 23).
      const last = await store.listItems(runId, { limit: 2, cursor: '24' });
      assertSameData(
        last.items.map((item) => item.itemId),
        ['item:24'],
      );
    },
  },
  {
    name: 'updateRun changes a run only when it meets the condition; of racing finishes one wins',
    run: async (store) => {
      const runId = randomUUID();
      await store.createRun(runRecord(runId), items(runId, 1));
      strictEqual(await store.updateRun(randomUUID(), { state: 'paused' }), undefined);
      strictEqual(
        await store.updateRun(runId, { state: 'running' }, { states: ['paused'] }),
        undefined,
      );
      const paused = await store.updateRun(runId, { state: 'paused' }, { states: ['running'] });
      strictEqual(paused?.state, 'paused');
      const limited = await store.updateRun(runId, { rateLimited: 3 });
      strictEqual(limited?.rateLimited, 3);
      strictEqual(limited?.state, 'paused');
      const finishes = await Promise.all(
        Array.from({ length: 6 }, () =>
          store.updateRun(runId, { state: 'completed', finishedAt: AT }, { unfinished: true }),
        ),
      );
      strictEqual(finishes.filter((finish) => finish !== undefined).length, 1);
      const stored = await store.getRun(runId);
      strictEqual(stored?.state, 'completed');
      strictEqual(stored?.finishedAt, AT);
      strictEqual(stored?.name, 'conformance');
    },
  },
];

/**
 * The checks a {@link PayoutRunStore} must pass, for a store you write on your own database:
 * `for (const check of payoutRunStoreConformance()) it(check.name, () => check.run(store))`.
 * Each check makes a run of its own, so one store can serve them all.
 */
export function payoutRunStoreConformance(): readonly PayoutRunStoreConformanceCase[] {
  return CASES;
}

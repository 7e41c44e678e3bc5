import { setImmediate as tick } from 'node:timers/promises';
import { InMemoryPayoutRunStore } from '../runs/in-memory-payout-run.store';
import type { PayoutRunStore } from '../runs/payout-run.store';
import { payoutRunStoreConformance } from './payout-run-store.conformance';

/** The names of the conformance cases `store` fails. */
async function failedCases(store: PayoutRunStore): Promise<string[]> {
  const failed: string[] = [];
  for (const check of payoutRunStoreConformance()) {
    await check.run(store).catch(() => failed.push(check.name));
  }
  return failed;
}

/** An in-memory store with `fault` laid over some of its methods. */
function brokenStore(fault: (inner: InMemoryPayoutRunStore) => Partial<PayoutRunStore>) {
  const inner = new InMemoryPayoutRunStore();
  const store: PayoutRunStore = {
    createRun: (run, items) => inner.createRun(run, items),
    getRun: (runId) => inner.getRun(runId),
    updateRun: (runId, change, when) => inner.updateRun(runId, change, when),
    getItem: (runId, itemId) => inner.getItem(runId, itemId),
    updateItem: (runId, itemId, change, from, runStates) =>
      inner.updateItem(runId, itemId, change, from, runStates),
    listItems: (runId, query) => inner.listItems(runId, query),
    summary: (runId) => inner.summary(runId),
  };
  return Object.assign(store, fault(inner));
}

describe('payoutRunStoreConformance', () => {
  it('passes a store that keeps the contract', async () => {
    expect(await failedCases(new InMemoryPayoutRunStore())).toEqual([]);
  });

  it.each([
    [
      'keeps its counts apart from the items, read and written back across an await',
      (inner: InMemoryPayoutRunStore): Partial<PayoutRunStore> => {
        let counts: Record<string, number> | undefined;
        return {
          updateItem: async (runId, itemId, change, from, runStates) => {
            const before = { ...(counts ??= { ...(await inner.summary(runId)).counts }) };
            const updated = await inner.updateItem(runId, itemId, change, from, runStates);
            await tick();
            if (updated && change.state) {
              const previous = from?.[0] ?? 'queued';
              before[previous] -= 1;
              before[change.state] += 1;
            }
            counts = before;
            return updated;
          },
          summary: async (runId) => ({
            ...(await inner.summary(runId)),
            ...(counts ? { counts: counts } : {}),
          }),
        };
      },
      'on different items of one run at once all land',
    ],
    [
      'creates a run after checking, across an await, that it is not there',
      (inner: InMemoryPayoutRunStore): Partial<PayoutRunStore> => ({
        createRun: async (run, items) => {
          if (await inner.getRun(run.runId)) throw new Error('exists');
          await tick();
          await inner.createRun(run, items).catch(() => undefined);
        },
      }),
      'racing with one run id',
    ],
    [
      'refuses a taken run id with an error of its own',
      (inner: InMemoryPayoutRunStore): Partial<PayoutRunStore> => ({
        createRun: (run, items) =>
          inner.createRun(run, items).catch((error: Error) => {
            throw new Error(error.message);
          }),
      }),
      'refuses its id again with PayoutRunExistsError',
    ],
    [
      'totals amounts as floats rounded to 2 decimals',
      (inner: InMemoryPayoutRunStore): Partial<PayoutRunStore> => ({
        summary: async (runId) => {
          const summary = await inner.summary(runId);
          for (const totals of Object.values(summary.totals.all)) {
            totals.amount = Math.round(totals.amount * 100) / 100;
          }
          return summary;
        },
      }),
      'currency of 3 decimals exactly',
    ],
  ] as const)('fails a store that %s', async (_, fault, expected) => {
    expect(await failedCases(brokenStore(fault))).toContainEqual(expect.stringContaining(expected));
  });
});

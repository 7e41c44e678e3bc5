import { InMemoryPayoutRunStore } from '@malipo/nestjs/runs';
import { Logger } from '@nestjs/common';
import {
  completedRun,
  eventually,
  type MpesaRunItem,
  PayoutRunsHarness,
  pausedRun,
} from './payout-runs-harness';

jest.setTimeout(120_000);

/**
 * A run the run store has forgotten (its retention here; a restart of the embedded store, or a
 * deleted run, alike), created again with the same id and items: the journal, which outlives the
 * store, says what the first run did with each item, and what it refused is not paid now (sandbox
 * over loopback, embedded engine).
 */
describe('a payout run created again once its store forgot it (e2e, sandbox over loopback)', () => {
  let harness: PayoutRunsHarness;

  beforeAll(async () => {
    harness = await PayoutRunsHarness.start({
      store: new InMemoryPayoutRunStore({ maxFinishedRuns: 1 }),
    });
  });
  afterAll(() => harness?.close());
  beforeEach(() => harness.sandbox.control.reset());

  /** Two one-item runs to completion: the store, which keeps one finished run, forgets the rest. */
  async function forgetEarlierRuns(prefix: string): Promise<void> {
    for (const runId of [`${prefix}-1`, `${prefix}-2`]) {
      await harness.runs.create({ runId, items: harness.mpesaItems(1) });
      await completedRun(harness.runs, runId);
    }
  }

  it('pays none of the items its cancel refused, and answers the paid ones from the journal', async () => {
    const { runs, sandbox } = harness;
    const items = harness.mpesaItems(12);
    await runs.create({ runId: 'bonus-q1', items, concurrency: 1, ratePerSecond: 5 });
    await eventually(async () => {
      const run = await runs.get('bonus-q1');
      return run.counts.succeeded + run.counts.failed >= 2 ? run : undefined;
    }, 'two items paid');
    await runs.cancel('bonus-q1');
    await eventually(async () => (await runs.get('bonus-q1')).finishedAt, 'the cancel to finish');
    const cancelled = (await runs.items('bonus-q1', { state: 'refused' })).items;
    expect(cancelled.length).toBeGreaterThan(0);
    const paidBefore = (await sandbox.control.transactions()).length;

    await forgetEarlierRuns('one-off');
    const again = await runs.create({ runId: 'bonus-q1', items, concurrency: 4 });
    expect(again.existing).toBe(false);
    const run = await completedRun(runs, 'bonus-q1');

    const ledger = await sandbox.control.transactions();
    // Only the two one-off runs paid anything since.
    expect(ledger).toHaveLength(paidBefore + 2);
    const keys = new Set(ledger.map((tx) => tx.idempotencyKey));
    for (const item of cancelled) expect(keys.has(item.idempotencyKey)).toBe(false);
    const refused = (await runs.items('bonus-q1', { state: 'refused' })).items;
    expect(refused.map((item) => item.itemId).sort()).toEqual(
      cancelled.map((item) => item.itemId).sort(),
    );
    for (const item of refused) expect(item.reason).toMatch(/run bonus-q1 was cancelled/);
    expect(run.counts.refused).toBe(cancelled.length);
  });

  it('pays no item the service refused again, though someone paid it in a new run meanwhile', async () => {
    const { runs, sandbox } = harness;
    const items = harness.mpesaItems(5);
    await sandbox.control.injectFault({ status: 400, count: 1, path: '/api/v2/withdrawal' });
    await runs.create({ runId: 'payroll-march', items, concurrency: 1 });
    await completedRun(runs, 'payroll-march');
    const [refused] = (await runs.items('payroll-march', { state: 'refused' })).items;
    expect(refused).toBeDefined();
    // As docs/payout-runs.md says of a refused item: paid in a new run, under a new key.
    const retried = items.find((item) => item.itemId === refused.itemId)!;
    await runs.create({ runId: 'payroll-march-refused', items: [retried] });
    await completedRun(runs, 'payroll-march-refused');
    await forgetEarlierRuns('settlement');

    const again = await runs.create({ runId: 'payroll-march', items });
    expect(again.existing).toBe(false);
    await completedRun(runs, 'payroll-march');

    const item = (await runs.items('payroll-march', { state: 'refused' })).items;
    expect(item.map((one) => one.itemId)).toEqual([refused.itemId]);
    expect(item[0].reason).toMatch(/^not sent again: .*HTTP 400/);
    const ledger = await sandbox.control.transactions();
    expect(ledger.filter((tx) => tx.idempotencyKey === refused.idempotencyKey)).toEqual([]);
    // The four paid the first time are answered from the journal: none paid twice. The rest are
    // the refused item's new run and the two runs that made the store forget.
    expect(new Set(ledger.map((tx) => tx.idempotencyKey)).size).toBe(ledger.length);
    expect(ledger).toHaveLength(4 + 1 + 2);
  });
  /** `items` paid in a new run (new keys), as the docs say of a refused item; then forgotten. */
  async function paidInANewRunThenForgotten(runId: string, items: MpesaRunItem[]) {
    await harness.runs.create({ runId: `${runId}-again`, items });
    await completedRun(harness.runs, `${runId}-again`);
    await forgetEarlierRuns(`${runId}-forget`);
  }

  /** `runId` created again with `items` once forgotten: none of `closed` goes out under its key. */
  async function createdAgainPaysNoneOf(runId: string, items: MpesaRunItem[], closed: string[]) {
    const again = await harness.runs.create({ runId, items });
    expect(again.existing).toBe(false);
    await completedRun(harness.runs, runId);
    const keys = new Set(
      (await harness.sandbox.control.transactions()).map((tx) => tx.idempotencyKey),
    );
    expect(closed.filter((key) => keys.has(key))).toEqual([]);
  }

  it('pays none of the items of a run cancelled while paused on a 401, whose keys the journal held refused already', async () => {
    jest.spyOn(Logger.prototype, 'error').mockImplementation(() => undefined);
    const { runs, sandbox } = harness;
    const items = harness.mpesaItems(6);
    await sandbox.control.injectFault({ status: 401, count: 1, path: '/api/v2/withdrawal' });
    await runs.create({ runId: 'rotated', items, concurrency: 1 });
    await pausedRun(runs, 'rotated');
    await runs.cancel('rotated');
    await eventually(async () => (await runs.get('rotated')).finishedAt, 'the cancel to finish');
    const cancelled = (await runs.items('rotated', { state: 'refused' })).items;
    expect(cancelled).toHaveLength(6);
    await forgetEarlierRuns('rotated-forget');

    await createdAgainPaysNoneOf(
      'rotated',
      items,
      cancelled.map((item) => item.idempotencyKey),
    );
  });

  it('pays no item again that the first run refused on HTTP 408, or that a person resolved refused', async () => {
    jest.spyOn(Logger.prototype, 'warn').mockImplementation(() => undefined);
    const { runs, sandbox, reconciler } = harness;
    const items = harness.mpesaItems(4);
    await sandbox.control.injectFault({ status: 408, count: 1, path: '/api/v2/withdrawal' });
    await sandbox.control.injectFault({ status: 503, count: 1, path: '/api/v2/withdrawal' });
    await runs.create({ runId: 'closed-by-hand', items, concurrency: 1 });
    const [timedOut] = await eventually(async () => {
      const found = (await runs.items('closed-by-hand', { state: 'refused' })).items;
      return found.length === 1 ? found : undefined;
    }, 'the item answered 408 refused');
    const [doubt] = await eventually(async () => {
      const found = (await runs.items('closed-by-hand', { state: 'in_doubt' })).items;
      return found.length === 1 ? found : undefined;
    }, 'the item answered 503 in doubt');
    await reconciler.resolve(doubt.idempotencyKey, { outcome: 'refused', note: 'ops: not there' });
    await completedRun(runs, 'closed-by-hand');
    const closed = [timedOut, doubt];
    await paidInANewRunThenForgotten(
      'closed-by-hand',
      items.filter((item) => closed.some((one) => one.itemId === item.itemId)),
    );

    await createdAgainPaysNoneOf(
      'closed-by-hand',
      items,
      closed.map((item) => item.idempotencyKey),
    );
  });
});

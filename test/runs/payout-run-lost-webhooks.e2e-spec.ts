import { mpesaItems } from './payout-run-items';
import { completedRun, PayoutRunsHarness } from './payout-runs-harness';

jest.setTimeout(60_000);

/**
 * Webhooks that never arrive (the callback URL unreachable, the service's retries spent): the run
 * looks each sent item up itself, once its webhook is overdue, and completes with no scheduled
 * reconcile() (docs/payout-runs.md, "Lost webhooks").
 */
describe('a payout run whose webhooks are lost (e2e, sandbox over loopback)', () => {
  let harness: PayoutRunsHarness;

  beforeAll(async () => {
    harness = await PayoutRunsHarness.start({ statusLookupAfterMs: 300 });
  });
  afterAll(() => harness?.close());

  it('settles every item by status look-up and completes, the ledger agreeing item by item', async () => {
    // Port 9 (discard) on loopback: nothing listens, every delivery is refused.
    const items = mpesaItems(20, 'http://127.0.0.1:9/webhooks/payments');
    const { runId } = await harness.runs.create({ runId: 'payroll-lost-webhooks', items });

    const run = await completedRun(
      harness.runs,
      runId,
      'the run to complete with no webhook',
      30_000,
    );

    expect(run.counts).toMatchObject({ succeeded: 18, failed: 2, accepted: 0, in_doubt: 0 });
    const ledger = await harness.sandbox.control.transactions();
    expect(ledger).toHaveLength(20);
    const page = await harness.runs.items(runId, { limit: 100 });
    for (const item of page.items) {
      const executed = ledger.find((tx) => tx.idempotencyKey === item.idempotencyKey);
      expect({ item: item.itemId, state: item.state }).toEqual({
        item: item.itemId,
        state: executed?.status === 'success' ? 'succeeded' : 'failed',
      });
      // Settled by the look-up: no webhook reached the app.
      expect(await harness.reconciler.get(item.idempotencyKey)).toMatchObject({
        settledBy: 'status',
      });
    }
  });
});

import { PaymentsReconciler } from '@malipo/nestjs';
import { completedRun } from '../payout-runs-harness';
import { mpesaItems } from '../payout-run-items';
import { expectLedgerAgrees, type RunsStack, startRunsStack } from './runs-kit';

jest.setTimeout(120_000);

/**
 * On BullMQ too, a run whose webhooks never arrive looks its items up itself once each is
 * overdue, and completes with no reconcile() (docs/payout-runs.md, "Lost webhooks").
 */
describe('a BullMQ payout run whose webhooks are lost (e2e, redis-server, sandbox)', () => {
  let stack: RunsStack;

  beforeAll(async () => {
    stack = await startRunsStack({ statusLookupAfterMs: 300 });
  });
  afterAll(() => stack?.close());

  it('settles every item by status look-up and completes, the ledger agreeing item by item', async () => {
    // Port 9 (discard) on loopback: nothing listens, every delivery is refused.
    const { instance, sandbox } = stack;
    const created = await instance.runs.create({
      items: mpesaItems(20, 'http://127.0.0.1:9/webhooks/payments'),
      concurrency: 4,
      ratePerSecond: 50,
    });
    const run = await completedRun(
      instance.runs,
      created.runId,
      'the run to complete with no webhook',
      60_000,
    );

    expect(run.counts).toMatchObject({ succeeded: 18, failed: 2, accepted: 0, in_doubt: 0 });
    const report = await instance.runs.report(run.runId, 'json');
    await expectLedgerAgrees(sandbox, report);
    const reconciler = instance.app.get(PaymentsReconciler);
    for (const item of report.items) {
      expect(await reconciler.get(item.idempotencyKey)).toMatchObject({ settledBy: 'status' });
    }
  });
});

import type { PayoutRun } from '@malipo/nestjs/runs';
import { completedRun, eventually, PayoutRunsHarness } from './payout-runs-harness';

/**
 * A 1,000-item run against the sandbox with 10% random faults and some lost responses: every item
 * ends final or in doubt with a reason, and the sandbox's ledger holds each item at most once and
 * every succeeded item exactly once.
 */
// 1,000 payouts, their webhooks and look-ups over loopback on a busy 2-core machine.
jest.setTimeout(180_000);

describe('a 1,000-item payout run through faults (e2e, sandbox over loopback)', () => {
  let harness: PayoutRunsHarness;

  beforeAll(async () => {
    // One retry: some items then exhaust it on a fault, so in-doubt items do happen.
    harness = await PayoutRunsHarness.start({ maxRetries: 1 });
  });
  afterAll(() => harness?.close());

  it('ends every item final or in doubt, each executed at most once, each succeeded exactly once', async () => {
    const { sandbox, runs } = harness;
    const items = harness.mpesaItems(1000);
    // Lost responses first: executed, then the answer replaced by a 502 (and its retry's too).
    await sandbox.control.injectFault({
      status: 502,
      afterExecute: true,
      count: 30,
      path: '/api/v2/withdrawal',
    });
    await sandbox.control.randomFaults({ rate: 0.1, seed: 23 });

    let pauses = 0;
    const created = await runs.create({
      name: 'payroll',
      items,
      concurrency: 16,
      ratePerSecond: 400,
    });
    expect(created.counts.queued + created.counts.sending).toBeGreaterThan(0);

    // Sending is over when nothing is queued or sending; then the faults stop so webhooks and the
    // reconciler's look-ups get through, as they would once a flaky network recovers.
    await eventually(
      async () => {
        const run = await runs.get(created.runId);
        // Sends in doubt in a row pause the run (pauseAfterInDoubtSends): resumed as an operator
        // would once the in-doubt items are looked at.
        if (run.state === 'paused') {
          pauses += 1;
          await runs.resume(created.runId);
          return undefined;
        }
        return run.counts.queued + run.counts.sending === 0 ? run : undefined;
      },
      'every item sent',
      150_000,
    );
    await sandbox.control.clearFaults();
    await harness.reconciler.reconcile();
    const run: PayoutRun = await completedRun(runs, created.runId, 'the run to complete', 60_000);

    const report = await runs.report(run.runId, 'json');
    expect(report.items).toHaveLength(1000);
    for (const item of report.items) {
      expect(['succeeded', 'failed', 'refused', 'in_doubt']).toContain(item.state);
      if (item.state !== 'succeeded') expect(item.reason ?? item.state).toBeTruthy();
      if (item.state === 'in_doubt' || item.state === 'refused') expect(item.reason).toBeTruthy();
    }
    const ledger = await sandbox.control.transactions();
    const executions = new Map<string, number>();
    for (const tx of ledger) {
      if (tx.idempotencyKey)
        executions.set(tx.idempotencyKey, (executions.get(tx.idempotencyKey) ?? 0) + 1);
    }
    for (const item of report.items) {
      const executed = executions.get(item.idempotencyKey) ?? 0;
      expect(executed).toBeLessThanOrEqual(1);
      if (item.state === 'succeeded' || item.state === 'failed') expect(executed).toBe(1);
      if (item.state === 'refused') expect(executed).toBe(0);
    }
    // The ledger agrees on outcomes: a succeeded item's transaction succeeded.
    const byKey = new Map(ledger.map((tx) => [tx.idempotencyKey, tx]));
    for (const item of report.items.filter((i) => i.state === 'succeeded')) {
      expect(byKey.get(item.idempotencyKey)?.status).toBe('success');
    }
    // Lost responses were settled by their webhooks, not sent again.
    expect(ledger).toHaveLength(executions.size);
    // A fault after a request left is not retried (the service may ignore Idempotency-Key): its
    // item stays in doubt when it did not execute, so fewer than the 90% without faults succeed.
    expect(run.counts.succeeded).toBeGreaterThan(700);
    expect(run.counts.failed).toBeGreaterThan(0);
    console.log(
      `run of 1,000 items with faults: ${JSON.stringify(run.counts)}; paused ${pauses} time(s) by sends in doubt in a row`,
    );
    const events = harness.events.filter((e) => e.event === 'completed');
    expect(events).toHaveLength(1);
  });
});

import { RedisServer } from '../../../libs/payments/spec-support/redis-server';
import { waitFor } from '../../../libs/payments/spec-support/wait-for';
import { completedRun } from '../payout-runs-harness';
import type { RunningSandbox } from '../../../apps/sandbox/src/sandbox';
import { startSandbox } from '../../../apps/sandbox/src/sandbox';
import { PaymentsReconciler } from '@malipo/nestjs';
import { mpesaItems } from '../payout-run-items';
import { type RunsInstance, startRunsInstance } from './payout-run-instance';
import { expectLedgerAgrees } from './runs-kit';

/**
 * A 1,000-item run on BullMQ (a real redis-server) against the sandbox with 10% random faults and
 * some lost responses: every item ends final or in doubt with a reason, and the sandbox's ledger
 * holds each item at most once and every succeeded item exactly once.
 */
// 1,000 payouts through BullMQ, their webhooks and look-ups, on a busy 2-core machine.
jest.setTimeout(240_000);

describe('a 1,000-item payout run on BullMQ through faults (e2e, redis-server, sandbox)', () => {
  let redis: RedisServer;
  let sandbox: RunningSandbox;
  let instance: RunsInstance;

  beforeAll(async () => {
    redis = await RedisServer.start();
    sandbox = await startSandbox({
      port: 0,
      logger: false,
      webhookDelayMs: 20,
      webhookRetryDelaysMs: [50, 200, 500],
    });
    // One retry: some items then exhaust it on a fault, so in-doubt items do happen.
    instance = await startRunsInstance({
      redisUrl: redis.url,
      sandboxUrl: sandbox.url,
      ...sandbox.credentials,
      maxRetries: 1,
    });
  });
  afterAll(async () => {
    await instance?.close();
    await sandbox?.close();
    await redis?.close();
  });

  it('ends every item final or in doubt, each executed at most once, each succeeded exactly once', async () => {
    const { runs } = instance;
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
      items: mpesaItems(1000, `${instance.url}/webhooks/payments`),
      concurrency: 16,
      ratePerSecond: 400,
    });
    await waitFor(
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
      180_000,
    );
    // The 30 answers lost in a row after executing paused the run at least once.
    expect(pauses).toBeGreaterThan(0);
    // The faults stop so webhooks and look-ups get through, as once a flaky network recovers.
    await sandbox.control.clearFaults();
    await instance.app.get(PaymentsReconciler).reconcile();
    const run = await completedRun(runs, created.runId, 'the run to complete', 60_000);

    const report = await runs.report(run.runId, 'json');
    expect(report.items).toHaveLength(1000);
    const executions = await expectLedgerAgrees(sandbox, report);
    // Lost responses were settled by their webhooks or look-ups, not sent again.
    expect((await sandbox.control.transactions()).length).toBe(executions.size);
    // A fault after a request left is not retried (the service may ignore Idempotency-Key): its
    // item stays in doubt when it did not execute, so fewer than the 90% without faults succeed.
    expect(run.counts.succeeded).toBeGreaterThan(700);
    expect(run.counts.failed).toBeGreaterThan(0);
    expect(instance.events.filter((event) => event.event === 'completed')).toHaveLength(1);
    console.log(`BullMQ run of 1,000 items with faults: ${JSON.stringify(run.counts)}`);
  });
});

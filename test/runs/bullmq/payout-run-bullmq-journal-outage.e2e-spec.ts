import { RedisPaymentsJournal } from '@malipo/nestjs/redis';
import { RedisServer } from '../../../libs/payments/spec-support/redis-server';
import type { RunningSandbox } from '../../../apps/sandbox/src/sandbox';
import { startSandbox } from '../../../apps/sandbox/src/sandbox';
import { journalThatGoesDown } from '../journal-that-goes-down';
import { completedRun, eventually } from '../payout-runs-harness';
import { mpesaItems } from '../payout-run-items';
import { type RunsInstance, startRunsInstance } from './payout-run-instance';
import { expectLedgerAgrees } from './runs-kit';

jest.setTimeout(120_000);

const GoesDownRedisJournal = journalThatGoesDown(RedisPaymentsJournal);

describe('a payout run on BullMQ whose journal goes down (e2e, redis-server, sandbox)', () => {
  let redis: RedisServer;
  let sandbox: RunningSandbox;
  let instance: RunsInstance;
  let journal: InstanceType<typeof GoesDownRedisJournal>;

  beforeAll(async () => {
    redis = await RedisServer.start();
    sandbox = await startSandbox({ port: 0, logger: false, webhookDelayMs: 20 });
    journal = new GoesDownRedisJournal({ url: redis.url, connection: { commandTimeout: 10_000 } });
    journal.goDownAfter(10);
    instance = await startRunsInstance({
      redisUrl: redis.url,
      sandboxUrl: sandbox.url,
      ...sandbox.credentials,
      journal,
    });
  });
  afterAll(async () => {
    await instance?.close();
    await sandbox?.close();
    await redis?.close();
  });

  it('pauses with the unsent items queued, none refused, and pays each once on resume', async () => {
    const created = await instance.runs.create({
      items: mpesaItems(30, `${instance.url}/webhooks/payments`),
      concurrency: 4,
      ratePerSecond: 100,
    });
    const paused = await eventually(async () => {
      const run = await instance.runs.get(created.runId);
      return run.state === 'paused' && run.counts.sending === 0 ? run : undefined;
    }, 'the run to pause itself');
    expect(journal.failedCreates).toBeGreaterThan(0);
    expect(paused.counts).toMatchObject({ refused: 0, in_doubt: 0 });
    expect(paused.counts.queued).toBeGreaterThan(0);
    expect(await sandbox.control.transactions()).toHaveLength(30 - paused.counts.queued);

    journal.up();
    await instance.runs.resume(created.runId);
    const run = await completedRun(instance.runs, created.runId);
    expect(run.counts).toMatchObject({ refused: 0, in_doubt: 0 });
    expect(run.counts.succeeded + run.counts.failed).toBe(30);
    const report = await instance.runs.report(created.runId, 'json');
    const executions = await expectLedgerAgrees(sandbox, report);
    expect([...executions.values()].every((count) => count === 1)).toBe(true);
    expect(executions.size).toBe(30);
  });
});

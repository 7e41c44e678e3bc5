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

describe('a payout run on BullMQ resumed by another instance after its journal went down (e2e)', () => {
  let redis: RedisServer;
  let sandbox: RunningSandbox;
  const instances: RunsInstance[] = [];

  beforeAll(async () => {
    redis = await RedisServer.start();
    sandbox = await startSandbox({ port: 0, logger: false, webhookDelayMs: 20 });
  });
  afterAll(async () => {
    for (const instance of instances) await instance.close();
    await sandbox?.close();
    await redis?.close();
  });

  it('pays each item once, none in doubt, where the first instance could not undo its late writes', async () => {
    const start = (journal: RedisPaymentsJournal) =>
      startRunsInstance({
        redisUrl: redis.url,
        sandboxUrl: sandbox.url,
        ...sandbox.credentials,
        journal,
        // Webhooks go to the first instance, closed by then: the second looks the items up.
        statusLookupAfterMs: 500,
      }).then((instance) => {
        instances.push(instance);
        return instance;
      });
    const down = new GoesDownRedisJournal({
      url: redis.url,
      connection: { commandTimeout: 10_000 },
    });
    down.goDownAfter(6);
    down.undosFail = true;
    const first = await start(down);
    const created = await first.runs.create({
      items: mpesaItems(20, `${first.url}/webhooks/payments`),
      concurrency: 4,
      ratePerSecond: 100,
    });
    const paused = await eventually(async () => {
      const run = await first.runs.get(created.runId);
      return run.state === 'paused' && run.counts.sending === 0 ? run : undefined;
    }, 'the run to pause itself');
    // A create that landed after its timeout, its undo failed: the journal holds a send that
    // never went out, and only the first instance knew that.
    expect(down.failedCreates).toBeGreaterThan(0);
    expect(paused.counts).toMatchObject({ refused: 0, in_doubt: 0 });
    await first.close();

    const second = await start(
      new RedisPaymentsJournal({ url: redis.url, connection: { commandTimeout: 10_000 } }),
    );
    await second.runs.resume(created.runId);
    const run = await completedRun(second.runs, created.runId);
    expect(run.counts).toMatchObject({ refused: 0, in_doubt: 0 });
    expect(run.counts.succeeded + run.counts.failed).toBe(20);
    const executions = await expectLedgerAgrees(
      sandbox,
      await second.runs.report(created.runId, 'json'),
    );
    expect(executions.size).toBe(20);
    expect([...executions.values()].every((count) => count === 1)).toBe(true);
  });
});

import type { PaymentsJournalEntry } from '@malipo/nestjs';
import { RedisPaymentsJournal } from '@malipo/nestjs/redis';
import { RedisServer } from '../../../libs/payments/spec-support/redis-server';
import type { RunningSandbox } from '../../../apps/sandbox/src/sandbox';
import { startSandbox } from '../../../apps/sandbox/src/sandbox';
import { completedRun, eventually } from '../payout-runs-harness';
import { mpesaItems } from '../payout-run-items';
import { type RunsInstance, startRunsInstance } from './payout-run-instance';
import { expectLedgerAgrees } from './runs-kit';

jest.setTimeout(120_000);

/**
 * A Redis journal whose creates fail after `upFor` of them (every other one, the first among
 * them, after the write landed, its answer lost: a command Redis ran after the client's timeout)
 * until `up()`.
 */
class JournalThatGoesDown extends RedisPaymentsJournal {
  failedCreates = 0;
  private down = false;

  constructor(
    url: string,
    private upFor: number,
  ) {
    super({ url, connection: { commandTimeout: 10_000 } });
  }

  up(): void {
    this.down = false;
    this.upFor = Infinity;
  }

  override async create(
    entry: PaymentsJournalEntry,
  ): Promise<{ created: boolean; entry: PaymentsJournalEntry }> {
    if (this.upFor-- <= 0) this.down = true;
    if (!this.down) return super.create(entry);
    this.failedCreates += 1;
    if (this.failedCreates % 2 === 1) await super.create(entry);
    throw new Error('Command timed out');
  }
}

describe('a payout run on BullMQ whose journal goes down (e2e, redis-server, sandbox)', () => {
  let redis: RedisServer;
  let sandbox: RunningSandbox;
  let instance: RunsInstance;
  let journal: JournalThatGoesDown;

  beforeAll(async () => {
    redis = await RedisServer.start();
    sandbox = await startSandbox({ port: 0, logger: false, webhookDelayMs: 20 });
    journal = new JournalThatGoesDown(redis.url, 10);
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

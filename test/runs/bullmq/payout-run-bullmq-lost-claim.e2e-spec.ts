import type { PayoutRunItemChange, PayoutRunItemState, PayoutRunState } from '@malipo/nestjs/runs';
import { RedisPayoutRunStore } from '@malipo/nestjs/runs/bullmq';
import { RedisServer } from '../../../libs/payments/spec-support/redis-server';
import type { RunningSandbox } from '../../../apps/sandbox/src/sandbox';
import { startSandbox } from '../../../apps/sandbox/src/sandbox';
import { completedRun } from '../payout-runs-harness';
import { mpesaItems } from '../payout-run-items';
import { type RunsInstance, startRunsInstance } from './payout-run-instance';
import { expectLedgerAgrees } from './runs-kit';

jest.setTimeout(120_000);

/**
 * A store whose write of `sending` for one item lands and then fails, as a command does that
 * Redis ran after the client's timeout (a stalled Redis): the job's attempt ends in the failure.
 */
class LosesOneSendingAnswer extends RedisPayoutRunStore {
  lost: string[] = [];

  constructor(
    url: string,
    private readonly itemId: string,
  ) {
    super({ url, connection: { commandTimeout: 10_000 } });
  }

  override async updateItem(
    runId: string,
    itemId: string,
    change: PayoutRunItemChange,
    from?: readonly PayoutRunItemState[],
    runStates?: readonly PayoutRunState[],
  ) {
    const changed = await super.updateItem(runId, itemId, change, from, runStates);
    if (change.state === 'sending' && itemId === this.itemId && this.lost.length === 0) {
      this.lost.push(itemId);
      throw new Error('Command timed out');
    }
    return changed;
  }
}

describe('a payout run on BullMQ whose sending write landed but failed (e2e, redis-server, sandbox)', () => {
  let redis: RedisServer;
  let sandbox: RunningSandbox;
  let instance: RunsInstance;
  let store: LosesOneSendingAnswer;

  beforeAll(async () => {
    redis = await RedisServer.start();
    sandbox = await startSandbox({ port: 0, logger: false, webhookDelayMs: 20 });
    store = new LosesOneSendingAnswer(redis.url, 'emp-2');
    instance = await startRunsInstance({
      redisUrl: redis.url,
      sandboxUrl: sandbox.url,
      ...sandbox.credentials,
      store,
    });
  });
  afterAll(async () => {
    await instance?.close();
    await sandbox?.close();
    await redis?.close();
  });

  it("sends the item on the job's next attempt, once: its own earlier attempt never sent it", async () => {
    const created = await instance.runs.create({
      items: mpesaItems(5, `${instance.url}/webhooks/payments`),
      concurrency: 2,
      ratePerSecond: 50,
    });
    const run = await completedRun(instance.runs, created.runId);
    expect(store.lost).toEqual(['emp-2']);
    expect(run.counts).toMatchObject({ succeeded: 5, in_doubt: 0, refused: 0 });
    const report = await instance.runs.report(created.runId, 'json');
    const executions = await expectLedgerAgrees(sandbox, report);
    const emp2 = report.items.find((item) => item.itemId === 'emp-2')!;
    expect(executions.get(emp2.idempotencyKey)).toBe(1);
  });
});

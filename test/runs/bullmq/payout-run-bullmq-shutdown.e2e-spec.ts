import { Test } from '@nestjs/testing';
import { Queue, Worker } from 'bullmq';
import { InMemoryPaymentsJournal } from '@malipo/nestjs';
import { PayoutRunsModule } from '@malipo/nestjs/runs';
import { PaymentsTestingModule } from '@malipo/nestjs/testing';
import { RedisServer } from '../../../libs/payments/spec-support/redis-server';
import { waitFor } from '../../../libs/payments/spec-support/wait-for';
import {
  engineContext,
  itemRecord,
  runRecord,
} from '../../../libs/payments/spec-support/payout-run-records';
import { RedisPayoutRunStore } from '../../../libs/payments/src/runs/bullmq/redis-payout-run.store';
import type { PayoutRunsPayments } from '../../../libs/payments/src/runs/payout-runs-payments';
import { bullmqPayoutRunEngine } from '../../../libs/payments/src/runs/bullmq/bullmq-payout-run-engine';
import type { RunningSandbox } from '../../../apps/sandbox/src/sandbox';
import { mpesaItems } from '../payout-run-items';
import { type RunsInstance, startRunsInstance } from './payout-run-instance';
import { startSandbox } from '../../../apps/sandbox/src/sandbox';

/**
 * An instance shutting down (a rolling deploy) with the BullMQ engine: what its last requests
 * create is paid by another instance, no worker outlives `app.close()`, and a Redis that does not
 * answer does not hold the shutdown. Outcomes are asserted, never durations.
 */
jest.setTimeout(120_000);

describe('the BullMQ engine as its app shuts down (e2e, redis-server, sandbox)', () => {
  let redis: RedisServer;
  let sandbox: RunningSandbox;
  const instances: RunsInstance[] = [];

  beforeEach(async () => {
    redis = await RedisServer.start();
    sandbox = await startSandbox({ port: 0, logger: false, webhookDelayMs: 20 });
  });
  afterEach(async () => {
    await Promise.all(
      instances.splice(0).map((instance) => instance.close().catch(() => undefined)),
    );
    await sandbox.close();
    await redis.close();
  });

  async function instance(options: { setupTimeoutMs?: number } = {}): Promise<RunsInstance> {
    const started = await startRunsInstance({
      redisUrl: redis.url,
      sandboxUrl: sandbox.url,
      ...sandbox.credentials,
      ...options,
    });
    instances.push(started);
    return started;
  }

  /** Starts a run of one item on `on`, and waits until the sandbox holds its payout. */
  async function heldSend(on: RunsInstance, holdMs: number): Promise<string> {
    await sandbox.control.injectFault({ delayMs: holdMs, count: 1, path: '/api/v2/withdrawal' });
    const { runId } = await on.runs.create({
      runId: 'held',
      items: mpesaItems(1, `${on.url}/webhooks/payments`),
    });
    await waitFor(
      async () => ((await on.runs.get(runId)).counts.sending === 1 ? true : undefined),
      'the held payout sent',
    );
    return runId;
  }

  it('has a run created while its instance shuts down paid by another instance', async () => {
    const closing = await instance();
    await heldSend(closing, 3_000);
    // The shutdown waits for the held payout; the app still takes requests meanwhile.
    const closed = closing.close();
    const created = await closing.runs.create({
      runId: 'during-shutdown',
      items: mpesaItems(3, `${closing.url}/webhooks/payments`),
    });
    await closed;

    // Its webhooks went to the closed instance: the other sends its items, which the ledger shows.
    const other = await instance();
    await waitFor(
      async () => {
        const { counts } = await other.runs.get(created.runId);
        return counts.accepted + counts.succeeded === 3 ? true : undefined;
      },
      'the run paid by the other instance',
      60_000,
    );
    const { items } = await other.runs.report(created.runId, 'json');
    const ledger = await sandbox.control.transactions();
    expect(
      items.map((item) => ledger.filter((tx) => tx.idempotencyKey === item.idempotencyKey).length),
    ).toEqual([1, 1, 1]);
  });

  it('closes, whatever Redis answers: a Redis stopped while a payout is in flight holds no shutdown', async () => {
    const closing = await instance({ setupTimeoutMs: 1_000 });
    await heldSend(closing, 2_000);
    await redis.stop();

    await closing.close();
    instances.splice(instances.indexOf(closing), 1);
  });
});

describe('the BullMQ engine closed while it attaches a run', () => {
  let redis: RedisServer;
  const stores: RedisPayoutRunStore[] = [];

  beforeAll(async () => {
    redis = await RedisServer.start();
  });
  afterAll(async () => {
    await Promise.all(stores.map((store) => store.close()));
    await redis.close();
  });

  it("refuses at boot the app's journal in memory: no other instance, nor a restart, would see what was sent", async () => {
    const store = new RedisPayoutRunStore({ url: redis.url });
    stores.push(store);
    const moduleRef = await Test.createTestingModule({
      imports: [
        PaymentsTestingModule.forRoot({
          journal: new InMemoryPaymentsJournal(),
          defaultUsername: 'shop',
        }),
        PayoutRunsModule.forRoot({ store, engine: bullmqPayoutRunEngine({ url: redis.url }) }),
      ],
    }).compile();
    const app = moduleRef.createNestApplication({ logger: false });
    try {
      await expect(app.init()).rejects.toMatchObject({
        name: 'PaymentsValidationError',
        errors: [{ field: 'journal', rule: 'isShared' }],
      });
    } finally {
      await app.close();
    }
  });

  it('makes no worker once closed, and its close() waits for the attach', async () => {
    const store = new RedisPayoutRunStore({ url: redis.url });
    stores.push(store);
    await store.createRun(runRecord('r'), [itemRecord('r', 'a')]);
    const workersRun = jest.spyOn(Worker.prototype, 'run');
    const engine = bullmqPayoutRunEngine({ url: redis.url })(
      engineContext(store, { accountDigest: () => 'account' } as unknown as PayoutRunsPayments),
    );
    // The attach's first command to BullMQ hangs until the test lets it go: close() comes
    // meanwhile.
    let letGo: () => void = () => undefined;
    const released = new Promise<void>((resolve) => (letGo = resolve));
    const setConcurrency = Queue.prototype.setGlobalConcurrency;
    const looked = jest
      .spyOn(Queue.prototype, 'setGlobalConcurrency')
      .mockImplementation(async function (this: Queue, concurrency: number) {
        await released;
        return setConcurrency.call(this, concurrency);
      });
    try {
      const started = engine.start('r');
      await waitFor(
        () => (looked.mock.calls.length > 0 ? true : undefined),
        'the attach under way',
      );
      let closeEnded = false;
      const closed = engine.close().then(() => (closeEnded = true));
      // close() waits for the attach, which waits for the test.
      await new Promise((resolve) => setTimeout(resolve, 200));
      expect(closeEnded).toBe(false);
      letGo();
      await started;
      await closed;
      expect(workersRun).not.toHaveBeenCalled();
    } finally {
      letGo();
      workersRun.mockRestore();
      looked.mockRestore();
      await engine.close();
    }
  });
});

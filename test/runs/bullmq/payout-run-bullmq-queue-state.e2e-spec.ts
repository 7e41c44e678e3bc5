import { Queue } from 'bullmq';
import { RedisPayoutRunStore } from '@malipo/nestjs/runs/bullmq';
import { RedisServer } from '../../../libs/payments/spec-support/redis-server';
import { waitFor } from '../../../libs/payments/spec-support/wait-for';
import type { RunningSandbox } from '../../../apps/sandbox/src/sandbox';
import { startSandbox } from '../../../apps/sandbox/src/sandbox';
import { mpesaItems } from '../payout-run-items';
import { type RunsInstance, startRunsInstance } from './payout-run-instance';

/**
 * The run's BullMQ queue follows the store, whatever order the steps of several instances land in:
 * what one step leaves wrong (a pause landing after a resume, a drain, a pause the store alone
 * recorded) the engine's next look puts right. Outcomes are asserted, never durations.
 */
jest.setTimeout(120_000);

describe("a payout run's BullMQ queue follows the stored run (e2e, redis-server, sandbox)", () => {
  let redis: RedisServer;
  let sandbox: RunningSandbox;
  let instance: RunsInstance;
  let store: RedisPayoutRunStore;
  const queues: Queue[] = [];

  beforeAll(async () => {
    redis = await RedisServer.start();
    sandbox = await startSandbox({ port: 0, logger: false, webhookDelayMs: 20 });
    instance = await startRunsInstance({
      redisUrl: redis.url,
      sandboxUrl: sandbox.url,
      ...sandbox.credentials,
    });
    store = new RedisPayoutRunStore({ url: redis.url });
  });
  afterAll(async () => {
    await Promise.all(queues.map((queue) => queue.close()));
    await store?.close();
    await instance?.close();
    await sandbox?.close();
    await redis?.close();
  });

  /** The run's queue, as BullMQ names it for the engine (its default prefix). */
  function queueOf(runId: string): Queue {
    const queue = new Queue(`run-${runId}`, {
      connection: { url: redis.url },
      prefix: 'malipo-runs',
    });
    queues.push(queue);
    return queue;
  }

  /** A run of `count` items, paused at once: nothing of it moves until the test says so. */
  async function pausedRun(count: number) {
    const created = await instance.runs.create({
      items: mpesaItems(count, `${instance.url}/webhooks/payments`),
      concurrency: 4,
      ratePerSecond: 50,
    });
    await instance.runs.pause(created.runId);
    return created.runId;
  }

  const notSent = async (runId: string) => {
    const { counts } = await instance.runs.get(runId);
    return counts.queued + counts.sending;
  };

  it('resumes a queue left paused while the store says running (a pause and a resume raced)', async () => {
    const runId = await pausedRun(30);
    const queue = queueOf(runId);
    expect(await queue.isPaused()).toBe(true);
    // Another instance's resume was stored, and this instance's pause of the queue landed last.
    expect(
      await store.updateRun(runId, { state: 'running' }, { states: ['paused'] }),
    ).toMatchObject({ state: 'running' });

    await waitFor(
      async () => ((await notSent(runId)) === 0 ? true : undefined),
      'every item of the run sent',
      90_000,
    );
    expect(await queue.isPaused()).toBe(false);
  });

  it('pauses the queue of a run the store alone paused (as after sends in doubt), so workers rest', async () => {
    const runId = await pausedRun(30);
    await instance.runs.resume(runId);
    // What the outage guard writes: the stored state, and nothing else.
    await store.updateRun(runId, { state: 'paused' }, { states: ['running'] });
    const queue = queueOf(runId);

    await waitFor(
      async () => ((await queue.isPaused()) ? true : undefined),
      "the run's queue paused",
      60_000,
    );
    await instance.runs.resume(runId);
    await waitFor(
      async () => ((await notSent(runId)) === 0 ? true : undefined),
      'every item of the run sent after resume()',
      90_000,
    );
  });

  it('cancel() takes over an item a dead worker left sending: in doubt with a reason, never sent', async () => {
    // An engine that looks at its runs once in ten minutes: only cancel() itself can do it here.
    const own = await RedisServer.start();
    const slow = await startRunsInstance({
      redisUrl: own.url,
      sandboxUrl: sandbox.url,
      ...sandbox.credentials,
      settlementPollMs: 600_000,
    });
    const ownStore = new RedisPayoutRunStore({ url: own.url });
    try {
      await cancelTakesOver(slow, ownStore, sandbox);
    } finally {
      await ownStore.close();
      await slow.close();
      await own.close();
    }
  });
});

/**
 * A run of `instance` paused, one item written `sending` as by a worker that died, then cancelled:
 * that item is taken over (in doubt, never sent), and nothing is left to send.
 */
async function cancelTakesOver(
  instance: RunsInstance,
  store: RedisPayoutRunStore,
  sandbox: RunningSandbox,
): Promise<void> {
  const created = await instance.runs.create({
    items: mpesaItems(20, `${instance.url}/webhooks/payments`),
    concurrency: 4,
    ratePerSecond: 50,
  });
  const { runId } = created;
  await instance.runs.pause(runId);
  // A worker wrote `sending` for emp-3 and died before its send; BullMQ put its job back.
  expect(
    await store.updateItem(runId, 'emp-3', { state: 'sending', sends: 1 }, ['queued']),
  ).toBeDefined();

  await instance.runs.cancel(runId);

  const item = await waitFor(
    async () => {
      const { items } = await instance.runs.items(runId, { state: 'in_doubt' });
      return items.find((found) => found.itemId === 'emp-3');
    },
    'the item left sending taken over',
    60_000,
  );
  expect(item.reason).toContain('its worker stopped while sending it');
  // Nothing is left to send or take over (items sent before the pause settle by their webhooks).
  const run = await instance.runs.get(runId);
  expect(run.state).toBe('cancelled');
  expect(run.counts.sending + run.counts.queued).toBe(0);
  // Taken over, never sent: the service has no payout under its key.
  const ledger = await sandbox.control.transactions();
  expect(ledger.filter((tx) => tx.idempotencyKey === item.idempotencyKey)).toEqual([]);
}

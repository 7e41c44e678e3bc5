import { inspect } from 'node:util';
import { Logger } from '@nestjs/common';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { PaymentsJournalError, PaymentsReconciler, PayoutsService } from '@malipo/nestjs';
import type { MpesaPayoutRequest } from '@malipo/nestjs';
import { PayoutRunCreationError } from '@malipo/nestjs/runs';
import { RedisPayoutRunStore } from '@malipo/nestjs/runs/bullmq';
import { PAYOUT_RUN_ENGINE } from '../../../libs/payments/src/runs/payout-runs.constants';
import type { PayoutRunEngine } from '../../../libs/payments/src/runs/payout-run-engine';
import { RedisServer } from '../../../libs/payments/spec-support/redis-server';
import { waitFor } from '../../../libs/payments/spec-support/wait-for';
import { completedRun } from '../payout-runs-harness';
import type { RunningSandbox } from '../../../apps/sandbox/src/sandbox';
import { mpesaItems } from '../payout-run-items';
import { type RunsInstance, startRunsInstance } from './payout-run-instance';
import { type RunsStack, startRunsStack } from './runs-kit';

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

  let stack: RunsStack;

  beforeAll(async () => {
    stack = await startRunsStack();
    ({ redis, sandbox, instance } = stack);
    store = new RedisPayoutRunStore({ url: redis.url });
  });
  afterAll(async () => {
    await Promise.all(queues.map((queue) => queue.close()));
    await store?.close();
    await stack?.close();
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

  it('sends a run whose id holds `:`, which BullMQ refuses in a queue name, and holds up no other run', async () => {
    const colon = await instance.runs.create({
      runId: 'payroll:2026-03',
      items: mpesaItems(5, `${instance.url}/webhooks/payments`),
      ratePerSecond: 50,
    });
    const beside = await instance.runs.create({
      items: mpesaItems(5, `${instance.url}/webhooks/payments`).map((item) => ({
        ...item,
        itemId: `beside-${item.itemId}`,
        request: { ...item.request, amount: item.request.amount + 1 },
      })),
      ratePerSecond: 50,
    });
    await waitFor(
      async () =>
        (await notSent(colon.runId)) === 0 && (await notSent(beside.runId)) === 0
          ? true
          : undefined,
      'both runs sent',
      60_000,
    );
    const sent = (await sandbox.control.requests()).filter((r) => r.method === 'POST');
    expect(sent.length).toBeGreaterThanOrEqual(10);
  });

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

  it('removes the queue of a run deleted while in progress, held by an instance, even when the first removal fails', async () => {
    const client = new Redis(redis.url);
    // Redis fails the engine's first removal of a queue: the next tick must remove it again.
    const obliterate = jest
      .spyOn(Queue.prototype, 'obliterate')
      .mockRejectedValueOnce(new Error('Connection is closed.'));
    try {
      const runId = await pausedRun(20);
      expect((await queueLeftOf(client, runId)).queueKeys).toBeGreaterThan(20);
      expect(await store.deleteRun(runId)).toBe(true);
      await waitFor(queueGone(client, runId), "the held run's queue removed", 60_000);
      expect(obliterate.mock.calls.length).toBeGreaterThanOrEqual(2);
    } finally {
      obliterate.mockRestore();
      await client.quit();
    }
  });

  it.each([
    ['', false],
    [', even when its read after the removal fails', true],
  ])(
    'sends a run deleted in progress and created again while the engine removed the deleted one%s',
    async (_, readFails) => {
      const input = {
        runId: readFails ? 'deleted-and-again-unread' : 'deleted-and-again',
        items: mpesaItems(20, `${instance.url}/webhooks/payments`),
        concurrency: 4,
        ratePerSecond: 50,
      };
      const runId = (await instance.runs.create(input)).runId;
      await instance.runs.pause(runId);
      // The engine read the run gone and removes its queue: the run is created again in between,
      // its start listing it before the removal ends.
      let again: Promise<unknown> | undefined;
      const removeQueue = Queue.prototype.obliterate;
      const obliterate = jest
        .spyOn(Queue.prototype, 'obliterate')
        .mockImplementation(async function (this: Queue, options) {
          if (this.name === `run-${runId}`) again ??= instance.runs.create(input);
          await again;
          return removeQueue.call(this, options);
        });
      // The store fails the engine's one read of the run after it took the run off the list.
      let unlisted = false;
      let readFailed = false;
      const unlist = Redis.prototype.srem;
      const srem = jest.spyOn(Redis.prototype, 'srem').mockImplementation(function (
        this: Redis,
        ...args: Parameters<Redis['srem']>
      ) {
        const removal = unlist.apply(this, args);
        if (readFails && (args as unknown[])[1] === runId)
          void removal.then(() => (unlisted = true));
        return removal;
      });
      const read = RedisPayoutRunStore.prototype.getRun;
      const getRun = jest
        .spyOn(RedisPayoutRunStore.prototype, 'getRun')
        .mockImplementation(function (this: RedisPayoutRunStore, id: string) {
          if (!unlisted || id !== runId) return read.call(this, id);
          unlisted = false;
          readFailed = true;
          return Promise.reject(new Error('Command timed out'));
        });
      let completed;
      try {
        expect(await store.deleteRun(runId)).toBe(true);
        await waitFor(async () => again, 'the run created again');
        expect(await again).toMatchObject({ existing: false });
        // Listed, and its items sent to the end: never left running with its queue removed.
        completed = await waitFor(
          async () => {
            const run = await instance.runs.get(runId);
            return run.state === 'completed' ? run : undefined;
          },
          'the run created again completed',
          90_000,
        );
      } finally {
        obliterate.mockRestore();
        srem.mockRestore();
        getRun.mockRestore();
      }
      expect(readFailed).toBe(readFails);
      expect(completed.counts).toMatchObject({ queued: 0, sending: 0, accepted: 0 });
    },
  );

  it('removes the queue of a run deleted while no instance held it, once one starts', async () => {
    // A Redis of its own: no other instance takes the run up meanwhile.
    const own = await RedisServer.start();
    const client = new Redis(own.url);
    const ownStore = new RedisPayoutRunStore({ url: own.url });
    const start = (settlementPollMs?: number) =>
      startRunsInstance({
        redisUrl: own.url,
        sandboxUrl: sandbox.url,
        ...sandbox.credentials,
        ...(settlementPollMs === undefined ? {} : { settlementPollMs }),
      });
    try {
      const first = await start(600_000);
      let runId: string;
      try {
        const created = await first.runs.create({
          items: mpesaItems(20, `${first.url}/webhooks/payments`),
          concurrency: 4,
          ratePerSecond: 50,
        });
        runId = created.runId;
        await first.runs.pause(runId);
      } finally {
        await first.close();
      }
      expect(await queueLeftOf(client, runId)).toMatchObject({ listed: 1 });
      expect(await ownStore.deleteRun(runId)).toBe(true);
      const warnings = jest.spyOn(Logger.prototype, 'warn');
      const next = await start();
      try {
        await waitFor(queueGone(client, runId), "the deleted run's queue removed", 60_000);
        // A run gone from the store is said, deleted or lost.
        expect(warnings).toHaveBeenCalledWith(
          expect.stringContaining(
            `Payout run ${runId} is listed in progress but gone from the store`,
          ),
        );
      } finally {
        warnings.mockRestore();
        await next.close();
      }
    } finally {
      await ownStore.close();
      await client.quit();
      await own.close();
    }
  });

  it('writes no queue again for a run another instance retired meanwhile (a late pause or resume)', async () => {
    const own = await RedisServer.start();
    const client = new Redis(own.url);
    const late = await startRunsInstance({
      redisUrl: own.url,
      sandboxUrl: sandbox.url,
      ...sandbox.credentials,
    });
    try {
      const { runId } = await late.runs.create({
        items: mpesaItems(5, `${late.url}/webhooks/payments`),
        concurrency: 4,
        ratePerSecond: 50,
      });
      await completedRun(late.runs, runId, 'the run completed', 60_000);
      await waitFor(queueGone(client, runId), "the completed run's queue removed", 60_000);
      // A pause that read the run running just before it was retired reaches the engine now.
      const engine = late.app.get<PayoutRunEngine>(PAYOUT_RUN_ENGINE);
      await engine.pause(runId);
      await engine.resume(runId);
      expect(await queueLeftOf(client, runId)).toEqual({ queueKeys: 0, listed: 0 });
    } finally {
      await late.close();
      await client.quit();
      await own.close();
    }
  });

  it("fails create() when BullMQ's connection does not answer, never with the Redis password, and pays everyone once when it does", async () => {
    const own = await RedisServer.start();
    const bounded = await startRunsInstance({
      redisUrl: own.url,
      sandboxUrl: sandbox.url,
      ...sandbox.credentials,
      setupTimeoutMs: 500,
    });
    // BullMQ's connection hangs for the first run's queue (a Redis it cannot use) and is refused
    // for the second's, as after a password rotation: ioredis puts the AUTH arguments on that error.
    const refused = Object.assign(new Error('WRONGPASS invalid username-password pair'), {
      command: { name: 'auth', args: ['default', 'rotated-Redis-pw-73'] },
    });
    // By queue, not by call order: the engine's rounds may take the first run up again between
    // the two create() calls, and must meet the same hanging connection then.
    const answerOf = new Map([
      ['run-bullmq-hangs', 'hang'],
      ['run-bullmq-refused', 'refuse'],
    ]);
    const original = Queue.prototype.setGlobalConcurrency;
    const setup = jest.spyOn(Queue.prototype, 'setGlobalConcurrency').mockImplementation(function (
      this: Queue,
      concurrency: number,
    ) {
      const answer = answerOf.get(this.name);
      if (answer === 'hang') return new Promise<never>(() => undefined);
      if (answer === 'refuse') return Promise.reject(refused);
      return original.call(this, concurrency);
    });
    try {
      const create = (runId: string) =>
        bounded.runs
          .create({
            runId,
            items: mpesaItems(5, `${bounded.url}/webhooks/payments`),
            concurrency: 4,
            ratePerSecond: 50,
          })
          .catch((error: unknown) => error);
      const hung = await create('bullmq-hangs');
      expect(hung).toBeInstanceOf(PayoutRunCreationError);
      expect(hung).toMatchObject({ mayHaveExecuted: true });
      expect(String((hung as Error).cause)).toContain('BullMQ did not answer within 500 ms');

      const denied = await create('bullmq-refused');
      expect(denied).toBeInstanceOf(PayoutRunCreationError);
      expect(inspect(denied, { depth: 10 })).not.toContain('rotated-Redis-pw-73');
      expect(inspect(denied, { depth: 10 })).toContain('WRONGPASS');
      answerOf.clear();

      // BullMQ answers again: the engine's next rounds take both runs up, each item paid once.
      for (const runId of ['bullmq-hangs', 'bullmq-refused']) {
        await completedRun(bounded.runs, runId, `run ${runId} completed`, 60_000);
      }
      const ledger = await sandbox.control.transactions();
      const keys = ledger.map((tx) => tx.idempotencyKey);
      expect(new Set(keys).size).toBe(keys.length);
      expect(setup.mock.calls.length).toBeGreaterThanOrEqual(4);
    } finally {
      setup.mockRestore();
      await bounded.close();
      await own.close();
    }
  });

  it('finishes a run whose create() failed before its start listed it: cancel() refuses its items, resume() pays them', async () => {
    const own = await RedisServer.start();
    const admin = new Redis(own.url);
    const late = await startRunsInstance({
      redisUrl: own.url,
      sandboxUrl: sandbox.url,
      ...sandbox.credentials,
    });
    try {
      /** create() with Redis refusing SADD: the run is stored, and listed in no engine's runs. */
      const unlisted = async (runId: string) => {
        await admin.call('ACL', 'SETUSER', 'default', '-sadd');
        const failed: unknown = await late.runs
          .create({
            runId,
            items: mpesaItems(4, `${late.url}/webhooks/payments`),
            concurrency: 2,
            ratePerSecond: 50,
          })
          .catch((error: unknown) => error)
          .finally(() => admin.call('ACL', 'SETUSER', 'default', '+sadd'));
        expect(failed).toBeInstanceOf(PayoutRunCreationError);
        expect(await late.runs.get(runId)).toMatchObject({ state: 'running' });
      };
      const finished = (runId: string) =>
        waitFor(
          async () => {
            const run = await late.runs.get(runId);
            return run.finishedAt === undefined ? undefined : run;
          },
          `run ${runId} finished`,
          60_000,
        );

      await unlisted('create-failed-cancelled');
      await late.runs.cancel('create-failed-cancelled');
      expect((await finished('create-failed-cancelled')).counts).toMatchObject({
        queued: 0,
        sending: 0,
        refused: 4,
      });

      await unlisted('create-failed-resumed');
      await late.runs.pause('create-failed-resumed');
      await late.runs.resume('create-failed-resumed');
      const resumed = await finished('create-failed-resumed');
      expect(resumed.counts.queued + resumed.counts.sending + resumed.counts.refused).toBe(0);

      // In the ledger: each item of the resumed run once, none of the cancelled one.
      const paid = new Set((await sandbox.control.transactions()).map((tx) => tx.idempotencyKey));
      const keysOf = (runId: string) =>
        ['emp-0', 'emp-1', 'emp-2', 'emp-3'].map((itemId) => late.runs.itemKey(runId, itemId));
      expect(keysOf('create-failed-resumed').filter((key) => paid.has(key))).toHaveLength(4);
      expect(keysOf('create-failed-cancelled').filter((key) => paid.has(key))).toHaveLength(0);
    } finally {
      await late.close();
      await admin.quit();
      await own.close();
    }
  });

  it('holds the key of an item taken over before its worker journaled it: that worker cannot send it, before or after a person settles it', async () => {
    const runId = await pausedRun(10);
    // A worker wrote `sending` for emp-3 and stopped before it journaled the send (it may only
    // have stalled); BullMQ gives its job to another worker.
    const taken = await store.updateItem(runId, 'emp-3', { state: 'sending', sends: 1 }, [
      'queued',
    ]);
    expect(taken).toBeDefined();
    await instance.runs.resume(runId);
    const item = await waitFor(
      async () => {
        const { items } = await instance.runs.items(runId, { state: 'in_doubt' });
        return items.find((found) => found.itemId === 'emp-3');
      },
      'the item taken over',
      60_000,
    );
    expect(item.reason).toContain('the journal holds the key');
    const reconciler = instance.app.get(PaymentsReconciler);
    expect(await reconciler.get(item.idempotencyKey)).toMatchObject({ state: 'in_doubt' });

    // The stalled worker wakes up and sends: the journal stops it before the wire.
    const payouts = instance.app.get(PayoutsService);
    const stalled: unknown = await payouts
      .mpesa(taken!.request as MpesaPayoutRequest, { idempotencyKey: item.idempotencyKey })
      .catch((error: unknown) => error);
    expect(stalled).toBeInstanceOf(PaymentsJournalError);
    expect(stalled).toMatchObject({ code: 'IN_DOUBT' });

    // A person finds it never left and says so: the item is settled, refused.
    await reconciler.resolve(item.idempotencyKey, {
      outcome: 'refused',
      note: 'not in the ledger; ops ticket 42',
    });
    await waitFor(
      async () => {
        const { items } = await instance.runs.items(runId, { state: 'refused' });
        return items.find((found) => found.itemId === 'emp-3');
      },
      'the item settled refused',
      60_000,
    );
    // The stalled worker wakes up again after the person's answer: the key stays closed.
    const late: unknown = await payouts
      .mpesa(taken!.request as MpesaPayoutRequest, { idempotencyKey: item.idempotencyKey })
      .catch((error: unknown) => error);
    expect(late).toBeInstanceOf(PaymentsJournalError);
    expect(late).toMatchObject({ code: 'ALREADY_REFUSED', mayHaveExecuted: false });
    const ledger = await sandbox.control.transactions();
    expect(ledger.filter((tx) => tx.idempotencyKey === item.idempotencyKey)).toEqual([]);
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

/** BullMQ's keys of the run's queue, and whether the run is listed in progress (1) or not (0). */
async function queueLeftOf(client: Redis, runId: string) {
  return {
    queueKeys: (await client.keys(`malipo-runs:run-${runId}:*`)).length,
    listed: await client.sismember('malipo-runs:active', runId),
  };
}

/** For `waitFor`: true once nothing of the run's queue is left and it is no longer listed. */
function queueGone(client: Redis, runId: string) {
  return async () => {
    const left = await queueLeftOf(client, runId);
    return left.queueKeys === 0 && left.listed === 0 ? true : undefined;
  };
}

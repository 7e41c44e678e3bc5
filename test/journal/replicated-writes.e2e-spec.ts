import { Redis } from 'ioredis';
import { startSandbox } from '../../apps/sandbox/src/sandbox';
import type { RunningSandbox } from '../../apps/sandbox/src/sandbox';
import { RedisServer } from '../../libs/payments/spec-support/redis-server';
import { waitFor } from '../../libs/payments/spec-support/wait-for';
import { RedisPayoutRunStore } from '../../libs/payments/src/runs/bullmq';
import { RedisPaymentsJournal } from '../../libs/payments/src/redis';
import {
  callMoney,
  journalRejection,
  type JournalApp,
  postsOf,
  startJournalApp,
} from './journal-kit';

/**
 * `waitForReplicas` on a real primary and replica: a failover keeps only what the replica got,
 * so nothing may be sent on a write-ahead write the replica has not acknowledged.
 */
describe('the payments journal and the run store on Redis with waitForReplicas', () => {
  let primary: RedisServer;
  let replica: RedisServer;
  /** A client of the replica's, to read what a failover would keep. */
  let onReplica: Redis;
  let sandbox: RunningSandbox;
  let instance: JournalApp;
  /** Waits long enough for a busy machine; a frozen replica still fails it. */
  const replication = { waitForReplicas: 1, replicaTimeoutMs: 3000 };

  beforeAll(async () => {
    [primary, replica] = await Promise.all([RedisServer.start(), RedisServer.start()]);
    onReplica = new Redis(replica.url);
    await onReplica.replicaof('127.0.0.1', String(primary.port));
    await waitFor(
      async () => /master_link_status:up/.test(await onReplica.info('replication')) || undefined,
      'the replica to follow the primary',
      30_000,
    );
    sandbox = await startSandbox({ port: 0, logger: false });
    instance = await startJournalApp({
      sandbox,
      redisUrl: primary.url,
      journal: { connection: { commandTimeout: 10_000 }, ...replication },
    });
  });
  afterAll(async () => {
    replica?.thaw();
    await instance?.close();
    await sandbox?.close();
    onReplica?.disconnect();
    await Promise.all([primary?.close(), replica?.close()]);
  });

  const payout = (idempotencyKey: string) =>
    callMoney(
      instance.client,
      'payouts.mpesa',
      { callbackUrl: `${instance.webhookUrl}` },
      { idempotencyKey },
    );

  it('sends a call once the replica holds its intent, and refuses it unsent when no replica acknowledges', async () => {
    await payout('replicated-1');

    // What a failover to the replica would keep: the entry, written before the send.
    const replicaJournal = new RedisPaymentsJournal({ url: replica.url });
    try {
      expect(await replicaJournal.get('replicated-1')).toMatchObject({
        idempotencyKey: 'replicated-1',
      });
    } finally {
      await replicaJournal.close();
    }
    expect(await postsOf(sandbox, 'replicated-1')).toHaveLength(1);

    replica.freeze();
    try {
      const error = await journalRejection(payout('replicated-2'));

      expect(error).toMatchObject({ code: 'JOURNAL_UNAVAILABLE', mayHaveExecuted: false });
      expect(String((error.cause as Error | undefined)?.message)).toMatch(
        /0 of 1 replica\(s\) acknowledged the write within 3000 ms/,
      );
      expect(await postsOf(sandbox, 'replicated-2')).toEqual([]);
    } finally {
      replica.thaw();
    }
  });

  it("waits for the replica after a run store's writes, and rejects when none acknowledges", async () => {
    const store = new RedisPayoutRunStore({
      url: primary.url,
      connection: { commandTimeout: 10_000 },
      ...replication,
    });
    try {
      // No such item: nothing changes, and the write still waits (and counts) as any other.
      await expect(store.updateItem('run-1', 'item-1', { state: 'sending' })).resolves.toBe(
        undefined,
      );
      replica.freeze();
      await expect(store.updateItem('run-1', 'item-1', { state: 'sending' })).rejects.toThrow(
        /RedisPayoutRunStore: 0 of 1 replica\(s\) acknowledged the write/,
      );
    } finally {
      replica.thaw();
      await store.close();
    }
  });

  it.each([
    [{ waitForReplicas: -1 }, /waitForReplicas must be a whole number, 0 or more/],
    [{ waitForReplicas: 1.5 }, /waitForReplicas must be a whole number, 0 or more/],
    [{ waitForReplicas: 1, replicaTimeoutMs: 0 }, /replicaTimeoutMs must be a positive integer/],
  ])('refuses %j at construction, before it connects', (options, message) => {
    // A connection made before the refusal would be left open, and keep the process alive.
    expect(() => new RedisPaymentsJournal({ url: primary.url, ...options })).toThrow(message);
    expect(() => new RedisPayoutRunStore({ url: primary.url, ...options })).toThrow(message);
  });
});

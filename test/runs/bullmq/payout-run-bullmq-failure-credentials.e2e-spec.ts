import { Logger } from '@nestjs/common';
import { Redis } from 'ioredis';
import { RedisPayoutRunStore } from '@malipo/nestjs/runs/bullmq';
import { RedisServer } from '../../../libs/payments/spec-support/redis-server';
import { waitFor } from '../../../libs/payments/spec-support/wait-for';
import { startSandbox, type RunningSandbox } from '../../../apps/sandbox/src/sandbox';
import { mpesaItems } from '../payout-run-items';
import { type RunsInstance, startRunsInstance } from './payout-run-instance';

/**
 * BullMQ keeps what a job's handler threw (the job's `failedReason` and `stacktrace`, the events
 * stream) and the engine logs it: a failure whose text holds the account's password (a store of
 * the team's own that names its connection, an error that quotes an answer) is kept and logged
 * redacted.
 */
jest.setTimeout(120_000);

/** Every value under every key of the Redis at `url`, as text. */
async function dump(url: string): Promise<string> {
  const client = new Redis(url);
  const out: string[] = [];
  try {
    for (const key of await client.keys('*')) {
      const type = await client.type(key);
      const value =
        type === 'hash'
          ? await client.hgetall(key)
          : type === 'stream'
            ? await client.xrange(key, '-', '+')
            : type === 'string'
              ? await client.get(key)
              : type === 'list'
                ? await client.lrange(key, 0, -1)
                : type === 'zset'
                  ? await client.zrange(key, '0', '-1')
                  : await client.smembers(key);
      out.push(`${key} ${JSON.stringify(value)}`);
    }
  } finally {
    client.disconnect();
  }
  return out.join('\n');
}

describe('a payout-run job that throws keeps no credential in BullMQ or the logs (e2e)', () => {
  let redis: RedisServer;
  let sandbox: RunningSandbox;
  let instance: RunsInstance | undefined;

  beforeAll(async () => {
    redis = await RedisServer.start();
    sandbox = await startSandbox({ port: 0, logger: false, webhookDelayMs: 20 });
  });
  afterAll(async () => {
    await instance?.close();
    await sandbox?.close();
    await redis?.close();
  });

  it("redacts the account's password from a failure's failedReason, stacktrace, event and log line", async () => {
    const { apiPassword } = sandbox.credentials;
    const warnings = jest.spyOn(Logger.prototype, 'warn');
    const store = new RedisPayoutRunStore({ url: redis.url });
    // The team's store fails one item's moves, naming what it was given, until told.
    let failing = true;
    const updateItem = store.updateItem.bind(store);
    jest.spyOn(store, 'updateItem').mockImplementation((runId, itemId, ...rest) => {
      if (failing && itemId === 'emp-0') {
        return Promise.reject(new Error(`store failed (client of ${apiPassword})`));
      }
      return updateItem(runId, itemId, ...rest);
    });
    try {
      instance = await startRunsInstance({
        redisUrl: redis.url,
        sandboxUrl: sandbox.url,
        ...sandbox.credentials,
        store,
      });
      const { runId } = await instance.runs.create({
        items: mpesaItems(3, `${instance.url}/webhooks/payments`),
        ratePerSecond: 50,
      });
      // What BullMQ keeps of the failure while the run is in progress (its keys go at the end).
      const kept = await waitFor(async () => {
        const text = await dump(redis.url);
        return text.includes('failedReason') ? text : undefined;
      }, "BullMQ's record of the failure");
      const logged = warnings.mock.calls.map(([message]) => String(message)).join('\n');
      expect(logged).toContain('will be tried again (store failed (client of [REDACTED]))');
      expect(kept).toContain('store failed (client of [REDACTED])');
      for (const text of [kept, logged]) {
        expect(text).not.toContain(apiPassword);
        expect(text).not.toContain(Buffer.from(apiPassword).toString('base64').replace(/=+$/, ''));
      }
      failing = false;
      await waitFor(
        async () => {
          const run = await instance?.runs.get(runId);
          return run && run.counts.queued + run.counts.sending === 0 ? run : undefined;
        },
        'every item sent once the store mended',
        90_000,
      );
    } finally {
      warnings.mockRestore();
    }
  });
});

import { Logger } from '@nestjs/common';
import { PayoutRunConflictError, PayoutRunNotFoundError } from '@malipo/nestjs/runs';
import { RedisPayoutRunStore } from '@malipo/nestjs/runs/bullmq';
import { waitFor } from '../../../libs/payments/spec-support/wait-for';
import { mpesaItems } from '../payout-run-items';
import { type RunsInstance, startRunsInstance } from './payout-run-instance';
import { type RunsStack, startRunsStack } from './runs-kit';

/**
 * Two apps of two payment accounts at the service share one Redis, with the default prefixes: the
 * run store, the engine's list of runs in progress and the journal. Each app's engine works the
 * runs it finds listed, so without a mark of the account one app paid the other's run from its own
 * account. A run is its creator's account's alone: sent, followed, read and steered only there.
 */
jest.setTimeout(120_000);

describe("a payout run is paid only through its own account's app (e2e, redis-server, sandbox)", () => {
  let stack: RunsStack;
  /** An app of the sandbox's second account, `beta`, on the same Redis. */
  let other: RunsInstance;
  let store: RedisPayoutRunStore;
  let errors: jest.SpyInstance;

  beforeAll(async () => {
    errors = jest.spyOn(Logger.prototype, 'error');
    stack = await startRunsStack();
    const beta = stack.sandbox.accounts[1];
    other = await startRunsInstance({
      redisUrl: stack.redis.url,
      sandboxUrl: stack.sandbox.url,
      apiUsername: beta.apiUsername,
      apiPassword: beta.apiPassword,
      defaultUsername: beta.username,
    });
    store = new RedisPayoutRunStore({ url: stack.redis.url });
  });
  afterAll(async () => {
    await store?.close();
    await other?.close();
    await stack?.close();
    errors?.mockRestore();
  });

  /** The accounts that paid the items of `instance`'s run `runId`, as the sandbox's ledger says. */
  async function payersOf(instance: RunsInstance, runId: string): Promise<Map<string, number>> {
    const { items } = await instance.runs.items(runId, { limit: 100 });
    const keys = new Set(items.map((item) => item.idempotencyKey));
    const payers = new Map<string, number>();
    for (const transaction of await stack.sandbox.control.transactions()) {
      if (transaction.idempotencyKey === null || !keys.has(transaction.idempotencyKey)) continue;
      payers.set(transaction.account, (payers.get(transaction.account) ?? 0) + 1);
    }
    return payers;
  }

  const sent = (instance: RunsInstance, runId: string) =>
    waitFor(
      async () => {
        const run = await instance.runs.get(runId);
        return run.counts.queued + run.counts.sending === 0 ? run : undefined;
      },
      `every item of ${runId} sent`,
      90_000,
    );

  it("sends every item of a run through its creator's account, while the other app's engine sends none", async () => {
    const { instance } = stack;
    const runId = 'payroll-of-sandbox';
    await instance.runs.create({
      runId,
      items: mpesaItems(30, `${instance.url}/webhooks/payments`),
      concurrency: 4,
      ratePerSecond: 50,
    });
    const run = await sent(instance, runId);
    expect(run.counts.refused + run.counts.in_doubt).toBe(0);
    expect(await payersOf(instance, runId)).toEqual(new Map([['sandbox', 30]]));
    // The other app found it listed and said so once, however many ticks met it.
    const said = errors.mock.calls.filter(([message]) =>
      String(message).includes(`Payout run ${runId} was created through another payment account`),
    );
    expect(said).toHaveLength(1);
    // Created again through the other account: refused, nothing sent.
    await expect(
      other.runs.create({ runId, items: mpesaItems(30, `${other.url}/webhooks/payments`) }),
    ).rejects.toMatchObject({
      constructor: PayoutRunConflictError,
      field: 'account',
      mayHaveExecuted: false,
    });
  });

  it("neither reads nor steers another account's run: it is not found there, and stays paused", async () => {
    const { instance } = stack;
    const runId = 'paused-payroll-of-sandbox';
    await instance.runs.create({
      runId,
      items: mpesaItems(10, `${instance.url}/webhooks/payments`),
      concurrency: 1,
      ratePerSecond: 1,
    });
    await instance.runs.pause(runId);
    for (const attempt of [
      () => other.runs.get(runId),
      () => other.runs.items(runId),
      () => other.runs.report(runId, 'json'),
      () => other.runs.resume(runId),
      () => other.runs.cancel(runId),
      () => other.runs.pause(runId),
    ]) {
      await expect(attempt()).rejects.toBeInstanceOf(PayoutRunNotFoundError);
    }
    expect((await instance.runs.get(runId)).state).toBe('paused');
    await instance.runs.cancel(runId);
  });

  it('pays none of a run another account created anew under the id of a run this app held', async () => {
    // An app that looks at its runs once a second: it still holds the deleted run when the other
    // app creates it anew.
    const slow = await startRunsInstance({
      redisUrl: stack.redis.url,
      sandboxUrl: stack.sandbox.url,
      ...stack.sandbox.credentials,
      settlementPollMs: 1000,
    });
    try {
      const runId = 'payroll-id-reused';
      await slow.runs.create({
        runId,
        items: mpesaItems(5, `${slow.url}/webhooks/payments`).map((item) => ({
          ...item,
          itemId: `first-${item.itemId}`,
        })),
        concurrency: 1,
        ratePerSecond: 2,
      });
      expect(await store.deleteRun(runId)).toBe(true);
      await other.runs.create({
        runId,
        items: mpesaItems(40, `${other.url}/webhooks/payments`),
        concurrency: 4,
        ratePerSecond: 20,
      });
      await sent(other, runId);
      expect(await payersOf(other, runId)).toEqual(new Map([['beta', 40]]));
    } finally {
      await slow.close();
    }
  });
});

import { Logger } from '@nestjs/common';
import { PayoutRunConflictError } from '@malipo/nestjs/runs';
import { waitFor } from '../../../libs/payments/spec-support/wait-for';
import { mpesaItems } from '../payout-run-items';
import { type RunsInstance, startRunsInstance } from './payout-run-instance';
import { type RunsStack, startRunsStack } from './runs-kit';

/**
 * Two apps of two accounts at the service share one Redis, with the default prefixes: the run
 * store, the engine's list of runs in progress and the journal. Each app's engine works the runs
 * it finds listed, so without a mark of the account one app paid the other's run from its own
 * account. A run is its creator's account's alone.
 */
jest.setTimeout(120_000);

describe("a payout run is paid only through its own account's app (e2e, redis-server, sandbox)", () => {
  let stack: RunsStack;
  let other: RunsInstance;
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
    });
  });
  afterAll(async () => {
    await other?.close();
    await stack?.close();
    errors?.mockRestore();
  });

  it("sends every item of a run through its creator's account, while the other app's engine sends none", async () => {
    const { instance, sandbox } = stack;
    const runId = 'payroll-of-sandbox';
    await instance.runs.create({
      runId,
      items: mpesaItems(30, `${instance.url}/webhooks/payments`),
      concurrency: 4,
      ratePerSecond: 50,
    });
    const sent = await waitFor(
      async () => {
        const run = await instance.runs.get(runId);
        return run.counts.queued + run.counts.sending === 0 ? run : undefined;
      },
      'every item of the run sent',
      90_000,
    );
    expect(sent.counts.refused + sent.counts.in_doubt).toBe(0);
    const payouts = (await sandbox.control.transactions()).filter((transaction) =>
      transaction.idempotencyKey?.startsWith(`run-${runId}`),
    );
    expect(payouts).toHaveLength(30);
    expect(new Set(payouts.map((payout) => payout.account))).toEqual(new Set(['sandbox']));
    // The other app found it listed and said so once, however many ticks met it.
    const said = errors.mock.calls.filter(([message]) =>
      String(message).includes(`Payout run ${runId} was created through another account`),
    );
    expect(said).toHaveLength(1);
    // Created again through the other account: refused, nothing sent.
    await expect(
      other.runs.create({
        runId,
        items: mpesaItems(30, `${other.url}/webhooks/payments`),
      }),
    ).rejects.toMatchObject({
      constructor: PayoutRunConflictError,
      field: 'account',
      mayHaveExecuted: false,
    });
  });
});

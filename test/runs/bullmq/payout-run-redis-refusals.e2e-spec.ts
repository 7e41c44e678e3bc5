import { Redis } from 'ioredis';
import { waitFor } from '../../../libs/payments/spec-support/wait-for';
import { completedRun } from '../payout-runs-harness';
import type { RunningSandbox } from '../../../apps/sandbox/src/sandbox';
import { mpesaItems } from '../payout-run-items';
import type { RunsInstance } from './payout-run-instance';
import { expectLedgerAgrees, type RunsStack, startRunsStack } from './runs-kit';

/**
 * While Redis refuses writes (out of memory here; `MISCONF` and `READONLY` answer the same way) a
 * run's BullMQ worker rests instead of asking again at once, and the run goes on once Redis takes
 * writes again, paying nobody twice.
 */
jest.setTimeout(150_000);

describe('a payout run while Redis refuses writes (e2e, redis-server, sandbox)', () => {
  let stack: RunsStack;
  let sandbox: RunningSandbox;
  let instance: RunsInstance;
  let probe: Redis;

  beforeAll(async () => {
    stack = await startRunsStack();
    ({ sandbox, instance } = stack);
    probe = new Redis(stack.redis.url);
  });
  afterAll(async () => {
    await probe?.quit();
    await stack?.close();
  });

  /** How many commands Redis refused as out of memory so far. */
  async function refusedForMemory(): Promise<number> {
    const stats = await probe.info('errorstats');
    return Number(/errorstat_OOM:count=(\d+)/.exec(stats)?.[1] ?? 0);
  }

  const payouts = async () =>
    (await sandbox.control.requests()).filter((request) => request.method === 'POST').length;

  it('rests its worker while Redis is out of memory, then sends the rest once Redis takes writes', async () => {
    const created = await instance.runs.create({
      items: mpesaItems(200, `${instance.url}/webhooks/payments`),
      concurrency: 2,
      ratePerSecond: 20,
    });
    await waitFor(async () => ((await payouts()) >= 5 ? true : undefined), 'the first payouts');

    await probe.config('SET', 'maxmemory-policy', 'noeviction');
    await probe.config('SET', 'maxmemory', '1');
    const before = await refusedForMemory();
    await new Promise((resolve) => setTimeout(resolve, 3000));
    const refused = (await refusedForMemory()) - before;
    const sentWhileRefused = await payouts();
    await probe.config('SET', 'maxmemory', '0');

    await completedRun(
      instance.runs,
      created.runId,
      'the run completed after Redis took writes again',
      120_000,
    );
    const sentAfter = (await payouts()) - sentWhileRefused;
    console.log(
      `Redis out of memory for 3 s: ${refused} command(s) refused over that time; ` +
        `${sentAfter} payout(s) sent once it took writes again`,
    );
    // Without the rests, the worker asks again at once: thousands of refusals a second. With
    // them, a handful from the worker besides the engine's and the journal's own writes.
    expect(refused).toBeLessThan(300);
    expect(sentAfter).toBeGreaterThan(0);
    await expectLedgerAgrees(sandbox, await instance.runs.report(created.runId, 'json'));
  });
});

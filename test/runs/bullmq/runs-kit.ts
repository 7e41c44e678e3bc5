// What the BullMQ run tests share: one instance on a Redis and a sandbox of its own, and the
// ledger check.
import type { PayoutRunItem, PayoutRunReport } from '@malipo/nestjs/runs';
import { RedisServer } from '../../../libs/payments/spec-support/redis-server';
import type { RunningSandbox } from '../../../apps/sandbox/src/sandbox';
import { startSandbox } from '../../../apps/sandbox/src/sandbox';
import {
  type RunsInstance,
  type RunsInstanceOptions,
  startRunsInstance,
} from './payout-run-instance';

/** A redis-server, the sandbox and one instance paying runs on them; `close()` stops all three. */
export interface RunsStack {
  redis: RedisServer;
  sandbox: RunningSandbox;
  instance: RunsInstance;
  close(): Promise<void>;
}

/**
 * Starts a {@link RunsStack} (the sandbox posts its webhooks 20 ms after each payout), its
 * instance with `options` besides the stack's.
 */
export async function startRunsStack(
  options: Pick<RunsInstanceOptions, 'statusLookupAfterMs'> = {},
): Promise<RunsStack> {
  const redis = await RedisServer.start();
  const sandbox = await startSandbox({ port: 0, logger: false, webhookDelayMs: 20 });
  const instance = await startRunsInstance({
    redisUrl: redis.url,
    sandboxUrl: sandbox.url,
    ...sandbox.credentials,
    ...options,
  });
  return {
    redis,
    sandbox,
    instance,
    close: async () => {
      await instance.close();
      await sandbox.close();
      await redis.close();
    },
  };
}

/** Item states a run leaves items in once done. */
export const END_STATES = ['succeeded', 'failed', 'refused', 'in_doubt'];

/**
 * Checks a finished run against the sandbox's ledger: every item final, or in doubt or refused with
 * a reason,
 * each item's key executed at most once, each succeeded or failed item exactly once (and a
 * succeeded one as a success), each refused one never. Returns the executions per key.
 */
export async function expectLedgerAgrees(
  sandbox: RunningSandbox,
  report: PayoutRunReport,
): Promise<Map<string, number>> {
  const ledger = await sandbox.control.transactions();
  const executions = new Map<string, number>();
  for (const tx of ledger) {
    if (tx.idempotencyKey) {
      executions.set(tx.idempotencyKey, (executions.get(tx.idempotencyKey) ?? 0) + 1);
    }
  }
  const byKey = new Map(ledger.map((tx) => [tx.idempotencyKey, tx]));
  const problems: string[] = [];
  const check = (item: PayoutRunItem, ok: boolean, what: string) => {
    if (!ok) problems.push(`${item.itemId} (${item.state}): ${what}`);
  };
  for (const item of report.items) {
    const executed = executions.get(item.idempotencyKey) ?? 0;
    check(item, END_STATES.includes(item.state), 'not final');
    if (item.state === 'in_doubt' || item.state === 'refused') {
      check(item, Boolean(item.reason), 'no reason');
    }
    check(item, executed <= 1, `executed ${executed} times`);
    if (item.state === 'succeeded' || item.state === 'failed') {
      check(item, executed === 1, `executed ${executed} times`);
    }
    if (item.state === 'succeeded') {
      check(item, byKey.get(item.idempotencyKey)?.status === 'success', 'not a success');
    }
    if (item.state === 'refused') check(item, executed === 0, 'refused yet executed');
  }
  expect(problems).toEqual([]);
  return executions;
}

// What the BullMQ run tests share: the ledger check, and reading a run until it is done.
import type { PayoutRunItem, PayoutRunReport } from '@malipo/nestjs/runs';
import type { RunningSandbox } from '../../../apps/sandbox/src/sandbox';

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

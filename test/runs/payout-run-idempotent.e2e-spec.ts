import { InMemoryPaymentsJournal } from '@malipo/nestjs';
import { PayoutRunConflictError } from '@malipo/nestjs/runs';
import { RedisPayoutRunStore } from '@malipo/nestjs/runs/bullmq';
import { Redis } from 'ioredis';
import { RedisServer } from '../../libs/payments/spec-support/redis-server';
import type { PayoutRun } from '@malipo/nestjs/runs';
import { completedRun, eventually, PayoutRunsHarness } from './payout-runs-harness';

jest.setTimeout(60_000);

/**
 * A retried or doubled "start payroll" pays nobody twice: the run id is the caller's, item keys
 * derive from it with a secret, and a second create() answers the run already there.
 */
describe('payout runs created again under the same runId (e2e, sandbox over loopback)', () => {
  let harness: PayoutRunsHarness;

  beforeAll(async () => {
    harness = await PayoutRunsHarness.start();
  });
  afterAll(() => harness?.close());
  beforeEach(() => harness.sandbox.control.reset());

  const completed = (runId: string) => completedRun(harness.runs, runId);

  it('answers the existing run to a second and a concurrent create(), each item paid once', async () => {
    const items = harness.mpesaItems(10);
    const runId = 'payroll-2026-03';
    const [first, doubled] = await Promise.all([
      harness.runs.create({ runId, items }),
      harness.runs.create({ runId, items }),
    ]);
    expect([first.existing, doubled.existing].sort()).toEqual([false, true]);
    expect(first.runId).toBe(runId);
    await completed(runId);
    const again = await harness.runs.create({ runId, items });
    expect(again).toMatchObject({ runId, existing: true, state: 'completed' });

    const ledger = await harness.sandbox.control.transactions();
    expect(ledger).toHaveLength(10);
    expect(new Set(ledger.map((tx) => tx.idempotencyKey)).size).toBe(10);
  });

  it('created again after its process died, sends nothing the journal holds, nor checks the balance for it', async () => {
    const journal = new InMemoryPaymentsJournal();
    const sandbox = { initialBalances: { local: 50_000, USD: 100 } };
    const runId = 'payroll-2026-06';
    const items = await runInAProcessThatEnds(journal, runId);

    const after = await PayoutRunsHarness.start({ journal, sandbox });
    expect(await after.runs.validate({ items })).toMatchObject({ ok: false });
    try {
      // 60,000 against a balance of 50,000; the journal holds two items paid and one the
      // service refused (the first sandbox's funds ran out), which stands: nothing to cover.
      const again = await after.runs.create({ runId, items });
      expect(again).toMatchObject({ runId, existing: false });
      expect(again.balanceCheck.checked).toEqual([]);
      await eventually(async () => {
        // Its webhook goes to the first process's URL: the look-up settles it.
        await after.reconciler.reconcile();
        const run = await after.runs.get(runId);
        return run.state === 'completed' ? run : undefined;
      }, 'the run created again to complete');
      const requests = await after.sandbox.control.requests();
      expect(requests.filter((request) => request.method === 'POST')).toHaveLength(0);
      expect((await after.runs.get(runId)).counts).toMatchObject({ succeeded: 2, refused: 1 });
    } finally {
      await after.close();
    }
  });

  it('created again after its process died with edited items, takes no earlier payout for them', async () => {
    const journal = new InMemoryPaymentsJournal();
    const runId = 'payroll-2026-09';
    const items = await runInAProcessThatEnds(journal, runId);
    // The same ids, so the same keys: emp-0 now for another sum, emp-1 to another number; emp-2,
    // refused by the service before, as it was: its refusal stands.
    const edited = items.map((item, i) =>
      i === 0
        ? { ...item, request: { ...item.request, amount: 999 } }
        : i === 1
          ? { ...item, request: { ...item.request, phoneNumber: '0799991234' } }
          : item,
    );
    const after = await PayoutRunsHarness.start({
      journal,
      sandbox: { initialBalances: { local: 100_000, USD: 100 } },
    });
    try {
      await after.runs.create({ runId, items: edited });
      await eventually(async () => {
        await after.reconciler.reconcile();
        const run = await after.runs.get(runId);
        return run.state === 'completed' ? run : undefined;
      }, 'the run created again to complete');

      const report = await after.runs.report(runId, 'json');
      expect(report.items.map((item) => [item.itemId, item.state])).toEqual([
        ['emp-0', 'in_doubt'],
        ['emp-1', 'in_doubt'],
        ['emp-2', 'refused'],
      ]);
      for (const item of report.items.slice(0, 2)) {
        expect(item.reason).toMatch(/^idempotencyKey reused/);
        expect(item.reference).toBeUndefined();
      }
      expect(report.items[2].reason).toMatch(/^not sent again: .*not executed/);
      const posts = (await after.sandbox.control.requests()).filter((r) => r.method === 'POST');
      expect(posts).toEqual([]);
      expect((await after.runs.get(runId)).totals.byState.succeeded).toEqual({});
    } finally {
      await after.close();
    }
  });

  /** A run of two items paid by a first process, created again by a second (`after`). */
  async function paidThenCreatedAgain(
    runId: string,
    after: Parameters<typeof PayoutRunsHarness.start>[0],
  ) {
    // Item keys that outlive the change: the fingerprints of their entries may not.
    const itemKeySecret = 'the item keys of our payroll';
    const journal = new InMemoryPaymentsJournal();
    const before = await PayoutRunsHarness.start({ journal, itemKeySecret });
    const items = before.mpesaItems(2);
    try {
      await before.runs.create({ runId, items });
      await completedRun(before.runs, runId, 'the first run to complete');
    } finally {
      await before.close();
    }
    const again = await PayoutRunsHarness.start({ journal, itemKeySecret, ...after });
    await again.runs.create({ runId, items });
    return again;
  }

  it('created again with the same items after the password rotated, takes their own outcomes and sends nothing', async () => {
    const after = await paidThenCreatedAgain('payroll-2026-10', {
      sandbox: { apiPassword: 'rotated-sandbox-secret' },
    });
    try {
      // Each send is refused by the journal (a fingerprint of another key under its key), and the
      // item then takes its entry's outcome: nothing but the key tells them apart.
      const run = await eventually(async () => {
        const now = await after.runs.get('payroll-2026-10');
        return now.counts.succeeded === 2 ? now : undefined;
      }, 'both items to take their own outcomes');
      expect(run.counts).toMatchObject({ succeeded: 2, in_doubt: 0 });
      const posts = (await after.sandbox.control.requests()).filter((r) => r.method === 'POST');
      expect(posts).toHaveLength(0);
    } finally {
      await after.close();
    }
  });

  it('created again after correlateCallbacks was turned off, holds the items in doubt and sends nothing', async () => {
    // Under the same key, another fingerprint is another request on the wire (here, the callback
    // URL without its malipo_key), as the journal itself judged it when it refused the send.
    const after = await paidThenCreatedAgain('payroll-2026-12', { correlateCallbacks: false });
    try {
      const run = await completedRun(after.runs, 'payroll-2026-12', 'the run created again');
      expect(run.counts).toMatchObject({ succeeded: 0, in_doubt: 2 });
      const report = await after.runs.report('payroll-2026-12', 'json');
      for (const item of report.items) expect(item.reason).toMatch(/^idempotencyKey reused/);
      const posts = (await after.sandbox.control.requests()).filter((r) => r.method === 'POST');
      expect(posts).toHaveLength(0);
    } finally {
      await after.close();
    }
  });

  it('created again, leaves out of the balance check a key held for a takeover and resolved refused', async () => {
    const journal = new InMemoryPaymentsJournal();
    const runId = 'payroll-2026-08';
    const items = await runInAProcessThatEnds(journal, runId);
    // The item the service refused, as a takeover would have left it: held with no send, and
    // resolved refused by a person. Its key stays closed (ALREADY_REFUSED): it is never sent again.
    const [refused] = (await journal.list({ states: ['refused'] })).filter(
      (entry) => entry.operation === 'payouts.mpesa',
    );
    await journal.replace({
      ...refused,
      version: refused.version + 1,
      calls: [],
      settledBy: 'manual',
      note: 'ops: not in the ledger',
    });

    // 10,000 left: the held key, were it counted as sent again, would need 20,000.
    const after = await PayoutRunsHarness.start({
      journal,
      sandbox: { initialBalances: { local: 10_000, USD: 100 } },
    });
    try {
      const again = await after.runs.create({ runId, items });
      expect(again).toMatchObject({ runId, existing: false });
      const run = await completedRun(after.runs, runId, 'the run created again to complete');
      expect(run.counts).toMatchObject({ succeeded: 2, refused: 1 });
      const requests = await after.sandbox.control.requests();
      expect(requests.filter((request) => request.method === 'POST')).toHaveLength(0);
    } finally {
      await after.close();
    }
  });

  it('on a Redis run store, answers a create() that lost the race once the winner wrote its run', async () => {
    const redis = await RedisServer.start();
    const store = new RedisPayoutRunStore({ url: redis.url });
    const racing = await PayoutRunsHarness.start({ store });
    try {
      // Items in several chunks: the winner is still writing when the other asks.
      const items = racing.mpesaItems(1_200);
      const runId = 'payroll-2026-07';
      const [first, doubled] = await Promise.all([
        racing.runs.create({ runId, items, ratePerSecond: 5 }),
        racing.runs.create({ runId, items, ratePerSecond: 5 }),
      ]);
      expect([first.existing, doubled.existing].sort()).toEqual([false, true]);
      const other = items.map((item, i) =>
        i === 0 ? { ...item, request: { ...item.request, amount: item.request.amount + 1 } } : item,
      );
      await expect(racing.runs.create({ runId, items: other })).rejects.toBeInstanceOf(
        PayoutRunConflictError,
      );
      await racing.runs.cancel(runId);
    } finally {
      await racing.close();
      await store.close();
      await redis.close();
    }
  });

  it('on a Redis run store, a create() again after a creation died mid-write takes the id over once its claim lapses', async () => {
    const redis = await RedisServer.start();
    const client = new Redis(redis.url);
    const store = new RedisPayoutRunStore({ client });
    const after = await PayoutRunsHarness.start({ store });
    try {
      const runId = 'payroll-2026-08';
      // What a process killed while writing the run leaves: its claim near the end of its lease
      // (no renewal comes any more), and an item of its first chunk with its request.
      await client.set(`malipo:runs:{${runId}}:claim`, 'the dead creation', 'PX', 1_500);
      await client.hset(`malipo:runs:{${runId}}:item:ghost`, { id: 'ghost', rq: '{}' });
      await client.zadd(`malipo:runs:{${runId}}:order`, 0, 'ghost');
      const items = after.mpesaItems(3);

      const created = await after.runs.create({ runId, items });

      expect(created.existing).toBe(false);
      const run = await eventually(async () => {
        const current = await after.runs.get(runId);
        return current.finishedAt ? current : undefined;
      }, 'the run taken over to finish');
      expect(run.counts).toMatchObject({ succeeded: 3 });
      const keys = (await after.sandbox.control.transactions()).map((tx) => tx.idempotencyKey);
      expect(keys.sort()).toEqual(
        items.map((item) => after.runs.itemKey(runId, item.itemId)).sort(),
      );
      expect(await client.exists(`malipo:runs:{${runId}}:item:ghost`)).toBe(0);
    } finally {
      await after.close();
      await store.close();
      await client.quit();
      await redis.close();
    }
  });

  it('refuses the same runId with other items, naming the field, and sends nothing more', async () => {
    const items = harness.mpesaItems(3);
    const runId = 'payroll-2026-04';
    await harness.runs.create({ runId, items });
    await completed(runId);
    const changed = items.map((item, i) =>
      i === 1 ? { ...item, request: { ...item.request, amount: 999 } } : item,
    );
    const error: unknown = await harness.runs
      .create({ runId, items: changed })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(PayoutRunConflictError);
    expect(error).toMatchObject({ runId, field: 'items' });
    // Never "give it another runId" alone: for the same payroll that pays everyone again.
    expect((error as Error).message).toContain('do not create it under another runId');
    expect(await harness.sandbox.control.transactions()).toHaveLength(3);
  });

  it('derives keys that do not show the item id, and gives failed items a reason and totals per state', async () => {
    const runId = 'payroll-2026-05';
    const items = harness.mpesaItems(10);
    await harness.runs.create({ runId, items });
    const run: PayoutRun = await completed(runId);
    const report = await harness.runs.report(runId, 'json');
    for (const item of report.items) {
      expect(item.idempotencyKey).toMatch(new RegExp(`^run-${runId}-[A-Za-z0-9_-]{22}$`));
      expect(item.idempotencyKey).not.toContain(item.itemId);
      expect(item.idempotencyKey).toBe(harness.runs.itemKey(runId, item.itemId));
    }
    // emp-9's number makes the sandbox's payout fail.
    const failed = report.items.filter((item) => item.state === 'failed');
    expect(failed.map((item) => item.itemId)).toEqual(['emp-9']);
    expect(failed[0].reason).toMatch(/^failed: (webhook|status)/);
    expect(run.totals.byState.failed).toEqual({ KES: { count: 1, amount: 109 } });
    expect(run.totals.byState.succeeded).toEqual({
      KES: { count: 9, amount: 100 + 101 + 102 + 103 + 104 + 105 + 106 + 107 + 108 },
    });
    // A format chosen at run time (a query parameter) compiles, and answers in its kind.
    for (const format of ['json', 'csv'] as ('json' | 'csv')[]) {
      const either = await harness.runs.report(runId, format);
      expect(typeof either).toBe(format === 'csv' ? 'string' : 'object');
    }
  });

  it('validates without sending: every problem at once, then the balance check', async () => {
    const items = harness.mpesaItems(3);
    items[1] = { ...items[1], itemId: 'emp;=1', request: { ...items[1].request, amount: 100.005 } };
    // 2,040 characters: within the field's 2,048, not with the item's malipo_key appended.
    const callbackUrl = `https://shop.example/hook?pad=${'x'.repeat(2_010)}`;
    items[2] = { ...items[2], request: { ...items[2].request, callbackUrl } };
    const report = await harness.runs.validate({ items });
    expect(report.ok).toBe(false);
    expect(report.problems.map(({ itemId, field, rule }) => [itemId, field, rule])).toEqual([
      ['emp;=1', 'itemId', 'isPayoutRunItemId'],
      ['emp;=1', 'amount', 'decimals'],
      [items[2].itemId, 'callbackUrl', 'maxLength'],
    ]);
    const fine = await harness.runs.validate({ items: harness.mpesaItems(3) });
    expect(fine).toMatchObject({ ok: true, problems: [], shortfalls: [] });
    expect(fine.balanceCheck?.checked).toEqual([
      expect.objectContaining({ currency: 'KES', required: 303 }),
    ]);
    const requests = await harness.sandbox.control.requests();
    expect(requests.filter((r) => r.method === 'POST')).toEqual([]);
  });
});

/**
 * Three payouts of 20,000 KES from a balance of 50,000, run to completion in a process that then
 * ends: the journal outlives it (as RedisPaymentsJournal does), the run does not. Two are paid,
 * the service refuses the third. Resolves with the items, to create the run again.
 */
async function runInAProcessThatEnds(journal: InMemoryPaymentsJournal, runId: string) {
  const before = await PayoutRunsHarness.start({
    journal,
    sandbox: { initialBalances: { local: 50_000, USD: 100 } },
  });
  const items = before.mpesaItems(3).map((item) => ({
    ...item,
    request: { ...item.request, amount: 20_000 },
  }));
  try {
    await before.runs.create({ runId, items, allowBalanceShortfall: true });
    await completedRun(before.runs, runId, 'the first run to complete');
  } finally {
    await before.close();
  }
  return items;
}

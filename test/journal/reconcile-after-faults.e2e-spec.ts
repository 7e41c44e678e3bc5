import { type PaymentsJournalEntry, ServiceAPIError } from '@malipo/nestjs';
import { startSandbox } from '../../apps/sandbox/src/sandbox';
import type { RunningSandbox } from '../../apps/sandbox/src/sandbox';
import type { SandboxTransaction } from '../../apps/sandbox/src/sandbox-control';
import { RedisServer } from '../../libs/payments/spec-support/redis-server';
import { steady } from '../../libs/payments/spec-support/steady';
import { callMoney, type JournalApp, MONEY_OPERATIONS, startJournalApp } from './journal-kit';
import type { MoneyOperation, MoneyRequest } from './journal-kit';

const CALLS = 500;
const CONCURRENCY = 50;
/** Random faults before execution: 5xx answers and connection resets. */
const FAULT_RATE = 0.2;
/** Besides, every this many calls, a lost response: executed, then answered 502 or reset. */
const LOST_RESPONSE_EVERY = 20;

/** The POST path of each operation, for the faults that hit one route. */
const PATHS: Readonly<Record<MoneyOperation, string>> = {
  'collections.mpesa': '/api/v2/payments',
  'collections.panAfrican': '/api/v3/payments',
  'payouts.mpesa': '/api/v2/withdrawal',
  'payouts.panAfrican': '/api/v2/payments',
  'payouts.merchant': '/api/v3/withdrawal',
  'transfers.send': '/api/v2/p2p',
};

const FINAL_STATES = ['succeeded', 'failed', 'refused'];

/** A webhook the app could not confirm during the faults comes again after them. */
const sandboxRetryDelaysMs = [100, 250, 500, 1000, 1000, 2000, 2000, 2000];

/** The operation of call `i` and what its request changes: some fail, some are refused. */
function callPlan(i: number): { operation: MoneyOperation; change: Partial<MoneyRequest> } {
  const operation = MONEY_OPERATIONS[i % MONEY_OPERATIONS.length];
  // The sandbox refuses this narration (HTTP 200, `success: false`): never executed.
  if (i % 25 === 3) return { operation, change: { narration: 'REJECT' } };
  // It executes this amount and settles it failed (not for pan-African networks, whose limits
  // it may break; a transfer settles at once, succeeded).
  if (i % 25 === 11 && !operation.endsWith('panAfrican')) {
    return { operation, change: { amount: 666 } };
  }
  return { operation, change: {} };
}

describe('the payments journal on Redis: reconcile after 500 calls with faults', () => {
  let redis: RedisServer;
  let sandbox: RunningSandbox;
  let instance: JournalApp;

  beforeAll(async () => {
    redis = await RedisServer.start();
    sandbox = await startSandbox({
      port: 0,
      logger: false,
      webhookDelayMs: 100,
      webhookRetryDelaysMs: sandboxRetryDelaysMs,
    });
    instance = await startJournalApp({
      sandbox,
      redisUrl: redis.url,
      client: { timeout: 10_000 },
      // The default look-up budget: webhooks of journal entries with their reference are looked
      // up outside it, however fast the app's calls come (docs/errors.md).
    });
  });
  afterAll(async () => {
    await instance?.close();
    await sandbox?.close();
    await redis?.close();
  });

  it('leaves every entry final or in doubt with a reason, and the ledger agrees with the journal call by call', async () => {
    await sandbox.control.randomFaults({ rate: FAULT_RATE, reset: true, seed: 20261125 });
    const answered = new Map<string, string | undefined>(); // key -> answered reference
    const rejected = new Map<string, ServiceAPIError>();
    const otherFailures: unknown[] = [];
    let next = 0;
    const worker = async () => {
      while (next < CALLS) {
        const i = next++;
        const idempotencyKey = `run-${i}`;
        const { operation, change } = callPlan(i);
        if (i % LOST_RESPONSE_EVERY === 7) {
          // Hits the next request on that route, whichever call it belongs to.
          await sandbox.control.injectFault({
            path: PATHS[operation],
            afterExecute: true,
            ...(i % (2 * LOST_RESPONSE_EVERY) === 7 ? { reset: true } : { status: 502 }),
          });
        }
        try {
          const answer = await callMoney(
            instance.client,
            operation,
            // A receiver of its own: a lost answer's record names whose payout it is (rule 9
            // and 10 of docs/journal.md; the same receiver and amount twice is left to a person).
            { callbackUrl: instance.webhookUrl, receiver: 1000 + i, ...change },
            { idempotencyKey },
          );
          answered.set(idempotencyKey, answer.transactionReference as string | undefined);
        } catch (error) {
          if (error instanceof ServiceAPIError) rejected.set(idempotencyKey, error);
          else otherFailures.push(error);
        }
      }
    };
    await Promise.all(Array.from({ length: CONCURRENCY }, worker));
    await sandbox.control.clearFaults();

    // The webhooks arrive: wait until the sandbox settled every execution and each webhook was
    // accepted, or given up after its re-deliveries (then the reconcile pass's look-up settles it).
    await steady(
      async () => {
        const transactions = await sandbox.control.transactions();
        const retries = sandboxRetryDelaysMs.length;
        return {
          executions: transactions.length,
          unsettled: transactions.filter((t) => t.settledAt === null).length,
          webhooksPending: transactions.filter(
            (t) =>
              t.callbackUrl !== null &&
              !t.webhookDeliveries.some((d) => d.status === 200) &&
              t.webhookDeliveries.length <= retries,
          ).length,
        };
      },
      'the sandbox to settle every execution and deliver its webhooks',
      {
        done: (progress) => progress.unsettled === 0 && progress.webhooksPending === 0,
        reads: 4,
        intervalMs: 250,
        timeoutMs: 90_000,
      },
    );
    const ledger = await sandbox.control.transactions();
    const summary = await instance.reconciler.reconcile();
    const entries = await instance.reconciler.entries();
    const requests = await sandbox.control.requests();

    const byState = (state: string) => entries.filter((entry) => entry.state === state);
    const figures = {
      calls: CALLS,
      answered: answered.size,
      rejected: rejected.size,
      faultedAttempts: requests.filter((r) => r.fault !== undefined).length,
      lostResponses: requests.filter((r) => r.fault?.includes('after execute')).length,
      executions: ledger.length,
      reconcile: { checked: summary.checked, changed: summary.changed },
      inDoubtExecuted: byState('in_doubt').filter((entry) =>
        ledger.some((t) => t.idempotencyKey === entry.idempotencyKey),
      ).length,
      entries: Object.fromEntries(
        ['succeeded', 'failed', 'refused', 'in_doubt', 'accepted', 'started'].map((state) => [
          state,
          byState(state).length,
        ]),
      ),
    };
    console.log(`reconcile after faults: ${JSON.stringify(figures)}`);

    expect(otherFailures).toEqual([]);
    expect(answered.size + rejected.size).toBe(CALLS);
    expect(figures.lostResponses).toBeGreaterThan(0);
    expect(summary.lookupFailures).toBe(0);

    // One entry per call, each final or in doubt with its reason.
    const entryOf = new Map(entries.map((entry) => [entry.idempotencyKey, entry]));
    expect(entries).toHaveLength(CALLS);
    for (let i = 0; i < CALLS; i += 1) expect(entryOf.has(`run-${i}`)).toBe(true);
    const open = entries.filter(
      (entry) =>
        !FINAL_STATES.includes(entry.state) && !(entry.state === 'in_doubt' && entry.reason),
    );
    expect(open).toEqual([]);
    expect(summary.inDoubt.map((entry) => entry.idempotencyKey).sort()).toEqual(
      byState('in_doubt')
        .map((entry) => entry.idempotencyKey)
        .sort(),
    );

    // The ledger agrees with the journal, call by call.
    const executionsOf = new Map<string, SandboxTransaction[]>();
    for (const execution of ledger) {
      const key = execution.idempotencyKey!;
      // Every execution is of a journaled call...
      expect({ key, journaled: entryOf.has(key) }).toEqual({ key, journaled: true });
      executionsOf.set(key, [...(executionsOf.get(key) ?? []), execution]);
    }
    for (const [key, executions] of executionsOf) {
      // ...and no key executed twice.
      expect({ key, executions: executions.length }).toEqual({ key, executions: 1 });
    }
    const outcomeOf: Record<string, string> = { succeeded: 'success', failed: 'failed' };
    for (const entry of entries) {
      const executions = executionsOf.get(entry.idempotencyKey) ?? [];
      const seen = ledgerView(entry, executions);
      if (entry.state === 'succeeded' || entry.state === 'failed' || entry.state === 'accepted') {
        // Executed once, under the entry's reference, with the same outcome.
        expect(seen).toEqual({
          key: entry.idempotencyKey,
          references: [entry.reference],
          statuses: [outcomeOf[entry.state] ?? 'pending'],
        });
      } else if (entry.state === 'refused') {
        expect(seen).toEqual({ key: entry.idempotencyKey, references: [], statuses: [] });
      } else if (entry.state === 'in_doubt' && executions.length > 0) {
        // An executed call left in doubt had no webhook to settle it: a transfer (the service
        // posts none, and has no look-up by idempotency key).
        expect({ key: entry.idempotencyKey, operation: entry.operation }).toEqual({
          key: entry.idempotencyKey,
          operation: 'transfers.send',
        });
      }
    }

    // And with what each caller was told.
    for (const [key, reference] of answered) {
      expect({ key, reference: entryOf.get(key)!.reference }).toEqual({ key, reference });
    }
    for (const [key, error] of rejected) {
      if (!error.mayHaveExecuted) {
        expect({ key, state: entryOf.get(key)!.state }).toEqual({ key, state: 'refused' });
      }
    }
  }, 180_000);
});

/** What the ledger holds of an entry's key, in a shape that names the key when it differs. */
function ledgerView(entry: PaymentsJournalEntry, executions: SandboxTransaction[]) {
  return {
    key: entry.idempotencyKey,
    references: executions.map((execution) => execution.reference),
    statuses: executions.map((execution) => execution.status),
  };
}

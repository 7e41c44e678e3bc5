import { PaymentsJournal } from '../src/journal/payments-journal';
import type {
  PaymentsJournalEntry,
  PaymentsJournalStore,
} from '../src/journal/payments-journal.interfaces';

/** A journal over `store` with the keys of the tests, on `now` (the real clock by default). */
export function testJournal(store: PaymentsJournalStore, now?: () => number): PaymentsJournal {
  return new PaymentsJournal(store, {
    account: 'default',
    fingerprintKey: Buffer.alloc(32, 1),
    payeeKey: Buffer.alloc(32, 2),
    ...(now === undefined ? {} : { now }),
  });
}

/**
 * The journal intent of an M-Pesa payout of `amount` KES (500 by default) under `key`, sent within
 * `budgetMs` (1 s by default: past it, a send without an answer is in doubt).
 */
export function payoutIntent(key: string, { resend = false, amount = 500, budgetMs = 1000 } = {}) {
  return {
    idempotencyKey: key,
    operation: 'payouts.mpesa' as const,
    target: 'MpesaPayoutRequest',
    encoded: { method: 'POST' as const, url: '/api/v2/withdrawal', body: { amount } },
    amount,
    currency: 'KES',
    budgetMs,
    resend,
  };
}

/** A journal entry under `key`, `started` now, version 1, with `changes` over it. */
export function journalEntry(
  key: string,
  changes: Partial<PaymentsJournalEntry> = {},
): PaymentsJournalEntry {
  const at = new Date().toISOString();
  return {
    idempotencyKey: key,
    operation: 'payouts.mpesa',
    account: 'default',
    amount: 100,
    currency: 'KES',
    fingerprint: 'fp',
    state: 'started',
    version: 1,
    startedAt: at,
    updatedAt: at,
    deadlineAt: at,
    calls: [],
    ...changes,
  };
}

/**
 * Rewrites the entry of `key` in `store` as one the service executed more than once, in doubt,
 * with `otherExecutions` (as another instance, or a store of your own, may hold it).
 */
export async function executedMoreThanOnce(
  store: PaymentsJournalStore,
  key: string,
  otherExecutions: string[],
): Promise<void> {
  const entry = await store.get(key);
  if (entry === undefined) throw new Error(`no journal entry ${key}`);
  await store.replace({
    ...entry,
    version: entry.version + 1,
    state: 'in_doubt',
    reason: 'executed more than once',
    otherExecutions,
  });
}

import type { PaymentsJournalEntry } from '../src/journal/payments-journal.interfaces';

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

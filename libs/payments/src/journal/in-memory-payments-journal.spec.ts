import { paymentsJournalStoreConformance } from '../testing/payments-journal-store.conformance';
import { InMemoryPaymentsJournal } from './in-memory-payments-journal';
import type { PaymentsJournalEntry } from './payments-journal.interfaces';

function entry(key: string, state: PaymentsJournalEntry['state']): PaymentsJournalEntry {
  const at = new Date().toISOString();
  return {
    idempotencyKey: key,
    operation: 'payouts.mpesa',
    account: 'default',
    fingerprint: 'fp',
    state,
    version: 1,
    startedAt: at,
    updatedAt: at,
    deadlineAt: at,
    calls: [],
  };
}

describe('InMemoryPaymentsJournal', () => {
  describe('passes the store conformance cases', () => {
    const store = new InMemoryPaymentsJournal();
    for (const check of paymentsJournalStoreConformance()) {
      it(check.name, () => check.run(store));
    }
  });

  it('is bounded: past maxEntries the oldest settled entry goes first, open ones stay', async () => {
    const store = new InMemoryPaymentsJournal({ maxEntries: 3 });
    await store.create(entry('open-1', 'in_doubt'));
    await store.create(entry('settled', 'succeeded'));
    await store.create(entry('open-2', 'accepted'));
    await store.create(entry('open-3', 'started'));

    expect(store.size).toBe(3);
    expect(await store.get('settled')).toBeUndefined();
    expect((await store.list()).map((kept) => kept.idempotencyKey)).toEqual([
      'open-1',
      'open-2',
      'open-3',
    ]);
  });

  it('past maxEntries with nothing settled, forgets the oldest open entry', async () => {
    const store = new InMemoryPaymentsJournal({ maxEntries: 2 });
    await store.create(entry('a', 'in_doubt'));
    await store.create(entry('b', 'in_doubt'));
    await store.create(entry('c', 'started'));

    expect((await store.list()).map((kept) => kept.idempotencyKey)).toEqual(['b', 'c']);
  });

  it('hands out frozen entries: a caller cannot change the journal behind its back', async () => {
    const store = new InMemoryPaymentsJournal();
    const { entry: stored } = await store.create(entry('k', 'started'));

    expect(() => {
      (stored as { state: string }).state = 'succeeded';
    }).toThrow(TypeError);
    expect((await store.get('k'))?.state).toBe('started');
  });

  it('refuses a maxEntries that is not a positive integer', () => {
    expect(() => new InMemoryPaymentsJournal({ maxEntries: 0 })).toThrow(/maxEntries/);
  });
});

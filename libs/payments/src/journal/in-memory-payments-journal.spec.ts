import { Logger } from '@nestjs/common';
import { journalEntry } from '../../spec-support/journal-entries';
import { paymentsJournalStoreConformance } from '../testing/payments-journal-store.conformance';
import { InMemoryPaymentsJournal } from './in-memory-payments-journal';
import type { PaymentsJournalEntry } from './payments-journal.interfaces';

function entry(key: string, state: PaymentsJournalEntry['state']): PaymentsJournalEntry {
  return journalEntry(key, { state });
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

  it('holds values: an entry given or returned is not its own, one read is frozen throughout', async () => {
    const store = new InMemoryPaymentsJournal();
    const given = entry('k', 'started');
    const original = structuredClone(given);
    const { entry: returned } = await store.create(given);
    (given as { state: string }).state = 'succeeded';
    (returned as { amount?: number }).amount = 1;
    const read = await store.get('k');
    expect(() => {
      (read as { state: string }).state = 'failed';
    }).toThrow(TypeError);
    expect(() => (read?.calls as unknown[]).push({ callId: 'forged' })).toThrow(TypeError);

    expect(await store.get('k')).toEqual(original);
    expect((await store.list()).map((kept) => kept.state)).toEqual(['started']);
  });

  it('forgets in order over many evictions, as entries settle and reopen', async () => {
    const store = new InMemoryPaymentsJournal({ maxEntries: 4 });
    const held = async () => (await store.list()).map((kept) => kept.idempotencyKey).sort();
    for (const key of ['a', 'b', 'c', 'd']) await store.create(entry(key, 'accepted'));
    // b settles, then reopens (a refused key sent again); c settles and stays settled.
    await store.replace({ ...entry('b', 'refused'), version: 2 });
    await store.replace({ ...entry('c', 'succeeded'), version: 2 });
    await store.replace({ ...entry('b', 'started'), version: 3 });
    await store.create(entry('e', 'accepted'));
    expect(await held()).toEqual(['a', 'b', 'd', 'e']);
    // Nothing settled now: the oldest open entries go, one per create, then the cursor goes on.
    for (const key of ['f', 'g', 'h']) await store.create(entry(key, 'accepted'));
    expect(await held()).toEqual(['e', 'f', 'g', 'h']);
    await store.replace({ ...entry('g', 'failed'), version: 2 });
    await store.create(entry('i', 'accepted'));
    expect(await held()).toEqual(['e', 'f', 'h', 'i']);
    for (const key of ['j', 'k', 'l', 'm', 'n']) await store.create(entry(key, 'accepted'));
    expect(await held()).toEqual(['k', 'l', 'm', 'n']);
    expect(store.size).toBe(4);
  });

  it('when full of open entries, warns once for many forgotten, not once per create', async () => {
    const store = new InMemoryPaymentsJournal({ maxEntries: 2 });
    const warn = jest.spyOn(Logger.prototype, 'warn').mockImplementation(() => undefined);
    try {
      for (let index = 0; index < 50; index += 1) {
        await store.create(entry(`open-${index}`, 'accepted'));
      }
      expect(warn).toHaveBeenCalledTimes(1);
      expect(warn.mock.calls[0][0]).toMatch(
        /full \(2 entries, none settled\): forgot 1 open entry/,
      );
      expect(store.size).toBe(2);
    } finally {
      warn.mockRestore();
    }
  });

  it('refuses a maxEntries that is not a positive integer', () => {
    expect(() => new InMemoryPaymentsJournal({ maxEntries: 0 })).toThrow(/maxEntries/);
  });
});

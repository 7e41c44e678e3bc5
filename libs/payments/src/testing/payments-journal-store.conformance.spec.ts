import { InMemoryPaymentsJournal } from '../journal/in-memory-payments-journal';
import type {
  PaymentsJournalEntry,
  PaymentsJournalQuery,
  PaymentsJournalStore,
} from '../journal/payments-journal.interfaces';
import { paymentsJournalStoreConformance } from './payments-journal-store.conformance';

/** An in-memory store with one fault a store on a database could have. */
function brokenStore(fault: {
  list?: (entries: PaymentsJournalEntry[]) => PaymentsJournalEntry[];
  query?: (query: PaymentsJournalQuery | undefined) => PaymentsJournalQuery | undefined;
  written?: (entry: PaymentsJournalEntry) => PaymentsJournalEntry;
}): PaymentsJournalStore {
  const inner = new InMemoryPaymentsJournal();
  const written = fault.written ?? ((entry: PaymentsJournalEntry) => entry);
  return {
    create: (entry) => inner.create(written(entry)),
    replace: (next) => inner.replace(written(next)),
    get: (key) => inner.get(key),
    findByReference: (reference) => inner.findByReference(reference),
    list: async (query) =>
      (fault.list ?? ((entries) => entries))(
        await inner.list(fault.query ? fault.query(query) : query),
      ),
  };
}

/** The names of the conformance cases `store` fails. */
async function failedCases(store: PaymentsJournalStore): Promise<string[]> {
  const failed: string[] = [];
  for (const check of paymentsJournalStoreConformance()) {
    await check.run(store).catch(() => failed.push(check.name));
  }
  return failed;
}

describe('paymentsJournalStoreConformance', () => {
  it('passes a store that keeps the contract', async () => {
    expect(await failedCases(new InMemoryPaymentsJournal())).toEqual([]);
  });

  it.each([
    ['lists one page only (a LIMIT 100 left in)', { list: (all) => all.slice(0, 100) }],
    ['lists one page only (a LIMIT 1000 left in)', { list: (all) => all.slice(0, 1000) }],
    [
      'keeps amounts as float32 (a REAL column)',
      { written: (entry) => ({ ...entry, amount: Math.fround(entry.amount ?? 0) }) },
    ],
    [
      'keeps amounts to 2 decimals (a DECIMAL(14,2) column)',
      { written: (entry) => ({ ...entry, amount: Math.round((entry.amount ?? 0) * 100) / 100 }) },
    ],
    [
      'keeps times to the second',
      {
        written: (entry) => ({
          ...entry,
          startedAt: entry.startedAt.replace(/\.\d{3}Z$/, '.000Z'),
        }),
      },
    ],
    [
      'keeps the first and the last send only',
      {
        written: (entry) => ({
          ...entry,
          calls: entry.calls.length > 2 ? [entry.calls[0], entry.calls.at(-1)!] : entry.calls,
        }),
      },
    ],
    [
      'keeps four fields of the answer',
      {
        written: ({ answer, ...entry }) =>
          answer === undefined
            ? entry
            : {
                ...entry,
                answer: {
                  success: answer.success,
                  status: answer.status,
                  message: answer.message,
                  transaction_reference: answer.transaction_reference,
                },
              },
      },
    ],
    [
      'drops the state filter when since is given',
      { query: (query) => (query?.since ? { since: query.since } : query) },
    ],
    [
      'keeps only the first fields of each send',
      {
        written: (entry) => ({
          ...entry,
          calls: entry.calls.map(({ callId, startedAt }) => ({ callId, startedAt })),
        }),
      },
    ],
    [
      'drops the note and the settled status',
      { written: ({ note: _note, settledStatus: _status, ...rest }) => rest },
    ],
    [
      'orders the list by updatedAt',
      {
        list: (all) => [...all].sort((a, b) => Date.parse(a.updatedAt) - Date.parse(b.updatedAt)),
      },
    ],
  ] as [string, Parameters<typeof brokenStore>[0]][])('fails a store that %s', async (_, fault) => {
    expect((await failedCases(brokenStore(fault))).length).toBeGreaterThan(0);
  });
});

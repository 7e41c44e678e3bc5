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
  /** Keys compared without case (MySQL's default collation): the first spelling holds the key. */
  caseless?: boolean;
  /** Keys cut to this length (a `VARCHAR(64)` column, MySQL's 191-character index). */
  keyLength?: number;
  /** `replace` merges the next version into the stored one (an UPDATE of the given columns). */
  mergingReplace?: boolean;
  /** References indexed only for the entries this says (a trigger on one state). */
  indexesReference?: (entry: PaymentsJournalEntry) => boolean;
}): PaymentsJournalStore {
  const inner = new InMemoryPaymentsJournal();
  const written = fault.written ?? ((entry: PaymentsJournalEntry) => entry);
  const spellings = new Map<string, string>();
  const held = (given: string) => {
    const key = given.slice(0, fault.keyLength);
    if (!fault.caseless) return key;
    const lower = key.toLowerCase();
    if (!spellings.has(lower)) spellings.set(lower, key);
    return spellings.get(lower) as string;
  };
  const references = new Map<string, string>();
  const index = (entry: PaymentsJournalEntry) => {
    const { reference } = entry;
    if (reference !== undefined && !references.has(reference) && fault.indexesReference?.(entry)) {
      references.set(reference, entry.idempotencyKey);
    }
  };
  return {
    create: (entry) =>
      inner.create(written({ ...entry, idempotencyKey: held(entry.idempotencyKey) })),
    replace: async (next) => {
      const key = held(next.idempotencyKey);
      const merged = fault.mergingReplace ? { ...(await inner.get(key)), ...next } : next;
      const replaced = await inner.replace(written({ ...merged, idempotencyKey: key }));
      if (replaced) index(next);
      return replaced;
    },
    get: (key) => inner.get(held(key)),
    findByReference: (reference) => {
      if (!fault.indexesReference) return inner.findByReference(reference);
      const key = references.get(reference);
      return key === undefined ? Promise.resolve(undefined) : inner.get(key);
    },
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

/** The case each broken store must fail, by a part of its name. */
const PAGES = 'no page limit';
const AMOUNTS = 'amounts come back exactly';
const CREATE = 'create adds an entry that get returns as it was given';
const REPLACE = 'replace keeps every field';

describe('paymentsJournalStoreConformance', () => {
  it('passes a store that keeps the contract', async () => {
    expect(await failedCases(new InMemoryPaymentsJournal())).toEqual([]);
  });

  it.each([
    ['lists one page only (a LIMIT 100 left in)', { list: (all) => all.slice(0, 100) }, PAGES],
    ['lists one page only (a LIMIT 1000 left in)', { list: (all) => all.slice(0, 1000) }, PAGES],
    ['compares keys without case (a MySQL collation)', { caseless: true }, 'differ only in case'],
    ['cuts keys to 64 characters (a VARCHAR(64) column)', { keyLength: 64 }, '255 characters'],
    ['cuts keys to 191 characters (an index limit)', { keyLength: 191 }, '255 characters'],
    [
      'merges a replacement into the stored entry',
      { mergingReplace: true },
      'replace drops the fields',
    ],
    [
      'keeps amounts as float32 (a REAL column)',
      { written: (entry) => ({ ...entry, amount: Math.fround(entry.amount ?? 0) }) },
      AMOUNTS,
    ],
    [
      'keeps amounts to 2 decimals (a DECIMAL(14,2) column)',
      { written: (entry) => ({ ...entry, amount: Math.round((entry.amount ?? 0) * 100) / 100 }) },
      AMOUNTS,
    ],
    [
      'keeps times to the second',
      {
        written: (entry) => ({
          ...entry,
          startedAt: entry.startedAt.replace(/\.\d{3}Z$/, '.000Z'),
        }),
      },
      CREATE,
    ],
    [
      'keeps the first and the last send only',
      {
        written: (entry) => ({
          ...entry,
          calls: entry.calls.length > 2 ? [entry.calls[0], entry.calls.at(-1)!] : entry.calls,
        }),
      },
      REPLACE,
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
      CREATE,
    ],
    [
      'drops the state filter when since is given',
      { query: (query) => (query?.since ? { since: query.since } : query) },
      'filtered by since and by current state',
    ],
    [
      'keeps only the first fields of each send',
      {
        written: (entry) => ({
          ...entry,
          calls: entry.calls.map(({ callId, startedAt }) => ({ callId, startedAt })),
        }),
      },
      REPLACE,
    ],
    [
      'drops the note and the settled status',
      { written: ({ note: _note, settledStatus: _status, ...rest }) => rest },
      REPLACE,
    ],
    [
      'indexes the references of accepted entries only',
      { indexesReference: (entry) => entry.state === 'accepted' },
      'any state, not only accepted',
    ],
    [
      'orders the list by updatedAt',
      {
        list: (all) => [...all].sort((a, b) => Date.parse(a.updatedAt) - Date.parse(b.updatedAt)),
      },
      'never by updatedAt',
    ],
  ] as [string, Parameters<typeof brokenStore>[0], string][])(
    'fails a store that %s',
    async (_, fault, expected) => {
      expect(await failedCases(brokenStore(fault))).toContainEqual(
        expect.stringContaining(expected),
      );
    },
  );
});

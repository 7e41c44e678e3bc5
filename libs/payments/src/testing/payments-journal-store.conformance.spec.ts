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
  /** `create` of an equal fingerprint taken for its own retried insert: `created: true`. */
  sameRequestIsOwn?: boolean;
  /** A unique reference column: a second entry on one reference is refused. */
  uniqueReference?: boolean;
  /** `list()` without states reads a replica that still has each entry's first version. */
  staleUnfilteredList?: boolean;
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
  const firstVersions = new Map<string, PaymentsJournalEntry>();
  return {
    create: async (entry) => {
      const there = await inner.get(held(entry.idempotencyKey));
      if (fault.sameRequestIsOwn && there?.fingerprint === entry.fingerprint) {
        return { created: true, entry: there };
      }
      const created = await inner.create(
        written({ ...entry, idempotencyKey: held(entry.idempotencyKey) }),
      );
      if (created.created) firstVersions.set(created.entry.idempotencyKey, created.entry);
      return created;
    },
    replace: async (next) => {
      if (fault.uniqueReference && next.reference !== undefined) {
        const holder = await inner.findByReference(next.reference);
        if (holder !== undefined && holder.idempotencyKey !== next.idempotencyKey) return false;
      }
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
    list: async (query) => {
      const listed = (fault.list ?? ((entries) => entries))(
        await inner.list(fault.query ? fault.query(query) : query),
      );
      if (!fault.staleUnfilteredList || query?.states !== undefined) return listed;
      return listed.map((entry) => firstVersions.get(entry.idempotencyKey) ?? entry);
    },
  };
}

/**
 * `entries` (oldest first) as a cursor on `startedAt` alone reads them, `WHERE started_at > :last
 * ORDER BY started_at LIMIT :page`: the rest of the millisecond a page ends in is skipped.
 */
function pagedOnStartedAt(entries: PaymentsJournalEntry[], page: number): PaymentsJournalEntry[] {
  const read: PaymentsJournalEntry[] = [];
  let last = -Infinity;
  for (;;) {
    const next = entries.filter((entry) => Date.parse(entry.startedAt) > last).slice(0, page);
    if (next.length === 0) return read;
    read.push(...next);
    last = Date.parse(next.at(-1)!.startedAt);
  }
}

/** `entry` without its empty lists, as a compacting serialiser writes it. */
function withoutEmptyLists(entry: PaymentsJournalEntry): PaymentsJournalEntry {
  return Object.fromEntries(
    Object.entries(entry).filter(([, value]) => !Array.isArray(value) || value.length > 0),
  ) as unknown as PaymentsJournalEntry;
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
    [
      'answers created: true for the same request already held (an insert on the fingerprint)',
      { sameRequestIsOwn: true },
      'created: false for the same request too',
    ],
    [
      'pages the list on startedAt with no tie-breaker',
      { list: (all) => pagedOnStartedAt(all, 100) },
      'started in the same millisecond once',
    ],
    ['leaves empty lists out', { written: withoutEmptyLists }, 'the lists that are empty'],
    [
      "fills a missing currency and payee with '' (NOT NULL DEFAULT '' columns)",
      {
        written: (entry) => ({
          ...entry,
          currency: entry.currency ?? '',
          payee: entry.payee ?? '',
        }),
      },
      'without the fields it lacks',
    ],
    [
      "drops the service's reason and a resolution's times",
      {
        written: ({
          settledReason: _reason,
          resolvedAt: _resolved,
          unconfirmed: _unconfirmed,
          ...rest
        }) => rest,
      },
      REPLACE,
    ],
    [
      'refuses a second entry on one reference (a unique column)',
      { uniqueReference: true },
      'finds the entry that first held a reference',
    ],
    [
      'lists without states from a replica behind the writes',
      { staleUnfilteredList: true },
      'filtered by since and by current state',
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

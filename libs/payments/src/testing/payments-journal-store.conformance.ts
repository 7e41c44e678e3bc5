import { deepStrictEqual, ok, strictEqual } from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import type {
  PaymentsJournalEntry,
  PaymentsJournalStore,
} from '../journal/payments-journal.interfaces';

/** One check of the store contract (docs/journal.md, "The store contract"). */
export interface PaymentsJournalStoreConformanceCase {
  readonly name: string;
  /** Rejects (node:assert) when `store` breaks the contract. Uses keys of its own: stores may be shared. */
  readonly run: (store: PaymentsJournalStore) => Promise<void>;
}

/** A fresh entry under a new key, `startedAt` `offsetMs` after a fixed instant. */
function entry(
  run: string,
  name: string,
  offsetMs = 0,
  changes: Partial<PaymentsJournalEntry> = {},
): PaymentsJournalEntry {
  const at = new Date(Date.UTC(2026, 0, 1) + offsetMs).toISOString();
  return {
    idempotencyKey: `conformance-${run}-${name}`,
    operation: 'payouts.mpesa',
    account: 'default',
    amount: 150.5,
    currency: 'KES',
    fingerprint: `fp-${name}`,
    payee: `kid.payee-${name}`,
    state: 'started',
    version: 1,
    startedAt: at,
    updatedAt: at,
    deadlineAt: at,
    calls: [{ callId: `call-${name}`, startedAt: at }],
    ...changes,
  };
}

/** `entry` moved to its next version with `changes`. */
function next(
  current: PaymentsJournalEntry,
  changes: Partial<PaymentsJournalEntry>,
): PaymentsJournalEntry {
  return { ...current, ...changes, version: current.version + 1 };
}

/** The entries of `list` that this run wrote, by key. */
function ours(entries: PaymentsJournalEntry[], run: string): string[] {
  return entries
    .map((listed) => listed.idempotencyKey)
    .filter((key) => key.startsWith(`conformance-${run}-`));
}

const CASES: readonly PaymentsJournalStoreConformanceCase[] = [
  {
    name: 'create adds an entry that get returns as it was given, every field kept',
    run: async (store) => {
      const run = randomUUID();
      const given = entry(run, 'a', 0, {
        calls: [{ callId: 'c1', startedAt: '2026-01-01T00:00:00.000Z', resend: true }],
        answer: { success: true, transaction_reference: 'REF1eW', status: 'SUCCESS' },
      });
      const created = await store.create(given);
      strictEqual(created.created, true);
      deepStrictEqual(created.entry, given);
      deepStrictEqual(await store.get(given.idempotencyKey), given);
      strictEqual(await store.get(`conformance-${run}-absent`), undefined);
    },
  },
  {
    name: 'replace keeps every field an entry may have, in each send too',
    run: async (store) => {
      const run = randomUUID();
      const first = entry(run, 'full');
      await store.create(first);
      const full = next(first, {
        state: 'failed',
        updatedAt: '2026-01-01T00:05:00.000Z',
        reference: `REF-${run}`,
        answer: { success: true, message: 'queued', transaction_reference: `REF-${run}` },
        settledBy: 'manual',
        settledStatus: 'failed',
        note: 'ops: the dashboard shows it failed',
        reason: 'HTTP 502: may have executed',
        deferredEvents: [
          { reference: `DEFERRED-${run}`, kind: 'payout', at: '2026-01-01T00:00:00.500Z' },
          { reference: `DEFERRED2-${run}`, at: '2026-01-01T00:00:00.700Z' },
        ],
        calls: [
          {
            callId: 'c1',
            startedAt: first.startedAt,
            endedAt: '2026-01-01T00:00:01.000Z',
            outcome: 'refused',
            code: 'SERVICE_ERROR',
            mayHaveExecuted: false,
            httpStatus: 400,
            attempts: 1,
          },
          {
            callId: 'c2',
            startedAt: '2026-01-01T00:01:00.000Z',
            endedAt: '2026-01-01T00:01:02.000Z',
            resend: true,
            outcome: 'in_doubt',
            code: 'NETWORK_ERROR',
            mayHaveExecuted: true,
            attempts: 3,
          },
        ],
      });
      strictEqual(await store.replace(full), true);
      deepStrictEqual(await store.get(first.idempotencyKey), full);
      const listed = (await store.list({ states: ['failed'] })).find(
        (found) => found.idempotencyKey === first.idempotencyKey,
      );
      deepStrictEqual(listed, full);
    },
  },
  {
    name: 'create of a key already held returns the entry there and changes nothing',
    run: async (store) => {
      const run = randomUUID();
      const first = entry(run, 'a');
      await store.create(first);
      const second = await store.create({ ...first, fingerprint: 'another', amount: 9 });
      strictEqual(second.created, false);
      deepStrictEqual(second.entry, first);
      deepStrictEqual(await store.get(first.idempotencyKey), first);
    },
  },
  {
    name: 'of 20 concurrent creates of one key exactly one adds its entry, and all see it',
    run: async (store) => {
      const run = randomUUID();
      const base = entry(run, 'a');
      const results = await Promise.all(
        Array.from({ length: 20 }, (_, index) =>
          store.create({ ...base, fingerprint: `fp-${index}` }),
        ),
      );
      const winners = results.filter((result) => result.created);
      strictEqual(winners.length, 1);
      for (const result of results) deepStrictEqual(result.entry, winners[0].entry);
      deepStrictEqual(await store.get(base.idempotencyKey), winners[0].entry);
    },
  },
  {
    name: 'replace over the stored version replaces; over any other version it does not',
    run: async (store) => {
      const run = randomUUID();
      const first = entry(run, 'a');
      await store.create(first);
      const accepted = next(first, { state: 'accepted', reference: `REF-${run}` });
      strictEqual(await store.replace(accepted), true);
      deepStrictEqual(await store.get(first.idempotencyKey), accepted);
      strictEqual(await store.replace(next(first, { state: 'refused' })), false);
      strictEqual(await store.replace({ ...accepted, version: accepted.version + 5 }), false);
      deepStrictEqual(await store.get(first.idempotencyKey), accepted);
    },
  },
  {
    name: 'of 20 concurrent replaces over one version exactly one wins',
    run: async (store) => {
      const run = randomUUID();
      const first = entry(run, 'a');
      await store.create(first);
      const attempts = Array.from({ length: 20 }, (_, index) =>
        next(first, { state: 'in_doubt', reason: `writer ${index}` }),
      );
      const results = await Promise.all(attempts.map((attempt) => store.replace(attempt)));
      strictEqual(results.filter(Boolean).length, 1);
      deepStrictEqual(await store.get(first.idempotencyKey), attempts[results.indexOf(true)]);
    },
  },
  {
    name: 'replace of a key nobody created returns false and creates nothing',
    run: async (store) => {
      const run = randomUUID();
      const ghost = next(entry(run, 'ghost'), { state: 'accepted' });
      strictEqual(await store.replace(ghost), false);
      strictEqual(await store.get(ghost.idempotencyKey), undefined);
    },
  },
  {
    name: 'findByReference finds the entry that first held a reference',
    run: async (store) => {
      const run = randomUUID();
      const reference = `REF-${run}`;
      strictEqual(await store.findByReference(reference), undefined);
      const first = entry(run, 'a');
      await store.create(first);
      const accepted = next(first, { state: 'accepted', reference });
      await store.replace(accepted);
      deepStrictEqual(await store.findByReference(reference), accepted);
      const settled = next(accepted, { state: 'succeeded', settledBy: 'webhook' });
      await store.replace(settled);
      deepStrictEqual(await store.findByReference(reference), settled);
      const other = entry(run, 'b');
      await store.create(other);
      await store.replace(next(other, { state: 'accepted', reference }));
      strictEqual((await store.findByReference(reference))?.idempotencyKey, first.idempotencyKey);
    },
  },
  {
    name: 'list gives entries oldest first, filtered by since and by current state',
    run: async (store) => {
      const run = randomUUID();
      const entries = [entry(run, 'old', 0), entry(run, 'mid', 60_000), entry(run, 'new', 120_000)];
      // Created out of order: the order of the list is by startedAt.
      for (const index of [1, 2, 0]) await store.create(entries[index]);
      const keys = entries.map((listed) => listed.idempotencyKey);
      deepStrictEqual(ours(await store.list(), run), keys);
      deepStrictEqual(
        ours(await store.list({ since: new Date(entries[1].startedAt) }), run),
        keys.slice(1),
      );
      await store.replace(next(entries[1], { state: 'succeeded', reference: `R-${run}` }));
      deepStrictEqual(ours(await store.list({ states: ['started'] }), run), [keys[0], keys[2]]);
      deepStrictEqual(ours(await store.list({ states: ['succeeded'] }), run), [keys[1]]);
      deepStrictEqual(
        ours(await store.list({ states: ['started', 'accepted', 'in_doubt'] }), run),
        [keys[0], keys[2]],
      );
      const listed = (await store.list({ states: ['succeeded'] })).find(
        (found) => found.idempotencyKey === keys[1],
      );
      ok(listed);
      strictEqual(listed.version, 2);
    },
  },
  {
    name: 'list gives every entry that matches, however many (no page limit)',
    run: async (store) => {
      const run = randomUUID();
      const entries = Array.from({ length: 250 }, (_, index) =>
        entry(run, `n${String(index).padStart(3, '0')}`, index * 1000),
      );
      for (const created of entries) await store.create(created);
      const keys = entries.map((listed) => listed.idempotencyKey);
      deepStrictEqual(ours(await store.list(), run), keys);
      deepStrictEqual(ours(await store.list({ states: ['started'] }), run), keys);
    },
  },
  {
    name: 'list orders and filters by startedAt, never by updatedAt',
    run: async (store) => {
      const run = randomUUID();
      const early = entry(run, 'early', 0);
      const late = entry(run, 'late', 60_000);
      await store.create(early);
      await store.create(late);
      // The early call is written last, an hour after the late one started.
      await store.replace(
        next(early, { state: 'in_doubt', updatedAt: '2026-01-01T01:00:00.000Z', reason: 'late' }),
      );
      deepStrictEqual(ours(await store.list(), run), [early.idempotencyKey, late.idempotencyKey]);
      deepStrictEqual(ours(await store.list({ since: new Date(late.startedAt) }), run), [
        late.idempotencyKey,
      ]);
    },
  },
];

/**
 * The checks a {@link PaymentsJournalStore} must pass, for a store you write on your own
 * database: `for (const check of paymentsJournalStoreConformance()) it(check.name, () =>
 * check.run(store))`. Each check writes keys of its own, so one store can serve them all.
 */
export function paymentsJournalStoreConformance(): readonly PaymentsJournalStoreConformanceCase[] {
  return CASES;
}

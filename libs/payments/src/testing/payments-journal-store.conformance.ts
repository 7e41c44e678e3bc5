import { ok, strictEqual } from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { assertSameData } from './assert-same-data';
import type {
  PaymentsJournalCall,
  PaymentsJournalEntry,
  PaymentsJournalStore,
} from '../journal/payments-journal.interfaces';

/** One check of the store contract (docs/journal.md, "The store contract"). */
export interface PaymentsJournalStoreConformanceCase {
  readonly name: string;
  /** Rejects (node:assert) when `store` breaks the contract. Uses keys of its own: stores may be shared. */
  readonly run: (store: PaymentsJournalStore) => Promise<void>;
}

/**
 * The instant the cases' times count from: an hour ago, with milliseconds, so that a store that
 * keeps settled entries for a while, or times to the second only, is judged on today's entries.
 */
const BASE_MS = Math.floor(Date.now() / 1000) * 1000 - 3_600_000 + 123;

/** The ISO time `offsetMs` after {@link BASE_MS}. */
function iso(offsetMs: number): string {
  return new Date(BASE_MS + offsetMs).toISOString();
}

/** A fresh entry under a new key, `startedAt` `offsetMs` after {@link BASE_MS}. */
function entry(
  run: string,
  name: string,
  offsetMs = 0,
  changes: Partial<PaymentsJournalEntry> = {},
): PaymentsJournalEntry {
  const at = iso(offsetMs);
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

/**
 * Rejects unless, of 20 concurrent creates of one key (each entry `made` from one base), exactly
 * one answers `created: true`, and every create and a later get answer its entry.
 */
async function oneOfConcurrentCreates(
  store: PaymentsJournalStore,
  made: (base: PaymentsJournalEntry, index: number) => PaymentsJournalEntry,
): Promise<void> {
  const base = entry(randomUUID(), 'a');
  const results = await Promise.all(
    Array.from({ length: 20 }, (_, index) => store.create(made(base, index))),
  );
  const winners = results.filter((result) => result.created);
  strictEqual(winners.length, 1, 'of concurrent creates of one key, one must answer created: true');
  for (const result of results) assertSameData(result.entry, winners[0].entry);
  assertSameData(await store.get(base.idempotencyKey), winners[0].entry);
}

const CASES: readonly PaymentsJournalStoreConformanceCase[] = [
  {
    name: 'create adds an entry that get returns as it was given, every field kept',
    run: async (store) => {
      const run = randomUUID();
      const given = entry(run, 'a', 0, {
        amount: 200_000.01,
        calls: [{ callId: 'c1', startedAt: iso(0), resend: true }],
        answer: {
          success: true,
          transaction_reference: 'REF1eR',
          status: 'SUCCESS',
          message: '',
          checkout_url: 'https://checkout.example.com/REF1eR',
          bank_account: { name: 'Bank', branch_code: '', account_reference: 'REF1eR' },
        },
      });
      const created = await store.create(given);
      strictEqual(created.created, true, 'create of a new key must answer created: true');
      assertSameData(created.entry, given);
      assertSameData(await store.get(given.idempotencyKey), given);
      strictEqual(
        await store.get(`conformance-${run}-absent`),
        undefined,
        'get of a key nobody created must answer undefined',
      );
    },
  },
  {
    name: 'replace keeps every field an entry may have, in each send too',
    run: async (store) => {
      const run = randomUUID();
      const first = entry(run, 'full');
      await store.create(first);
      // Every field written (`Required`): a column the other checks never fill is checked here.
      const everyCallField: Required<PaymentsJournalCall> = {
        callId: 'c2',
        startedAt: iso(60_000),
        endedAt: iso(62_000),
        resend: true,
        outcome: 'in_doubt',
        code: 'SERVICE_ERROR',
        mayHaveExecuted: true,
        httpStatus: 502,
        serviceStatus: 503,
        attempts: 3,
        weighed: true,
      };
      const full: Required<PaymentsJournalEntry> = {
        ...first,
        version: first.version + 1,
        state: 'failed',
        updatedAt: iso(300_000),
        reference: `REF-${run}`,
        otherExecutions: [`OTHER-${run}`],
        answer: { success: true, message: 'queued', transaction_reference: `REF-${run}` },
        settledBy: 'manual',
        settledStatus: 'failed',
        settledReason: 'DS timeout user cannot be reached',
        note: 'ops: the dashboard shows it failed',
        resolvedAt: iso(290_000),
        unconfirmed: iso(295_000),
        reason: 'HTTP 502: may have executed',
        amount: first.amount!,
        currency: first.currency!,
        payee: first.payee!,
        payeeAccount: `kid.account-${run}`,
        deferredEvents: [
          { reference: `DEFERRED-${run}`, kind: 'payout', at: iso(500) },
          { reference: `DEFERRED2-${run}`, at: iso(700), unplacedSince: iso(900) },
        ],
        calls: [
          {
            callId: 'c1',
            startedAt: first.startedAt,
            endedAt: iso(1_000),
            outcome: 'refused',
            code: 'SERVICE_ERROR',
            mayHaveExecuted: false,
            httpStatus: 400,
            attempts: 1,
          },
          everyCallField,
          {
            callId: 'c3',
            startedAt: iso(120_000),
            endedAt: iso(120_250),
            outcome: 'refused',
            code: 'SERVICE_ERROR',
            mayHaveExecuted: false,
            httpStatus: 409,
            attempts: 1,
          },
        ],
      };
      strictEqual(
        await store.replace(full),
        true,
        'replace over the stored version must answer true',
      );
      assertSameData(await store.get(first.idempotencyKey), full);
      const listed = (await store.list({ states: ['failed'] })).find(
        (found) => found.idempotencyKey === first.idempotencyKey,
      );
      assertSameData(listed, full);
    },
  },
  {
    name: 'an entry comes back without the fields it lacks, and with the lists that are empty',
    run: async (store) => {
      const run = randomUUID();
      // A transfer has no currency and no payee; a held key has no send; `[]` of other executions
      // says a send may have executed without a reference. A NOT NULL DEFAULT column, or a
      // serialiser that leaves empty lists out, changes what the entry says.
      const {
        amount: _amount,
        currency: _currency,
        payee: _payee,
        ...bare
      } = entry(run, 'bare', 0, {
        state: 'in_doubt',
        calls: [],
        otherExecutions: [],
        deferredEvents: [],
        answer: {},
      });
      const created = await store.create(bare);
      strictEqual(created.created, true, 'create of a new key must answer created: true');
      assertSameData(created.entry, bare);
      assertSameData(await store.get(bare.idempotencyKey), bare);
      const listed = (await store.list({ states: ['in_doubt'] })).find(
        (found) => found.idempotencyKey === bare.idempotencyKey,
      );
      assertSameData(listed, bare);
      const changed = next(bare, { reason: 'held', calls: [] });
      strictEqual(
        await store.replace(changed),
        true,
        'replace over the stored version must answer true',
      );
      assertSameData(await store.get(bare.idempotencyKey), changed);
    },
  },
  {
    name: 'amounts come back exactly as written, in every currency',
    run: async (store) => {
      const run = randomUUID();
      const amounts: [number, string][] = [
        [200_000.01, 'KES'],
        [10.125, 'TND'],
        [0.0001, 'USD'],
        [123_456_789.99, 'NGN'],
        [1_234.5678, 'USD'],
      ];
      for (const [index, [amount, currency]] of amounts.entries()) {
        const given = entry(run, `amount-${index}`, index, { amount, currency });
        await store.create(given);
        strictEqual(
          (await store.get(given.idempotencyKey))?.amount,
          amount,
          `${amount} ${currency}`,
        );
      }
    },
  },
  {
    name: 'keys that differ only in case are different keys',
    run: async (store) => {
      const run = randomUUID();
      const lower = entry(run, 'refund-42');
      const upper = { ...entry(run, 'Refund-42'), fingerprint: 'fp-upper' };
      strictEqual(
        (await store.create(lower)).created,
        true,
        'create of a new key must answer created: true',
      );
      strictEqual((await store.create(upper)).created, true, 'a key in another case was held');
      assertSameData(await store.get(lower.idempotencyKey), lower);
      assertSameData(await store.get(upper.idempotencyKey), upper);
    },
  },
  {
    name: 'keys of 255 characters are kept whole: two that differ only in the last are two entries',
    run: async (store) => {
      const run = randomUUID();
      // The longest idempotencyKey a call may carry; a column cut shorter would make these one.
      const longKey = (last: string) => {
        const start = `conformance-${run}-long-`;
        return `${start}${'k'.repeat(254 - start.length)}${last}`;
      };
      const first = { ...entry(run, 'long-a'), idempotencyKey: longKey('a') };
      const second = { ...entry(run, 'long-b'), idempotencyKey: longKey('b') };
      strictEqual(first.idempotencyKey.length, 255);
      strictEqual((await store.create(first)).created, true, 'a key of 255 characters was refused');
      const created = await store.create(second);
      strictEqual(created.created, true, 'a key of 255 characters was taken for another');
      assertSameData(created.entry, second);
      assertSameData(await store.get(first.idempotencyKey), first);
      assertSameData(await store.get(second.idempotencyKey), second);
    },
  },
  {
    name: 'replace drops the fields the next version does not have',
    run: async (store) => {
      const run = randomUUID();
      const doubted = entry(run, 'a', 0, {
        state: 'in_doubt',
        reason: 'SERVICE_ERROR (HTTP 502): may have executed',
        deferredEvents: [{ reference: `REF-${run}`, kind: 'payout', at: iso(5) }],
      });
      await store.create(doubted);
      const { reason: _reason, deferredEvents: _events, ...rest } = doubted;
      const resent = next(rest, { state: 'started' });
      strictEqual(
        await store.replace(resent),
        true,
        'replace over the stored version must answer true',
      );
      // A `reason` or an earlier send's events kept would say what the entry no longer is.
      assertSameData(await store.get(doubted.idempotencyKey), resent);
    },
  },
  {
    name: 'create of a key already held returns the entry there and changes nothing',
    run: async (store) => {
      const run = randomUUID();
      const first = entry(run, 'a');
      await store.create(first);
      const second = await store.create({ ...first, fingerprint: 'another', amount: 9 });
      strictEqual(second.created, false, 'create of a key already held must answer created: false');
      assertSameData(second.entry, first);
      assertSameData(await store.get(first.idempotencyKey), first);
    },
  },
  {
    name: 'create of a key already held answers created: false for the same request too',
    run: async (store) => {
      const run = randomUUID();
      // A second process sends the same request under the key: an insert that takes an equal
      // fingerprint for its own retry and answers created: true lets that process send it again.
      const first = entry(run, 'a');
      await store.create(first);
      const again = { ...first, calls: [{ callId: 'another-process', startedAt: iso(10) }] };
      const second = await store.create(again);
      strictEqual(second.created, false, 'create of a key already held must answer created: false');
      assertSameData(second.entry, first);
      const same = await store.create(first);
      strictEqual(
        same.created,
        false,
        'create of an entry already there must answer created: false',
      );
      assertSameData(same.entry, first);
      assertSameData(await store.get(first.idempotencyKey), first);
      const held = next(first, { state: 'accepted', reference: `REF-${run}` });
      await store.replace(held);
      const late = await store.create(again);
      strictEqual(late.created, false, 'create of a key already held must answer created: false');
      assertSameData(late.entry, held);
    },
  },
  {
    name: 'of 20 concurrent creates of one request under one key exactly one adds its entry',
    run: (store) =>
      oneOfConcurrentCreates(store, (base, index) => ({
        ...base,
        calls: [{ callId: `process-${index}`, startedAt: iso(0) }],
      })),
  },
  {
    name: 'of 20 concurrent creates of one key exactly one adds its entry, and all see it',
    run: (store) =>
      oneOfConcurrentCreates(store, (base, index) => ({ ...base, fingerprint: `fp-${index}` })),
  },
  {
    name: 'replace over the stored version replaces; over any other version it does not',
    run: async (store) => {
      const run = randomUUID();
      const first = entry(run, 'a');
      await store.create(first);
      const accepted = next(first, { state: 'accepted', reference: `REF-${run}` });
      strictEqual(
        await store.replace(accepted),
        true,
        'replace over the stored version must answer true',
      );
      assertSameData(await store.get(first.idempotencyKey), accepted);
      strictEqual(
        await store.replace(next(first, { state: 'refused' })),
        false,
        'replace over a version no longer stored must answer false',
      );
      strictEqual(
        await store.replace({ ...accepted, version: accepted.version + 5 }),
        false,
        'replace that skips versions must answer false',
      );
      assertSameData(await store.get(first.idempotencyKey), accepted);
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
      strictEqual(
        results.filter(Boolean).length,
        1,
        'of concurrent replaces over one version, one must answer true',
      );
      assertSameData(await store.get(first.idempotencyKey), attempts[results.indexOf(true)]);
    },
  },
  {
    name: 'replace of a key nobody created returns false and creates nothing',
    run: async (store) => {
      const run = randomUUID();
      const ghost = next(entry(run, 'ghost'), { state: 'accepted' });
      strictEqual(
        await store.replace(ghost),
        false,
        'replace of a key nobody created must answer false',
      );
      strictEqual(
        await store.get(ghost.idempotencyKey),
        undefined,
        'replace of a key nobody created must not create it',
      );
    },
  },
  {
    name: 'findByReference finds the entry that first held a reference',
    run: async (store) => {
      const run = randomUUID();
      const reference = `REF-${run}`;
      strictEqual(
        await store.findByReference(reference),
        undefined,
        'findByReference of a reference no entry holds must answer undefined',
      );
      const first = entry(run, 'a');
      await store.create(first);
      const accepted = next(first, { state: 'accepted', reference });
      await store.replace(accepted);
      assertSameData(await store.findByReference(reference), accepted);
      const settled = next(accepted, { state: 'succeeded', settledBy: 'webhook' });
      await store.replace(settled);
      assertSameData(await store.findByReference(reference), settled);
      const other = entry(run, 'b');
      await store.create(other);
      // Two entries may hold one reference (a forged or misrouted record): a unique index that
      // refuses the second write hides an execution.
      strictEqual(
        await store.replace(next(other, { state: 'accepted', reference })),
        true,
        'replace of an entry to a reference another entry holds must answer true',
      );
      strictEqual(
        (await store.findByReference(reference))?.idempotencyKey,
        first.idempotencyKey,
        'findByReference must answer the entry that held the reference first',
      );
    },
  },
  {
    name: 'findByReference finds a reference that first came with any state, not only accepted',
    run: async (store) => {
      const run = randomUUID();
      // A webhook or a person settles an entry whose answer was lost: its reference first comes
      // with `succeeded` or `failed`; a late answer after a settlement, with `in_doubt`. A store
      // that indexes only `accepted` entries lets one transaction settle a second entry.
      for (const state of ['succeeded', 'failed', 'in_doubt', 'started'] as const) {
        const reference = `REF-${run}-${state}`;
        const created = entry(run, `first-${state}`, 0, { state: 'in_doubt' });
        await store.create(created);
        const changed = next(created, { state, reference });
        await store.replace(changed);
        const found = await store.findByReference(reference);
        strictEqual(
          found?.idempotencyKey,
          created.idempotencyKey,
          `findByReference must find a reference first written with state ${state}`,
        );
        assertSameData(found, changed);
      }
    },
  },
  {
    name: 'findByReference finds an entry by each of its otherExecutions too, first holder first',
    run: async (store) => {
      const run = randomUUID();
      // A call the service executed twice: a webhook of the second transaction must find the
      // entry it belongs to, not pass for an unknown reference that settles another entry.
      const [first, second, third] = ['1', '2', '3'].map((n) => `REF-${run}-${n}`);
      const held = entry(run, 'held-first');
      await store.create(held);
      await store.replace(next(held, { state: 'accepted', reference: third }));
      const twice = entry(run, 'twice');
      await store.create(twice);
      const accepted = next(twice, { state: 'accepted', reference: first });
      await store.replace(accepted);
      const doubted = next(accepted, {
        state: 'in_doubt',
        reason: 'executed more than once',
        otherExecutions: [second, third],
      });
      await store.replace(doubted);
      for (const reference of [first, second]) {
        assertSameData(await store.findByReference(reference), doubted);
      }
      strictEqual(
        (await store.findByReference(third))?.idempotencyKey,
        held.idempotencyKey,
        'findByReference must answer the entry that held the reference first',
      );
      const resolved = next(doubted, { state: 'succeeded', settledBy: 'manual', note: 'ops' });
      await store.replace(resolved);
      assertSameData(await store.findByReference(second), resolved);
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
      assertSameData(ours(await store.list(), run), keys);
      assertSameData(
        ours(await store.list({ since: new Date(entries[1].startedAt) }), run),
        keys.slice(1),
      );
      await store.replace(next(entries[1], { state: 'succeeded', reference: `R-${run}` }));
      assertSameData(ours(await store.list({ states: ['started'] }), run), [keys[0], keys[2]]);
      assertSameData(ours(await store.list({ states: ['succeeded'] }), run), [keys[1]]);
      assertSameData(ours(await store.list({ states: ['started', 'accepted', 'in_doubt'] }), run), [
        keys[0],
        keys[2],
      ]);
      const since = new Date(entries[1].startedAt);
      assertSameData(ours(await store.list({ since, states: ['succeeded'] }), run), [keys[1]]);
      assertSameData(ours(await store.list({ since, states: ['started'] }), run), [keys[2]]);
      const listed = (await store.list({ states: ['succeeded'] })).find(
        (found) => found.idempotencyKey === keys[1],
      );
      ok(listed, 'list({ states }) must list an entry by its current state');
      strictEqual(listed.version, 2, 'list must give each entry as it stands now');
      const unfiltered = (await store.list()).find((found) => found.idempotencyKey === keys[1]);
      strictEqual(unfiltered?.version, 2, 'list() must give each entry as it stands now');
      strictEqual(unfiltered.state, 'succeeded', 'list() must give each entry as it stands now');
    },
  },
  {
    name: 'list gives every entry that matches, however many (no page limit)',
    run: async (store) => {
      const run = randomUUID();
      // More than the pages drivers and ORMs tend to cut at (100, 500, 1,000).
      const entries = Array.from({ length: 1_050 }, (_, index) =>
        entry(run, `n${String(index).padStart(4, '0')}`, index * 1000),
      );
      // In batches: a store a few milliseconds away still answers within a test's timeout.
      for (let start = 0; start < entries.length; start += 50) {
        await Promise.all(entries.slice(start, start + 50).map((created) => store.create(created)));
      }
      const keys = entries.map((listed) => listed.idempotencyKey);
      assertSameData(ours(await store.list(), run), keys);
      assertSameData(ours(await store.list({ states: ['started'] }), run), keys);
    },
  },
  {
    name: 'list gives each of many entries that started in the same millisecond once',
    run: async (store) => {
      const run = randomUUID();
      // Concurrent calls share their start times: a cursor on startedAt alone (`WHERE started_at
      // > :last LIMIT 100`) skips the rest of a millisecond at each page's end.
      const entries = Array.from({ length: 1_050 }, (_, index) =>
        entry(run, `tie${String(index).padStart(4, '0')}`, Math.floor(index / 350) * 1000),
      );
      for (let start = 0; start < entries.length; start += 50) {
        await Promise.all(entries.slice(start, start + 50).map((created) => store.create(created)));
      }
      const keys = entries.map((listed) => listed.idempotencyKey);
      for (const query of [undefined, { states: ['started' as const] }]) {
        const listed = (await store.list(query)).filter((found) =>
          found.idempotencyKey.startsWith(`conformance-${run}-`),
        );
        assertSameData(listed.map((found) => found.idempotencyKey).sort(), keys);
        const times = listed.map((found) => Date.parse(found.startedAt));
        ok(
          times.every((time, index) => index === 0 || times[index - 1] <= time),
          'list must give entries oldest startedAt first',
        );
      }
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
        next(early, { state: 'in_doubt', updatedAt: iso(3_600_000), reason: 'late' }),
      );
      assertSameData(ours(await store.list(), run), [early.idempotencyKey, late.idempotencyKey]);
      assertSameData(ours(await store.list({ since: new Date(late.startedAt) }), run), [
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

/**
 * The in-memory journal at its bound, apart from the load rounds. In the rounds, (a+j)'s journal
 * holds at most a few tens of thousands of entries, far under its default bound of 100,000; an
 * app's process reaches the bound (at 100 calls/s, in under 17 minutes) and then stays at it. Past
 * the bound, each `create` first forgets an entry: the oldest settled one (`succeeded`, `failed`,
 * `refused`), else the oldest; an `accepted` entry is not settled until its webhook or a reconcile
 * pass settles it. Finding the settled one once walked every entry (16 ms a create at 100,000,
 * docs/performance.md). This times `create` in a journal that holds `entries` entries, all
 * settled, and all `accepted`, against an empty one. Runs in a worker of its own (worker.ts).
 */
import { createHash, randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import type { PaymentsJournalEntry, PaymentsJournalState } from '@malipo/nestjs';
import { median } from './stats';

export interface JournalCapResult {
  /** The journal's bound (`maxEntries`), which it holds when `create` is timed. */
  entries: number;
  /** Creates timed per repetition. */
  creates: number;
  /** µs per `create` into an empty journal: nothing to forget. */
  emptyUs: number;
  /** µs per `create` at the bound, every entry settled: the oldest one goes. */
  settledUs: number;
  /** µs per `create` at the bound, every entry `accepted`: the walk finds none settled. */
  noneSettledUs: number;
}

const REPETITIONS = 5;

/** An entry as the journal holds one after an accepted `collections.mpesa` call. */
function entry(index: number, state: PaymentsJournalState): PaymentsJournalEntry {
  const at = new Date(Date.UTC(2026, 0, 1) + index).toISOString();
  const callId = randomUUID();
  return {
    idempotencyKey: randomUUID(),
    operation: 'collections.mpesa',
    account: 'default',
    amount: 100,
    currency: 'KES',
    fingerprint: createHash('sha256').update(callId).digest('base64'),
    state,
    version: 1,
    startedAt: at,
    updatedAt: at,
    deadlineAt: at,
    reference: `TX-${index}`,
    answer: { success: true, message: 'Processed successfully', transaction_reference: 'TX' },
    calls: [{ callId, startedAt: at, endedAt: at, outcome: 'accepted' }],
  };
}

/** µs per `create` of `creates` new entries, median of the repetitions. */
async function timeCreates(
  journal: { create(entry: PaymentsJournalEntry): Promise<unknown> },
  creates: number,
  first: number,
): Promise<number> {
  const rounds: number[] = [];
  let next = first;
  for (let round = 0; round < REPETITIONS; round++) {
    const batch = Array.from({ length: creates }, () => entry(next++, 'started'));
    const started = performance.now();
    for (const item of batch) await journal.create(item);
    rounds.push(((performance.now() - started) * 1000) / creates);
  }
  return median(rounds);
}

export async function measureJournalCap(
  entries: number,
  creates: number,
): Promise<JournalCapResult> {
  const [{ Logger }, { InMemoryPaymentsJournal }] = await Promise.all([
    import('@nestjs/common'),
    import('@malipo/nestjs'),
  ]);
  // A full journal with nothing settled warns on every create; an app's logger would print each
  // line, here only the message is built, so the figure is a floor.
  Logger.overrideLogger(false);
  const filled = async (state: PaymentsJournalState) => {
    const journal = new InMemoryPaymentsJournal({ maxEntries: entries });
    for (let i = 0; i < entries; i++) await journal.create(entry(i, state));
    return journal;
  };
  // Warms `create` and the walk before any timing.
  await timeCreates(new InMemoryPaymentsJournal({ maxEntries: 100 }), 1_000, 0);
  const emptyUs = await timeCreates(
    new InMemoryPaymentsJournal({ maxEntries: entries }),
    creates,
    entries,
  );
  const settledUs = await timeCreates(await filled('succeeded'), creates, entries);
  const noneSettledUs = await timeCreates(await filled('accepted'), creates, entries);
  return { entries, creates, emptyUs, settledUs, noneSettledUs };
}

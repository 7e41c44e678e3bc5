import { Logger } from '@nestjs/common';
import { assertKnownOptions, wholeNumberOption } from '../known-options';
import { PAYMENTS_LOGGER_CONTEXT } from '../payments.constants';
import { FINAL_JOURNAL_STATES, journalEntryReferences } from './payments-journal.interfaces';
import type {
  PaymentsJournalEntry,
  PaymentsJournalQuery,
  PaymentsJournalState,
  PaymentsJournalStore,
} from './payments-journal.interfaces';

/** Options of {@link InMemoryPaymentsJournal}. */
export interface InMemoryPaymentsJournalOptions {
  /** Entries kept; past it the oldest settled entry is forgotten first. Default 100 000. */
  maxEntries?: number;
}

const OPTION_NAMES: Readonly<Record<keyof InMemoryPaymentsJournalOptions, true>> = {
  maxEntries: true,
};

/**
 * Entries {@link sealedJournalEntry} froze: held as they are, with no walk to prove it (measured:
 * ~5 µs per write in a loaded process, docs/performance.md, "The journal's cost").
 */
const SEALED_ENTRIES = new WeakSet<PaymentsJournalEntry>();

/**
 * `entry`, deeply frozen and known so to {@link InMemoryPaymentsJournal}, which then holds it
 * without a copy: what the payments journal writes never changes afterwards, and the next entry
 * shares its unchanged sends.
 * @internal
 */
export function sealedJournalEntry<T extends PaymentsJournalEntry>(entry: T): T {
  if (SEALED_ENTRIES.has(entry)) return entry;
  deepFrozen(entry);
  SEALED_ENTRIES.add(entry);
  return entry;
}

/** Settled entries are forgotten first when the journal is full. */
function isSettled(state: PaymentsJournalState): boolean {
  return FINAL_JOURNAL_STATES.has(state) || state === 'refused';
}

/**
 * The journal in this process's memory: the embedded default for one instance. **Lost on
 * restart**: it answers repeated calls and lists what is in doubt while the process lives; a team
 * that must answer after a crash, or runs several instances, uses `RedisPaymentsJournal`
 * (`@malipo/nestjs/redis`) or its own store. Bounded by `maxEntries`: past it, the oldest settled
 * (`succeeded`, `failed`, `refused`) entry goes first, and an open one only when none is settled
 * (logged).
 */
export class InMemoryPaymentsJournal implements PaymentsJournalStore {
  private readonly logger = new Logger(PAYMENTS_LOGGER_CONTEXT);
  /**
   * Key → entry, in the order the entries were created. Each entry is deeply frozen and the
   * journal's own: an entry given already frozen (as the payments journal gives them) is held as
   * it is, any other is copied first, so that nothing a caller holds can change the journal, and a
   * read hands out the entry itself. No copy, stringify or parse on the path of a call: each
   * journaled call writes twice (docs/performance.md, "The journal's cost").
   */
  private readonly entries = new Map<string, PaymentsJournalEntry>();
  /** Reference → key of the first entry that held it. */
  private readonly byReference = new Map<string, string>();
  /**
   * Keys of the entries that are settled (`succeeded`, `failed`, `refused`), in the order they
   * were settled: the first is the one to forget when full, found without a scan of every entry.
   */
  private readonly settled = new Set<string>();
  /**
   * Iterators that stay at the oldest entry and the oldest settled one: a Map or Set keeps deleted
   * slots until it is rehashed, so a new iterator for every eviction would step over all the
   * entries forgotten before (measured: 16 µs per create when full). An iterator skips deleted
   * keys and sees keys added after it; it ends for good once done, so it is made anew then.
   */
  private oldestCursor?: Iterator<string>;
  private settledCursor?: Iterator<string>;
  /** Open entries forgotten since the last warning, which is logged at most once a minute. */
  private forgottenOpen = 0;
  private lastWarningAt = -Infinity;
  private readonly maxEntries: number;

  /** @throws PaymentsValidationError for an unknown option or a `maxEntries` below 1. */
  constructor(options: InMemoryPaymentsJournalOptions = {}) {
    assertKnownOptions('InMemoryPaymentsJournal', options, OPTION_NAMES);
    this.maxEntries = wholeNumberOption(
      'InMemoryPaymentsJournal',
      'maxEntries',
      options.maxEntries ?? 100_000,
      { min: 1 },
    );
  }

  /** Entries held now. */
  get size(): number {
    return this.entries.size;
  }

  create(entry: PaymentsJournalEntry): Promise<{ created: boolean; entry: PaymentsJournalEntry }> {
    const existing = this.entries.get(entry.idempotencyKey);
    if (existing !== undefined) {
      return Promise.resolve({ created: false, entry: existing });
    }
    if (this.entries.size >= this.maxEntries) this.forgetOne();
    this.hold(entry);
    return Promise.resolve({ created: true, entry });
  }

  replace(next: PaymentsJournalEntry): Promise<boolean> {
    const current = this.entries.get(next.idempotencyKey);
    if (current === undefined || current.version !== next.version - 1) {
      return Promise.resolve(false);
    }
    this.hold(next);
    return Promise.resolve(true);
  }

  get(idempotencyKey: string): Promise<PaymentsJournalEntry | undefined> {
    return Promise.resolve(this.entries.get(idempotencyKey));
  }

  findByReference(reference: string): Promise<PaymentsJournalEntry | undefined> {
    const key = this.byReference.get(reference);
    return Promise.resolve(key === undefined ? undefined : this.entries.get(key));
  }

  list(query: PaymentsJournalQuery = {}): Promise<PaymentsJournalEntry[]> {
    const since = query.since?.getTime();
    const states = query.states && new Set(query.states);
    const found: { entry: PaymentsJournalEntry; startedAtMs: number }[] = [];
    for (const entry of this.entries.values()) {
      if (states && !states.has(entry.state)) continue;
      const startedAtMs = Date.parse(entry.startedAt);
      if (since !== undefined && startedAtMs < since) continue;
      found.push({ entry, startedAtMs });
    }
    // Created in call order, which a slow writer can make differ from the order of startedAt.
    found.sort((a, b) => a.startedAtMs - b.startedAtMs);
    return Promise.resolve(found.map((held) => held.entry));
  }

  /** Forgets every entry. */
  clear(): void {
    this.entries.clear();
    this.byReference.clear();
    this.settled.clear();
    this.oldestCursor = undefined;
    this.settledCursor = undefined;
  }

  /** Holds `entry` as it is now, and indexes it by reference and by whether it is settled. */
  private hold(entry: PaymentsJournalEntry): void {
    const key = entry.idempotencyKey;
    this.entries.set(
      key,
      SEALED_ENTRIES.has(entry) || isDeepFrozen(entry)
        ? entry
        : (deepFrozen(ownCopy(entry)) as PaymentsJournalEntry),
    );
    for (const reference of journalEntryReferences(entry)) {
      if (!this.byReference.has(reference)) this.byReference.set(reference, key);
    }
    if (isSettled(entry.state)) this.settled.add(key);
    else this.settled.delete(key);
  }

  private forgetOne(): void {
    let key = this.settled.size > 0 ? this.nextKey('settledCursor', this.settled) : undefined;
    if (key === undefined) {
      key = this.nextKey('oldestCursor', this.entries);
      if (key === undefined) return;
      this.warnForgotten(key);
    }
    const victim = this.entries.get(key);
    this.entries.delete(key);
    this.settled.delete(key);
    for (const reference of victim === undefined ? [] : journalEntryReferences(victim)) {
      if (this.byReference.get(reference) === key) this.byReference.delete(reference);
    }
  }

  /** The oldest key of `keys`, through its lasting iterator (made anew once it ended). */
  private nextKey(
    cursor: 'oldestCursor' | 'settledCursor',
    keys: Map<string, unknown> | Set<string>,
  ): string | undefined {
    let next = this[cursor]?.next();
    if (next === undefined || next.done === true) {
      this[cursor] = keys.keys();
      next = this[cursor].next();
    }
    return next.done === true ? undefined : next.value;
  }

  /** A full journal with nothing settled forgets open entries: said at most once a minute. */
  private warnForgotten(key: string): void {
    this.forgottenOpen += 1;
    const now = Date.now();
    if (now - this.lastWarningAt < 60_000) return;
    this.logger.warn(
      `InMemoryPaymentsJournal is full (${this.maxEntries} entries, none settled): forgot ` +
        `${this.forgottenOpen} open entr${this.forgottenOpen === 1 ? 'y' : 'ies'} since the last ` +
        `warning, the latest ${key}; raise maxEntries or reconcile`,
    );
    this.forgottenOpen = 0;
    this.lastWarningAt = now;
  }
}

/** Whether nothing in `value` can change any more: every object in it is frozen. */
function isDeepFrozen(value: unknown): boolean {
  if (typeof value !== 'object' || value === null) return true;
  if (!Object.isFrozen(value)) return false;
  for (const key in value) {
    if (!isDeepFrozen((value as Record<string, unknown>)[key])) return false;
  }
  return true;
}

/**
 * A copy of JSON-like data that shares nothing mutable with `value`, read as JSON would: fields
 * that are `undefined` are left out.
 */
function ownCopy(value: unknown): unknown {
  if (typeof value !== 'object' || value === null) return value;
  if (Array.isArray(value)) {
    const items: unknown[] = new Array<unknown>(value.length);
    for (let index = 0; index < value.length; index += 1) items[index] = ownCopy(value[index]);
    return items;
  }
  const copy: Record<string, unknown> = {};
  for (const key in value) {
    if (!Object.hasOwn(value, key)) continue;
    const field = (value as Record<string, unknown>)[key];
    if (field !== undefined) copy[key] = ownCopy(field);
  }
  return copy;
}

function deepFrozen(value: unknown): unknown {
  if (typeof value === 'object' && value !== null) {
    for (const field of Object.values(value)) deepFrozen(field);
    Object.freeze(value);
  }
  return value;
}

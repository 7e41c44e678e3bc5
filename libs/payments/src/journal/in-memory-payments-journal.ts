import { Logger } from '@nestjs/common';
import { PAYMENTS_LOGGER_CONTEXT } from '../payments.constants';
import { FINAL_JOURNAL_STATES } from './payments-journal.interfaces';
import type {
  PaymentsJournalEntry,
  PaymentsJournalQuery,
  PaymentsJournalStore,
} from './payments-journal.interfaces';

/** Options of {@link InMemoryPaymentsJournal}. */
export interface InMemoryPaymentsJournalOptions {
  /** Entries kept; past it the oldest settled entry is forgotten first. Default 100 000. */
  maxEntries?: number;
}

/** Settled entries are forgotten first when the journal is full. */
function isSettled(entry: PaymentsJournalEntry): boolean {
  return FINAL_JOURNAL_STATES.has(entry.state) || entry.state === 'refused';
}

/** Entries are frozen when stored, so no caller can change the journal behind its back. */
function frozen(entry: PaymentsJournalEntry): PaymentsJournalEntry {
  Object.freeze(entry.calls);
  return Object.freeze(entry);
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
  /** Key → entry, in the order the entries were created. */
  private readonly entries = new Map<string, PaymentsJournalEntry>();
  /** Reference → key of the first entry that held it. */
  private readonly byReference = new Map<string, string>();
  /**
   * Keys of the entries that are settled (`succeeded`, `failed`, `refused`), in the order they
   * were settled: the first is the one to forget when full, found without a scan of every entry.
   */
  private readonly settled = new Set<string>();
  private readonly maxEntries: number;

  constructor(options: InMemoryPaymentsJournalOptions = {}) {
    const maxEntries = options.maxEntries ?? 100_000;
    if (!Number.isSafeInteger(maxEntries) || maxEntries < 1) {
      throw new Error('InMemoryPaymentsJournal: maxEntries must be a positive integer');
    }
    this.maxEntries = maxEntries;
  }

  /** Entries held now. */
  get size(): number {
    return this.entries.size;
  }

  create(entry: PaymentsJournalEntry): Promise<{ created: boolean; entry: PaymentsJournalEntry }> {
    const existing = this.entries.get(entry.idempotencyKey);
    if (existing !== undefined) return Promise.resolve({ created: false, entry: existing });
    if (this.entries.size >= this.maxEntries) this.forgetOne();
    const stored = frozen({ ...entry });
    this.entries.set(entry.idempotencyKey, stored);
    this.index(stored);
    if (isSettled(stored)) this.settled.add(stored.idempotencyKey);
    return Promise.resolve({ created: true, entry: stored });
  }

  replace(next: PaymentsJournalEntry): Promise<boolean> {
    const current = this.entries.get(next.idempotencyKey);
    if (current === undefined || current.version !== next.version - 1) {
      return Promise.resolve(false);
    }
    const stored = frozen({ ...next });
    this.entries.set(next.idempotencyKey, stored);
    this.index(stored);
    if (isSettled(stored)) this.settled.add(stored.idempotencyKey);
    else this.settled.delete(stored.idempotencyKey);
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
    const found: PaymentsJournalEntry[] = [];
    for (const entry of this.entries.values()) {
      if (since !== undefined && Date.parse(entry.startedAt) < since) continue;
      if (states && !states.has(entry.state)) continue;
      found.push(entry);
    }
    // Created in call order, which a slow writer can make differ from the order of startedAt.
    return Promise.resolve(found.sort((a, b) => Date.parse(a.startedAt) - Date.parse(b.startedAt)));
  }

  /** Forgets every entry. */
  clear(): void {
    this.entries.clear();
    this.byReference.clear();
    this.settled.clear();
  }

  private index(entry: PaymentsJournalEntry): void {
    if (entry.reference !== undefined && !this.byReference.has(entry.reference)) {
      this.byReference.set(entry.reference, entry.idempotencyKey);
    }
  }

  private forgetOne(): void {
    // The oldest settled entry: a Set keeps the order its keys were added in.
    const settledKey = this.settled.values().next().value;
    let victim = settledKey === undefined ? undefined : this.entries.get(settledKey);
    if (victim === undefined) {
      const oldest = this.entries.values().next().value;
      if (oldest === undefined) return;
      victim = oldest;
      this.logger.warn(
        `InMemoryPaymentsJournal is full (${this.maxEntries} entries, none settled): forgot the ` +
          `open entry ${victim.idempotencyKey} (${victim.state}); raise maxEntries or reconcile`,
      );
    }
    this.entries.delete(victim.idempotencyKey);
    this.settled.delete(victim.idempotencyKey);
    if (
      victim.reference !== undefined &&
      this.byReference.get(victim.reference) === victim.idempotencyKey
    ) {
      this.byReference.delete(victim.reference);
    }
  }
}

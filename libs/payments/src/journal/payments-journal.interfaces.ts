import type { PaymentsOperationName } from '../operation-names';

/**
 * Where a money-moving call stands (docs/journal.md has the state machine):
 * - `started`: journaled, being sent now; left by a process that died, it counts as `in_doubt`
 *   once `deadlineAt` has passed;
 * - `accepted`: the service accepted it and gave its reference; the outcome is not known yet;
 * - `succeeded` | `failed`: the final outcome, from a confirmed webhook or a status look-up;
 * - `refused`: never executed (refused with a 4xx, or not sent): the same call may be sent again
 *   (a key held for a payout-run takeover only with `resend`);
 * - `in_doubt`: may have executed, with no reference or no final outcome: it needs a look.
 */
export type PaymentsJournalState =
  'started' | 'accepted' | 'succeeded' | 'failed' | 'refused' | 'in_doubt';

/** Every state, in the order of docs/journal.md. */
export const PAYMENTS_JOURNAL_STATES: readonly PaymentsJournalState[] = [
  'started',
  'accepted',
  'succeeded',
  'failed',
  'refused',
  'in_doubt',
];

/**
 * How long after a person's `succeeded` or `failed`, taken while the service's record was not
 * final, `reconcile()` looks the record up before it marks the entry `unconfirmed`: 72 hours.
 */
export const PAYMENTS_CONFIRMATION_WINDOW_MS = 72 * 60 * 60 * 1000;

/** States after which nothing changes an entry any more. */
export const FINAL_JOURNAL_STATES: ReadonlySet<PaymentsJournalState> = new Set([
  'succeeded',
  'failed',
]);

/** One send of the call under its key (with its HTTP retries), and how it ended. */
export interface PaymentsJournalCall {
  /** Random id of the send, so that only the process that made it records its end. */
  readonly callId: string;
  readonly startedAt: string;
  readonly endedAt?: string;
  /** Sent again with `{ resend: true }` over an entry `in_doubt`. */
  readonly resend?: true;
  /** `accepted`, `refused` or `in_doubt`; absent while the send is in flight. */
  readonly outcome?: 'accepted' | 'refused' | 'in_doubt';
  /** The library's code of a failed send (a `PaymentsErrorCode`: `TIMEOUT`, `SERVICE_ERROR`...). */
  readonly code?: string;
  readonly mayHaveExecuted?: boolean;
  /** HTTP status of the last answer, when one came. */
  readonly httpStatus?: number;
  /** HTTP attempts made by this send. */
  readonly attempts?: number;
  /** The status the service's body gave, when it is not `httpStatus` (`{"status":429}` under 200). */
  readonly serviceStatus?: number;
  /**
   * Ended before a person resolved the entry, who weighed it then: no longer counted as a send that
   * may have executed, except by a record that settles the entry without a reference
   * (docs/journal.md, "By a person"). Set by the journal, never by a clock's reading.
   */
  readonly weighed?: true;
}

/**
 * What the journal holds of one money-moving call: its intent, each send's end and its outcome.
 * No phone number, account number or name: the request is kept only as a keyed fingerprint.
 */
export interface PaymentsJournalEntry {
  /** The call's `Idempotency-Key` (also `malipo_key` on its webhook). */
  readonly idempotencyKey: string;
  /** e.g. `payouts.mpesa`. */
  readonly operation: PaymentsOperationName;
  /** Name of the `PaymentsModule` registration; `default` for the unnamed one. */
  readonly account: string;
  readonly amount?: number;
  readonly currency?: string;
  /**
   * HMAC-SHA256 (base64) of the operation and its canonical wire request, keyed by a secret of the
   * client: equal for the same request, and not reversible into a phone number by whoever reads
   * the store.
   */
  readonly fingerprint: string;
  /**
   * Keyed HMAC-SHA256 (base64) of the national number of the request's phone number, after the
   * key's id (`<key id>.<mac>`; docs/journal.md, "The fingerprint"): a record of another person's
   * payment cannot settle the entry.
   */
  readonly payee?: string;
  /**
   * Keyed HMAC-SHA256 (base64) of the request's account number (a pan-African payout's
   * `accountNumber`, a merchant payout's `businessAccount`), written as {@link payee}: tells apart
   * two calls to one contact number (docs/journal.md, "Webhooks", rule 10).
   */
  readonly payeeAccount?: string;
  readonly state: PaymentsJournalState;
  /** Incremented by each change; stores replace an entry only over the version they hold. */
  readonly version: number;
  /** When the call was first journaled (ISO 8601). */
  readonly startedAt: string;
  /** When the entry last changed (ISO 8601). */
  readonly updatedAt: string;
  /** When the send in flight must have ended; a `started` entry past it is `in_doubt`. */
  readonly deadlineAt: string;
  /** The service's transaction reference, once known. */
  readonly reference?: string;
  /**
   * Set when the service may have executed the call more than once under its key (a service that
   * ignored it): the references of its other executions, as far as known (`[]` when a send that
   * may have executed never answered). Stores index them as `reference`. While the entry is not
   * final it stays `in_doubt` whatever a webhook or look-up says: a person resolves it
   * (docs/journal.md, "More than one execution").
   */
  readonly otherExecutions?: readonly string[];
  /**
   * The answer that accepted the call, reduced to its wire fields without personal data
   * (`success`, `message`, `status`, `transaction_reference`, tracking ids, `checkout_url`):
   * a repeated call is answered from it.
   */
  readonly answer?: Readonly<Record<string, unknown>>;
  /**
   * What settled it: `webhook` or `status` (a look-up), with the record's status word; `manual`:
   * a person, through `PaymentsReconciler.resolve()`, with their `note`; `run`: a payout run's
   * cancel closed a `refused` key that never executed (its `reason` says which run).
   */
  readonly settledBy?: 'webhook' | 'status' | 'manual' | 'run';
  readonly settledStatus?: string;
  /**
   * The service's reason for a failure, from its record (`transaction_details.reason`: "DS
   * timeout user cannot be reached"), with the record's phone number, account number and payee's
   * name masked, at most 200 characters.
   */
  readonly settledReason?: string;
  /** What the person who resolved it by hand wrote (who, what they checked). */
  readonly note?: string;
  /** When a person resolved it (ISO 8601); the confirmation window runs from it. */
  readonly resolvedAt?: string;
  /**
   * Why the service's record did not bear out a person's `succeeded` or `failed` taken while it
   * was not final (final with other figures, or still not final or unknown to the service
   * {@link PAYMENTS_CONFIRMATION_WINDOW_MS} after the resolution): `reconcile()` no longer looks
   * it up, and the person's outcome stands, for a look (docs/journal.md, "By a person"). A final
   * record that agrees later clears it.
   */
  readonly unconfirmed?: string;
  /** Why it is `refused` or `in_doubt`, in words (a settlement clears it: `settledBy` says why). */
  readonly reason?: string;
  /**
   * Each send under this key, oldest first: beyond 20, the oldest sends after the first that ended
   * `refused` are dropped; every other send stays (docs/journal.md, "What an entry holds").
   */
  readonly calls: readonly PaymentsJournalCall[];
  /**
   * Webhooks that named the entry by its key alone while its call was being sent, deferred (503):
   * their references, unchecked, at most 5. Should the call's answer never come (its process
   * died), `reconcile()` looks them up once the entry is in doubt (docs/journal.md, "Webhooks").
   */
  readonly deferredEvents?: readonly PaymentsJournalDeferredEvent[];
}

/**
 * The references a store finds `entry` by: its `reference` and its `otherExecutions`.
 * @internal
 */
export function journalEntryReferences(entry: PaymentsJournalEntry): string[] {
  const references = entry.reference === undefined ? [] : [entry.reference];
  for (const other of entry.otherExecutions ?? []) {
    if (!references.includes(other)) references.push(other);
  }
  return references;
}

/** A webhook deferred while its entry's call was being sent (see `deferredEvents`). */
export interface PaymentsJournalDeferredEvent {
  /** The transaction reference the event named. */
  readonly reference: string;
  /** The event's kind, from its reference (`payout`, `collection`...). */
  readonly kind?: string;
  /** When it arrived (ISO 8601). */
  readonly at: string;
  /**
   * Since when `reconcile()` could not place it: its look-ups failed (not for a rate limit or the
   * credentials), or its record could as well be another call's. Dropped once that has lasted
   * `PAYMENTS_CONFIRMATION_WINDOW_MS` without a break; cleared by a pending record of the call's
   * figures.
   */
  readonly unplacedSince?: string;
}

/** What {@link PaymentsJournalStore.list} returns: filters combine with AND. */
export interface PaymentsJournalQuery {
  /** Entries started at or after this time. */
  readonly since?: Date;
  /** Entries in one of these states (as stored: a `started` entry past its deadline is `started`). */
  readonly states?: readonly PaymentsJournalState[];
}

/**
 * Where the journal lives. Implement it on your own database if Redis is not yours; the
 * conformance cases of `@malipo/nestjs/testing` (`paymentsJournalStoreConformance`) check an
 * implementation. The contract (docs/journal.md):
 * - `create` and `replace` are atomic per idempotency key, across every process that shares the
 *   store: of two `create`s of one key, one adds its entry and the other gets that entry back; of
 *   two `replace`s over one version, one wins;
 * - what a method resolved with is durable as far as the store promises durability;
 * - a method that cannot do its work rejects (never resolves as if it had written).
 */
export interface PaymentsJournalStore {
  /**
   * Adds `entry` (its `version` is 1) unless an entry with its `idempotencyKey` exists.
   * @returns `created: true` and `entry` when this call added it, or `created: false` and the
   *   entry already there (an equal one too).
   */
  create(entry: PaymentsJournalEntry): Promise<{ created: boolean; entry: PaymentsJournalEntry }>;
  /**
   * Replaces the entry of `next.idempotencyKey` if the stored one has version `next.version - 1`.
   * @returns whether it was replaced (false: another writer changed it, or it is gone).
   */
  replace(next: PaymentsJournalEntry): Promise<boolean>;
  /** The entry of `idempotencyKey`. */
  get(idempotencyKey: string): Promise<PaymentsJournalEntry | undefined>;
  /**
   * The entry whose `reference`, or one of whose `otherExecutions`, is `reference` (the first one
   * to hold it).
   */
  findByReference(reference: string): Promise<PaymentsJournalEntry | undefined>;
  /**
   * Every entry matching `query` (no page limit), each once, oldest `startedAt` first: start times
   * are not unique, so a store that pages breaks ties by the key.
   */
  list(query?: PaymentsJournalQuery): Promise<PaymentsJournalEntry[]>;
  /** Releases connections the store made. Called once the client's calls have settled. */
  close?(): Promise<void>;
  /**
   * Where the entries are kept (a database and a key prefix; never a credential), when the store
   * can tell: two registrations of one account whose stores of one kind name different locations
   * fail at boot, since a call journaled in one would be unknown to the other.
   */
  readonly location?: string | undefined;
}

/** What a person found out about a call, for {@link PaymentsReconciler.resolve}. */
export interface PaymentsJournalResolution {
  /**
   * `succeeded` or `failed`: the service executed it with that outcome; `refused`: it did not
   * execute (the key may be sent again).
   */
  outcome: 'succeeded' | 'failed' | 'refused';
  /** The service's reference, when the call executed and the entry does not know it yet. */
  reference?: string;
  /** Who resolved it and how they know: kept on the entry for the auditors. Required. */
  note: string;
}

/** Count and sum of the entries of one state in one currency. */
export interface PaymentsJournalTotal {
  count: number;
  amount: number;
}

/** What one {@link PaymentsReconciler.reconcile} pass did and found. */
export interface PaymentsReconcileSummary {
  /**
   * Entries that were not final when the pass began, and those a person resolved `succeeded` or
   * `failed` while the service's record was not final (looked up until it is).
   */
  checked: number;
  /** Of those, the ones the pass moved (to `succeeded`, `failed` or `in_doubt`). */
  changed: number;
  /** Look-ups that failed (network, 5xx): their entries are left as they were. */
  lookupFailures: number;
  /** Every entry of the window after the pass: state → currency → count and sum. */
  totals: Partial<Record<PaymentsJournalState, Record<string, PaymentsJournalTotal>>>;
  /**
   * The same by operation (`collections.mpesa`, `payouts.mpesa`...): `totals` adds money in and
   * money out together, these keep them apart.
   */
  byOperation: Partial<
    Record<
      PaymentsOperationName,
      Partial<Record<PaymentsJournalState, Record<string, PaymentsJournalTotal>>>
    >
  >;
  /** The entries still `in_doubt` after the pass, each with its `reason`. */
  inDoubt: PaymentsJournalEntry[];
}

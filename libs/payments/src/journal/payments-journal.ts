import { createHmac, hkdfSync, randomUUID } from 'node:crypto';
import { setMaxListeners } from 'node:events';
import { setTimeout as delay } from 'node:timers/promises';
import { Logger } from '@nestjs/common';
import {
  PaymentsJournalError,
  PaymentsReconcilerError,
  PaymentsValidationError,
  ServiceAPIError,
} from '../errors';
import type { PaymentsJournalErrorCode } from '../errors';
import { canonicalJson } from '../idempotency-keys';
import type { PaymentsOperationName } from '../operation-names';
import { PAYMENTS_LOGGER_CONTEXT } from '../payments.constants';
import { nationalNumber } from '../phone-numbers';
import { amountsDiffer, isRateLimitOrCredentialsStatus } from '../transaction-outcome';
import { RESPONSE_WIRE_KEYS } from '../wire';
import { readObjectOfKnownKeys } from '../unknown-keys';
import { within } from '../within';
import type { EncodedRequest, JsonObject, ResponseField } from '../wire';
import { InMemoryPaymentsJournal, sealedJournalEntry } from './in-memory-payments-journal';
import { maskPersonalData } from './personal-data';
import {
  FINAL_JOURNAL_STATES,
  journalEntryReferences,
  PAYMENTS_CONFIRMATION_WINDOW_MS,
} from './payments-journal.interfaces';
import type {
  PaymentsJournalCall,
  PaymentsJournalDeferredEvent,
  PaymentsJournalEntry,
  PaymentsJournalResolution,
  PaymentsJournalState,
  PaymentsJournalStore,
} from './payments-journal.interfaces';
import { printsAsNameOnly } from '../secret-holders';

/** Fields of an accepted answer the journal keeps to answer a repeated call: none is personal. */
const REPLAYED_FIELDS: readonly ResponseField[] = [
  'success',
  'message',
  'status',
  'transactionReference',
  'trackingId',
  'reference',
  'checkoutUrl',
];

/**
 * The free-text fields of a kept answer, where a service may echo the payee: masked of the
 * request's personal data. Not the reference, the status or the checkout URL, which a replay must
 * give exactly (a masked link would not open).
 */
const MASKED_ANSWER_KEYS: readonly string[] = (['message', 'trackingId', 'reference'] as const).map(
  (field) => RESPONSE_WIRE_KEYS[field][0],
);

/** Sends kept per entry ({@link boundCalls}), so a key retried for ever stays bounded. */
const MAX_CALLS_PER_ENTRY = 20;

/** Rounds of read-and-replace before a write that keeps losing to other writers gives up. */
const MAX_REPLACE_ROUNDS = 8;

/** Waits between attempts to record a send's end when the store fails, while the caller waits. */
const END_RETRY_DELAYS_MS = [50, 200, 1000];
/**
 * How long an accepted answer waits for the store to say whether another entry holds its reference
 * (a custom store's slow look-up must not hold back the answer of a call that executed).
 */
const REFERENCE_CHECK_TIMEOUT_MS = 2_000;

/**
 * Waits between the attempts that go on, the caller answered, to record a send's end the store
 * refused meanwhile: about the default deadline of a call (docs/journal.md), so that a Redis
 * down for seconds or a minute does not turn an answered call, reference and all, into one in
 * doubt that a person must look up.
 */
const LATE_END_RETRY_DELAYS_MS = [2_000, 5_000, 10_000, 20_000, 30_000, 40_000];

/**
 * Waits between attempts to mark a send whose write before sending (a create, or a retry's
 * replace) failed `refused`: a Redis that hung may answer again within seconds, and the write it
 * held lands then.
 */
const UNDO_RETRY_DELAYS_MS = [250, 1000, 3000];

/** The sum of `values`. */
function sumOf(values: readonly number[]): number {
  return values.reduce((sum, value) => sum + value, 0);
}

/**
 * Deferred events kept per entry: a forger who knows the key can spend them, but only while the
 * call is being sent, and only against an entry whose answer then never comes.
 */
const MAX_DEFERRED_EVENTS = 5;

/** Sends remembered as never sent (their `create` failed); the oldest are forgotten first. */
const MAX_UNSENT_CALLS = 10_000;

/** A type with its readonly fields writable, for an object still being built. */
type Mutable<T> = { -readonly [K in keyof T]: T[K] };

/** The kind of webhook each operation's events have (see `PaymentWebhookKind`). */
const EVENT_KIND_OF_OPERATION: Readonly<Partial<Record<PaymentsOperationName, string>>> = {
  'collections.mpesa': 'collection',
  'collections.card': 'collection',
  'collections.panAfrican': 'collection',
  'payouts.mpesa': 'payout',
  'payouts.panAfrican': 'payout',
  'payouts.merchant': 'payout',
  'transfers.send': 'transfer',
};

/** What the journal needs of a call before it is sent. */
export interface JournalIntent {
  readonly idempotencyKey: string;
  readonly operation: PaymentsOperationName;
  /** What a validation error names: the request class. */
  readonly target: string;
  readonly encoded: EncodedRequest;
  readonly amount?: number;
  readonly currency?: string;
  /** The request's phone number: only its keyed fingerprint is kept (`payee`). */
  readonly phoneNumber?: string;
  /** The request's account number: only its keyed fingerprint is kept (`payeeAccount`). */
  readonly accountNumber?: string;
  /** How long the send may take, retries included (ms). */
  readonly budgetMs: number;
  readonly resend: boolean;
  /** What the caller knows of earlier sends under the key that never went out. */
  readonly unsentSends?: UnsentSends;
  /** A key the service refused for good ({@link refusedForGood}) stops with `ALREADY_REFUSED`. */
  readonly refusalsStand?: boolean;
}

/**
 * Sends under a key that never went out although their write-ahead may have landed (a `create`
 * that timed out, its undo failed too), as a caller that outlives the process knows them: a payout
 * run keeps them on its item, so that whichever instance sends the item next sends it again
 * rather than hold it in doubt (docs/payout-runs.md, "Run states").
 */
export interface UnsentSends {
  /** Call ids of this key's sends known never sent. */
  readonly callIds: readonly string[];
  /** Told the call id of a send of this call that was not sent because its write-ahead failed. */
  notSent(callId: string): void;
}

/**
 * One send of an entry: its key, its call, and the entry as this process last wrote it, when
 * known, so that recording the send's end starts from it instead of reading the entry back.
 */
export interface JournalSendRef {
  readonly idempotencyKey: string;
  readonly callId: string;
  readonly written?: PaymentsJournalEntry;
}

/**
 * Send the call (the journal holds it as `started` under `callId`, as `written`), or answer it
 * from `entry`.
 */
export type JournalDecision =
  | ({ readonly send: true } & Required<JournalSendRef>)
  | { readonly send: false; readonly entry: PaymentsJournalEntry };

/** A final outcome seen by a confirmed webhook or a status look-up. */
export interface JournalSettlement {
  readonly idempotencyKey?: string;
  readonly reference: string;
  readonly outcome: 'succeeded' | 'failed';
  /** The amount of the service's record. */
  readonly amount?: number;
  /** The webhook's kind (`payout`...), when the settlement comes from one. */
  readonly kind?: string;
  /** The currency of the service's record. */
  readonly currency?: string;
  /** When the service's record says the transaction was created. */
  readonly createdAt?: string;
  readonly by: 'webhook' | 'status';
  /** The record's status word. */
  readonly status?: string;
  /** The phone number of the service's record (`transaction_details.phone_number`). */
  readonly phoneNumber?: string;
  /**
   * The account number of the service's record (`transaction_details.account_number`): it only
   * tells apart calls to one phone number, when it is the settled call's own; it never contradicts
   * a call, since what the service puts there for a payout is not documented.
   */
  readonly accountNumber?: string;
  /** The service's reason for a failure, masked (`transaction_details.reason`). */
  readonly reason?: string;
}

/** What of a settlement tells whether its record is of an entry's call: not what it settles. */
export type RecordFigures = Omit<JournalSettlement, 'outcome' | 'by'>;

/**
 * What a settlement did: nothing matched, it settled (or agreed with) an entry, contradicted one,
 * or is a second execution of the entry's call (same key, amount and kind, another reference that
 * no entry holds: the service ran the call twice), which settles nothing and is not refused, so
 * that the webhook module raises `payment.duplicate`.
 */
export type JournalSettleResult =
  | { readonly result: 'no-entry' }
  /**
   * The entry is being sent and its answer, with the call's reference, is not known yet: an event
   * that names it by key only cannot be checked against the reference, so it settles nothing now.
   */
  | { readonly result: 'in-flight'; readonly entry: PaymentsJournalEntry }
  | { readonly result: 'settled' | 'unchanged'; readonly entry: PaymentsJournalEntry }
  | {
      readonly result: 'contradicted' | 'second-execution';
      readonly entry: PaymentsJournalEntry;
      readonly why: string;
      /**
       * The settlement wrote the entry: it held a reference another entry held first, and is now
       * in doubt without it.
       */
      readonly wrote?: true;
      /**
       * The record agrees with the entry, but another call could as well be its own: not a record
       * of another transaction, only one a person must place.
       */
      readonly undecided?: true;
    };

/** Options of {@link PaymentsJournal}. */
export interface PaymentsJournalOptions {
  /** Registration name written on each entry. */
  readonly account: string;
  /** Key of the request fingerprints' HMAC. */
  readonly fingerprintKey: Buffer;
  /** Key of the payee fingerprints' HMAC ({@link derivePayeeKey}). */
  readonly payeeKey: Buffer;
  /** Milliseconds since the epoch. Default `Date.now`. */
  readonly now?: () => number;
}

/** The fingerprint key a client derives from its password when none is configured. */
export function deriveFingerprintKey(secret: string): Buffer {
  return deriveKey(secret, 'malipo-payments-journal', 'request fingerprint v1');
}

/** The payee fingerprint key a client derives from its secret. */
export function derivePayeeKey(secret: string): Buffer {
  return deriveKey(secret, 'malipo-payments-journal', 'payee fingerprint v1');
}

/**
 * A 32-byte key derived (HKDF-SHA256) from the account's secret for one `purpose`: keys of
 * different purposes are unrelated, and none reveals the secret.
 */
export function deriveKey(secret: string, salt: string, purpose: string): Buffer {
  return Buffer.from(hkdfSync('sha256', secret, salt, purpose, 32));
}

/**
 * The rules of docs/journal.md over a {@link PaymentsJournalStore}: write-ahead before a send,
 * the end of each send, settlement by webhook or look-up, and what a repeated key may do. One per
 * client (registration); the store may be shared by many.
 * @internal
 */
export class PaymentsJournal {
  private readonly logger = new Logger(PAYMENTS_LOGGER_CONTEXT);
  private readonly now: () => number;
  readonly account: string;
  /**
   * Sends whose `create` failed, so they were not sent: a create that timed out after it left
   * (Redis hanging) lands later, and its entry reads `started`, then `in_doubt`, unless this
   * process recognises it as its own unsent call when the key comes again.
   */
  private readonly unsent = new Set<string>();
  /**
   * Writes still retrying that nobody awaits (undos of failed creates, sends' ends recorded late):
   * {@link close} stops their waits and waits for each.
   */
  private readonly undos = new Set<Promise<void>>();
  private readonly closing = new AbortController();
  /**
   * Names the payee key on each `payee`: a fingerprint made with another key (a rotated secret,
   * another registration sharing the store) cannot be compared, and is not.
   */
  private readonly payeeKeyId: string;

  constructor(
    readonly store: PaymentsJournalStore,
    private readonly options: PaymentsJournalOptions,
  ) {
    this.now = options.now ?? Date.now;
    this.account = options.account;
    this.payeeKeyId = createHmac('sha256', options.payeeKey)
      .update('payee key id')
      .digest('base64url')
      .slice(0, 8);
    // Each undo waiting to retry listens for close: during a store outage, one per refused call
    // of the last few seconds, which is not the leak Node warns of past ten.
    setMaxListeners(0, this.closing.signal);
  }

  /**
   * `entry` as it goes to the store: deeply frozen for `InMemoryPaymentsJournal`, which then holds
   * it without a copy; as it is for any other store, which may add to what it is given (the
   * MongoDB driver adds `_id`).
   */
  private sealed<T extends PaymentsJournalEntry>(entry: T): T {
    return this.store instanceof InMemoryPaymentsJournal ? sealedJournalEntry(entry) : entry;
  }

  /**
   * `entry` as the app gets it (`PaymentsReconciler`, `PaymentsJournalError.entry`): a copy of its
   * own, since a store may hand out the objects it holds, which the journal replays and checks
   * requests against; as it is from `InMemoryPaymentsJournal`, whose entries are deeply frozen.
   */
  shown(entry: PaymentsJournalEntry): PaymentsJournalEntry {
    if (this.store instanceof InMemoryPaymentsJournal) return entry;
    return JSON.parse(JSON.stringify(entry)) as PaymentsJournalEntry;
  }

  /**
   * The entry the store holds under `idempotencyKey`.
   * @throws Error when the store answers another key's entry (a key column too short for keys of
   *   255 characters, cutting two keys to one): taken for this key's, its answer would be replayed.
   */
  async entryUnder(idempotencyKey: string): Promise<PaymentsJournalEntry | undefined> {
    const entry = await this.store.get(idempotencyKey);
    if (entry !== undefined) assertEntryOf(idempotencyKey, entry, 'get');
    return entry;
  }

  /**
   * Stops the writes still retrying in the background (undos of failed creates, sends' ends
   * recorded late), once the write each has under way ended, so that nothing is written after the
   * store closes. A write stopped so leaves its entry as a process that died would: in doubt after
   * its deadline.
   */
  async close(): Promise<void> {
    this.closing.abort();
    await Promise.all(this.undos);
  }

  /** Keyed fingerprint of a request as it goes on the wire. */
  fingerprint(operation: PaymentsOperationName, encoded: EncodedRequest): string {
    return createHmac('sha256', this.options.fingerprintKey)
      .update(canonicalJson([operation, encoded.method, encoded.url, encoded.body ?? null]))
      .digest('base64');
  }

  /**
   * Whether `entry` is of another request than `intent`'s (a payout run created again with an
   * edited item): not its fingerprint, made with this journal's key (told by the entry's payee
   * key id; an entry without a payee is taken to be), or made with another key and of another
   * operation, amount (as sent) or currency, which no key changes. A payee fingerprinted with
   * another key cannot be compared: after a password rotation, a payout edited to another phone
   * number or account for the same sum is not seen.
   */
  isOfAnotherRequest(entry: PaymentsJournalEntry, intent: JournalIntent): boolean {
    if (this.fingerprint(intent.operation, intent.encoded) === entry.fingerprint) return false;
    const keyId = payeeKeyIdOf(entry.payee);
    if (keyId === undefined || keyId === this.payeeKeyId) return true;
    return (
      entry.operation !== intent.operation ||
      differ(entry.amount, intent.amount) ||
      differ(entry.currency, intent.currency)
    );
  }

  /**
   * Keyed fingerprint of a phone number's national number ({@link nationalNumber}), so that
   * `0712345678` and `+254712345678` match, prefixed by the key's id; undefined for anything that
   * is not a plain phone number.
   */
  payeeOf(phoneNumber: unknown): string | undefined {
    const national = typeof phoneNumber === 'string' ? nationalNumber(phoneNumber) : undefined;
    return national === undefined ? undefined : this.payeeFingerprint(national);
  }

  /**
   * Keyed fingerprint of an account number, compared without case or spaces (`ACC-1`, `acc 1`...
   * are not told apart), prefixed by the key's id; undefined for an empty one.
   */
  private payeeAccountOf(accountNumber: unknown): string | undefined {
    if (typeof accountNumber !== 'string') return undefined;
    const account = accountNumber.replace(/\s+/g, '').toUpperCase();
    return account === '' ? undefined : this.payeeFingerprint(`account\n${account}`);
  }

  /** The keyed fingerprint of a payee's number, prefixed by the key's id (`<key id>.<mac>`). */
  private payeeFingerprint(text: string): string {
    const mac = createHmac('sha256', this.options.payeeKey).update(text).digest('base64');
    return `${this.payeeKeyId}.${mac}`;
  }

  /**
   * Why a fingerprint may differ for the same request: `held` was fingerprinted with another key
   * (its payee's key id is not this journal's), by an instance with another `apiPassword` (a typo,
   * a rotation) or `journalFingerprintSecret`. Empty when that cannot be told.
   */
  private anotherKeyHint(held: PaymentsJournalEntry, fresh: PaymentsJournalEntry): string {
    const theirs = payeeKeyIdOf(held.payee);
    if (
      theirs === undefined ||
      payeeKeyIdOf(fresh.payee) === undefined ||
      theirs === this.payeeKeyId
    ) {
      return '';
    }
    return (
      '; or the same request, journaled by an instance whose apiPassword or ' +
      "journalFingerprintSecret differs from this one's: fingerprints are keyed by it " +
      '(docs/journal.md, "The fingerprint")'
    );
  }

  /**
   * The entry as it stands now: a `started` entry whose deadline passed is `in_doubt` (the
   * process that sent it died, or its outcome could not be written).
   */
  view(entry: PaymentsJournalEntry): PaymentsJournalEntry {
    if (entry.state !== 'started' || Date.parse(entry.deadlineAt) > this.now()) return entry;
    return {
      ...entry,
      state: 'in_doubt',
      reason: 'the send was not seen to end before its deadline (the process may have died)',
    };
  }

  /**
   * Whether `entry`'s call is being sent now, its reference not known yet: an event that names it
   * by key alone cannot be checked against the call's reference until the answer gives it.
   */
  isBeingSent(entry: PaymentsJournalEntry): boolean {
    return entry.reference === undefined && this.view(entry).state === 'started';
  }

  /**
   * Keeps the reference of a webhook that named an entry being sent by its key alone (and was
   * deferred), for `reconcile()` to look up if the call's answer never gives the entry its own
   * (docs/journal.md, "Webhooks"). Each reference once, at most {@link MAX_DEFERRED_EVENTS}, and
   * nothing once the entry is no longer being sent. Rejects when the store fails.
   */
  async deferEvent(idempotencyKey: string, reference: string, kind?: string): Promise<void> {
    await this.changeEntry(idempotencyKey, (entry, at) => {
      if (!this.isBeingSent(entry)) return undefined;
      const deferredEvents = withDeferredEvent(entry, reference, kind, at);
      return deferredEvents && { deferredEvents };
    });
  }

  /**
   * Drops deferred events `reconcile()` found of no use (unknown to the service, no reference a
   * look-up can carry, a record at odds with the entry) or unplaced for the window, so that no
   * later pass looks them up again. One dropped for its `unplacedSince` is dropped only while the
   * entry still holds that mark: another instance's look-up may have placed it since. Resolves
   * whether this call dropped any (another pass may have first). Rejects when the store fails.
   */
  async dropDeferredEvents(
    idempotencyKey: string,
    dropped: readonly { readonly reference: string; readonly unplacedSince?: string }[],
  ): Promise<boolean> {
    const { written } = await this.changeEntry(idempotencyKey, (entry) => {
      const kept = entry.deferredEvents?.filter(
        (event) =>
          !dropped.some(
            (drop) =>
              drop.reference === event.reference &&
              (drop.unplacedSince === undefined || drop.unplacedSince === event.unplacedSince),
          ),
      );
      if (kept === undefined || kept.length === entry.deferredEvents?.length) return undefined;
      return { deferredEvents: kept };
    });
    return written;
  }

  /**
   * Marks the deferred event of `reference` as unplaced since now (`unplaced`: a look-up failed,
   * or found a record another call could as well own), unless it is already; or clears the mark
   * (its record is pending with the call's figures): the window counts passes that could not place
   * it, without a break. Rejects when the store fails.
   */
  async deferredEventUnplaced(
    idempotencyKey: string,
    reference: string,
    unplaced: boolean,
  ): Promise<void> {
    await this.changeEntry(idempotencyKey, (entry, at) => {
      const events = entry.deferredEvents;
      const index = events?.findIndex((event) => event.reference === reference) ?? -1;
      if (events === undefined || index < 0) return undefined;
      const { unplacedSince, ...event } = events[index];
      if ((unplacedSince !== undefined) === unplaced) return undefined;
      const marked = [...events];
      marked[index] = unplaced ? { ...event, unplacedSince: at } : event;
      return { deferredEvents: marked };
    });
  }

  /**
   * Replaces the entry of `idempotencyKey` with `change`'s fields over it (a new version, changed
   * at `at`), read again and retried when another writer changed it meanwhile; nothing when there
   * is no entry or `change` answers undefined, or other writers kept changing it. Resolves with
   * the entry as it is afterwards, and whether this call's change is what landed. Rejects when the
   * store fails.
   */
  private changeEntry(
    idempotencyKey: string,
    change: (entry: PaymentsJournalEntry, at: string) => Partial<PaymentsJournalEntry> | undefined,
  ): Promise<EntryRewrite> {
    return this.rewriteEntry(idempotencyKey, (entry, at) => {
      const fields = change(entry, at);
      return fields && { ...entry, ...fields };
    });
  }

  /**
   * {@link changeEntry} with `rewrite`'s entry in place of the one read, whole: a field it lacks is
   * gone. Its `version` and `updatedAt` are the journal's.
   */
  private async rewriteEntry(
    idempotencyKey: string,
    rewrite: (entry: PaymentsJournalEntry, at: string) => PaymentsJournalEntry | undefined,
  ): Promise<EntryRewrite> {
    for (let round = 0; round < MAX_REPLACE_ROUNDS; round += 1) {
      const entry = await this.entryUnder(idempotencyKey);
      if (entry === undefined) return { entry, written: false };
      const at = new Date(this.now()).toISOString();
      const rewritten = rewrite(entry, at);
      if (rewritten === undefined) return { entry, written: false };
      const next: PaymentsJournalEntry = {
        ...rewritten,
        version: entry.version + 1,
        updatedAt: at,
      };
      if (await this.store.replace(this.sealed(next))) return { entry: next, written: true };
    }
    return { entry: await this.entryUnder(idempotencyKey), written: false };
  }

  /**
   * Journals the intent before a send, or decides from what the key already holds.
   * @throws PaymentsValidationError (`idempotencyKey`, `reused`) for another request under the key.
   * @throws PaymentsJournalError (`IN_DOUBT`, `IN_PROGRESS`, `ALREADY_FAILED`, `ALREADY_REFUSED`,
   * `JOURNAL_UNAVAILABLE`).
   */
  async begin(intent: JournalIntent): Promise<JournalDecision> {
    // The path of every call: one entry built as a literal and one `create`, no closures, spreads
    // or reads (docs/performance.md, "The journal's cost").
    const nowMs = this.now();
    const at = new Date(nowMs).toISOString();
    const deadlineAt = new Date(nowMs + intent.budgetMs).toISOString();
    const callId = randomUUID();
    const fresh = this.newEntry(intent, 'started', at, deadlineAt, [{ callId, startedAt: at }]);
    const created = await this.createEntry(intent, fresh);
    if (created.created) {
      return { send: true, idempotencyKey: intent.idempotencyKey, callId, written: fresh };
    }
    return this.beginAgain(intent, fresh, created.entry);
  }

  /** A new entry of `intent`, version 1, written at `at`. */
  private newEntry(
    intent: JournalIntent,
    state: PaymentsJournalState,
    at: string,
    deadlineAt: string,
    calls: PaymentsJournalEntry['calls'],
  ): Mutable<PaymentsJournalEntry> {
    const entry: Mutable<PaymentsJournalEntry> = {
      idempotencyKey: intent.idempotencyKey,
      operation: intent.operation,
      account: this.account,
      fingerprint: this.fingerprint(intent.operation, intent.encoded),
      state,
      version: 1,
      startedAt: at,
      updatedAt: at,
      deadlineAt,
      calls,
    };
    if (intent.amount !== undefined) entry.amount = intent.amount;
    if (intent.currency !== undefined) entry.currency = intent.currency;
    const payee = this.payeeOf(intent.phoneNumber);
    if (payee !== undefined) entry.payee = payee;
    const payeeAccount = this.payeeAccountOf(intent.accountNumber);
    if (payeeAccount !== undefined) entry.payeeAccount = payeeAccount;
    return entry;
  }

  /**
   * Holds a key with no send, `state` and `reason` written: `in_doubt` for a send that was taken
   * over (its worker stopped before it wrote an entry), so that the worker, should it only have
   * stalled, finds it and never sends (`IN_DOUBT`), and a person can resolve it; `refused` for a
   * payout-run item that was cancelled, so that no later send under the key goes out without
   * `resend` (`ALREADY_REFUSED`). Resolves the entry the key holds afterwards: this one, or the one
   * a send wrote first.
   * @throws PaymentsJournalError (`JOURNAL_UNAVAILABLE`) when the store fails.
   */
  async hold(
    intent: JournalIntent,
    state: 'in_doubt' | 'refused',
    reason: string,
  ): Promise<PaymentsJournalEntry> {
    const at = new Date(this.now()).toISOString();
    const held = this.newEntry(intent, state, at, at, []);
    held.reason = reason;
    const created = await this.storeCall(intent, 'create', () =>
      this.store.create(this.sealed(held)),
    );
    assertEntryOf(held.idempotencyKey, created.entry, 'create');
    if (state === 'refused' && !created.created) return this.closeRefused(intent, reason);
    return created.entry;
  }

  /**
   * Closes a key whose entry is `refused` and never executed (its sends refused, a 429, 401 or a
   * send that never went out): `settledBy: 'run'` with `reason`, so that a payout run's send under
   * it stops (`ALREADY_REFUSED`) as for a key held refused. Any other entry stays as it is.
   */
  private async closeRefused(intent: JournalIntent, reason: string): Promise<PaymentsJournalEntry> {
    const open = (entry: PaymentsJournalEntry) =>
      neverExecuted(entry) && entry.settledBy === undefined;
    const { entry: closed } = await this.storeCall(intent, 'replace', () =>
      this.changeEntry(intent.idempotencyKey, (entry) =>
        open(entry) ? { settledBy: 'run', reason } : undefined,
      ),
    );
    if (closed === undefined) throw new Error(`the entry ${intent.idempotencyKey} is gone`);
    if (open(closed)) {
      throw new Error(`the entry ${intent.idempotencyKey} kept changing while being closed`);
    }
    return closed;
  }

  /** The store's `create` before a send: its failure stops the call with `JOURNAL_UNAVAILABLE`. */
  private async createEntry(
    intent: JournalIntent,
    fresh: PaymentsJournalEntry,
  ): Promise<{ created: boolean; entry: PaymentsJournalEntry }> {
    const { callId } = fresh.calls[0];
    let created: { created: boolean; entry: PaymentsJournalEntry };
    // Inline, not through a closure: one await on the path of every call.
    try {
      created = await this.store.create(this.sealed(fresh));
      assertEntryOf(fresh.idempotencyKey, created.entry, 'create');
    } catch (error) {
      throw this.notWritten(intent, 'create', callId, error);
    }
    // `created: true` with an entry that is not this send's (a store that takes an equal request
    // for its own retried insert): the key was held, and it is decided as held.
    if (created.created && created.entry.calls.at(-1)?.callId !== callId) {
      created = { created: false, entry: created.entry };
    }
    // The store's answer was lost and the command sent again (ioredis resends on reconnect): the
    // entry found is this call's own, written by the first (a create, or a retry's replace), and
    // nobody has sent it.
    if (!created.created && isOwnUnsentEntry(created.entry, callId)) {
      return { created: true, entry: created.entry };
    }
    return created;
  }

  /**
   * What stops a call whose store write before the send of `callId` failed: `JOURNAL_UNAVAILABLE`;
   * the write, which may still land, is undone.
   */
  private notWritten(
    intent: JournalIntent,
    what: 'create' | 'replace',
    callId: string,
    error: unknown,
  ): PaymentsJournalError {
    this.undoUnsentWrite(intent.idempotencyKey, callId);
    intent.unsentSends?.notSent(callId);
    return this.unavailable(intent, what, error);
  }

  /** {@link begin} of a key the journal holds already: `existing`, read by the failed create. */
  private async beginAgain(
    intent: JournalIntent,
    fresh: PaymentsJournalEntry,
    existing: PaymentsJournalEntry,
  ): Promise<JournalDecision> {
    const { fingerprint, updatedAt: at, deadlineAt } = fresh;
    let held = existing;
    const call = fresh.calls[0];
    const { callId } = call;
    for (let round = 0; round < MAX_REPLACE_ROUNDS; round += 1) {
      if (round > 0) {
        // After a replace that did not land, or whose answer was lost (then the entry is ours).
        const created = await this.createEntry(intent, fresh);
        if (created.created) {
          return { send: true, idempotencyKey: intent.idempotencyKey, callId, written: fresh };
        }
        held = created.entry;
      }
      if (held.fingerprint !== fingerprint) {
        throw new PaymentsValidationError(intent.target, [
          {
            field: 'idempotencyKey',
            rule: 'reused',
            message:
              'idempotencyKey was already used for a different request (payments journal): a new request needs a new idempotencyKey (reuse a key only to retry the same request). ' +
              "Requests are compared as sent: the client's defaults count (defaultCallbackUrl, " +
              'defaultUsername, walletType: instances sharing the journal must have the same)' +
              this.anotherKeyHint(held, fresh),
          },
        ]);
      }
      let leftover = this.unsentLeftover(held, intent.unsentSends);
      if (leftover && hasExecuted(held)) {
        // The leftover never went out, but the service gave a reference under the key: the call
        // executed anyway. Its send is written off as unsent; the entry's state stands.
        const ended: PaymentsJournalEntry = {
          ...held,
          version: held.version + 1,
          updatedAt: at,
          calls: endCall(held, leftover.callId, unsentEnd(at)),
        };
        if (
          !(await this.storeCall(intent, 'replace', () => this.store.replace(this.sealed(ended))))
        ) {
          continue;
        }
        this.unsent.delete(leftover.callId);
        held = ended;
        leftover = undefined;
      }
      const current = leftover ? { ...held, state: 'refused' as const } : this.view(held);
      switch (current.state) {
        case 'accepted':
        case 'succeeded':
          return { send: false, entry: current };
        case 'failed':
          throw this.stopped(intent, 'ALREADY_FAILED', current, false);
        case 'started':
          throw this.stopped(intent, 'IN_PROGRESS', current, true);
        case 'in_doubt':
          if (current.deferredEvents !== undefined && current.deferredEvents.length > 0) {
            // Webhooks under the key came while it was being sent: until their references are
            // looked up, one may be the call's own execution, and a resend would pay it again.
            throw this.stopped(intent, 'IN_DOUBT', current, true, deferredReason(current));
          }
          if (!intent.resend) throw this.stopped(intent, 'IN_DOUBT', current, true);
          // The service gave a reference under this key: its call executed, whatever is in doubt.
          if (hasExecuted(current))
            throw this.executed(intent, current, '{ resend: true } is refused');
          break;
        case 'refused':
          // Refused by the latest send's 4xx, while an earlier send under the key executed: an
          // entry stored so by an earlier version (failed() no longer writes it). Never sent again.
          if (hasExecuted(current)) throw this.executed(intent, current, 'it is not sent again');
          // A held key a person settled refused: its stopped worker may still wake up and send.
          if (!sentAgainAsRetry(current) && !intent.resend) {
            throw this.stopped(intent, 'ALREADY_REFUSED', current, false);
          }
          if (intent.refusalsStand === true && !intent.resend && refusedForGood(current)) {
            throw this.stopped(
              intent,
              'ALREADY_REFUSED',
              current,
              false,
              `the call under this idempotencyKey was refused for good (${current.reason ?? 'refused'}): ` +
                'it is not sent again under it; a new attempt needs a new idempotencyKey',
            );
          }
          break;
      }
      // `refused` (never executed) is sent again; `in_doubt` only when the caller said `resend`.
      const earlier = leftover ? endCall(held, leftover.callId, unsentEnd(at)) : held.calls;
      // Events deferred during an earlier send are about that send: this one starts without them.
      const { deferredEvents: _earlierSends, ...unsent } = held;
      const next = withoutReason({
        ...unsent,
        state: 'started',
        version: held.version + 1,
        updatedAt: at,
        deadlineAt,
        calls: boundCalls([
          ...earlier,
          current.state === 'in_doubt' ? { ...call, resend: true } : call,
        ]),
      });
      let replaced: boolean;
      try {
        replaced = await this.store.replace(this.sealed(next));
      } catch (error) {
        throw this.notWritten(intent, 'replace', callId, error);
      }
      if (replaced) {
        if (leftover) this.unsent.delete(leftover.callId);
        return { send: true, idempotencyKey: intent.idempotencyKey, callId, written: next };
      }
    }
    throw this.stopped(intent, 'IN_PROGRESS', undefined, true);
  }

  /**
   * Records that the send was accepted, the answer kept without `request`'s personal data.
   * Never rejects: a failed write is logged.
   */
  accepted(sent: JournalSendRef, record: JsonObject, request: object): Promise<void> {
    const answer: Record<string, unknown> = {};
    for (const field of REPLAYED_FIELDS) {
      const value = record[field];
      if (value !== undefined) answer[RESPONSE_WIRE_KEYS[field][0]] = value;
    }
    try {
      maskPersonalData(answer, request, MASKED_ANSWER_KEYS);
    } catch {
      // Never rejects, and never keeps what it could not mask: the free text is left out.
      for (const key of MASKED_ANSWER_KEYS) delete answer[key];
    }
    const answered =
      typeof record.transactionReference === 'string' && record.transactionReference !== ''
        ? record.transactionReference
        : undefined;
    if (answered === undefined) return this.endAccepted(sent, answer, undefined);
    return this.acceptedWithReference(sent, answer, answered);
  }

  /**
   * {@link accepted} of an answer that gives `reference`. One transaction is one call's: a
   * reference another entry holds (a service that answered this call with another's answer) is not
   * this call's, whose outcome is then unknown. Checked before the write, and after it, since two
   * answers written at once both find it free: the store keeps the first holder, and the other
   * entry lets go of it.
   */
  private async acceptedWithReference(
    sent: JournalSendRef,
    answer: Record<string, unknown>,
    reference: string,
  ): Promise<void> {
    const holder = await this.otherHolderOf(reference, sent.idempotencyKey);
    if (holder) return this.endAccepted(sent, answer, undefined, { reference, holder });
    await this.endAccepted(sent, answer, reference);
    // A store that could not tell before is not asked again. Checked after the caller has the
    // answer (close() waits for it): the call executed whichever entry keeps the reference.
    if (holder !== null) this.inBackground(this.keepReferenceIfFirst(sent, reference));
  }

  /** The entry of `sent` lets go of `reference` when another entry held it first. */
  private async keepReferenceIfFirst(sent: JournalSendRef, reference: string): Promise<void> {
    const first = await this.otherHolderOf(reference, sent.idempotencyKey);
    if (first) await this.letGoOfReference(sent, { reference, holder: first });
  }

  /**
   * The entry other than `idempotencyKey`'s that holds `reference`, or undefined; `null` when the
   * store cannot tell within {@link REFERENCE_CHECK_TIMEOUT_MS} (it throws, or does not answer):
   * the answer is then written as it came, and its settlement's checks stand (docs/journal.md,
   * rule 8).
   */
  private async otherHolderOf(
    reference: string,
    idempotencyKey: string,
  ): Promise<PaymentsJournalEntry | undefined | null> {
    try {
      const found = this.store.findByReference(reference);
      // The in-memory store answers at once: no timer on the path of every call.
      const holder =
        this.store instanceof InMemoryPaymentsJournal
          ? await found
          : await within(
              found,
              REFERENCE_CHECK_TIMEOUT_MS,
              () => new Error(`no answer within ${REFERENCE_CHECK_TIMEOUT_MS} ms`),
            );
      return holder !== undefined && holder.idempotencyKey !== idempotencyKey ? holder : undefined;
    } catch {
      return null;
    }
  }

  /**
   * The entry of `sent`, written accepted with `taken.reference` at the same time as the entry that
   * holds it first: in doubt, without the reference or what came with it ({@link
   * withoutTakenReference}), also when a webhook settled it meanwhile. One a person weighed is left
   * as it is, logged.
   */
  private async letGoOfReference(sent: JournalSendRef, taken: TakenReference): Promise<void> {
    const { idempotencyKey, callId } = sent;
    /** Whether the latest read called for letting go. */
    let letting = false;
    try {
      const { written } = await this.rewriteEntry(idempotencyKey, (entry) => {
        letting = false;
        if (entry.reference !== taken.reference) return undefined;
        const next = withoutTakenReference(entry, taken, callId);
        if (next === undefined) this.logger.error(weighedHolderLog(idempotencyKey, taken));
        letting = next !== undefined;
        return next;
      });
      if (written) this.logger.error(takenLog(idempotencyKey, taken));
      else if (letting) throw new Error('the entry kept changing');
    } catch (error) {
      this.logger.error(
        `The payments journal could not let the entry ${idempotencyKey} go of the reference ` +
          `${taken.reference}, which the call ${taken.holder.idempotencyKey} holds: ` +
          `${error instanceof Error ? error.message : 'error'}; look both up`,
      );
    }
  }

  /**
   * {@link accepted}'s write: the send ended `accepted` with `reference`, the call's own; without
   * one, in doubt, `taken` naming a reference the service gave that another entry holds.
   */
  private endAccepted(
    sent: JournalSendRef,
    answer: Record<string, unknown>,
    reference: string | undefined,
    taken?: TakenReference,
  ): Promise<void> {
    const { callId } = sent;
    if (taken !== undefined) this.logger.error(takenLog(sent.idempotencyKey, taken));
    return this.endSend(sent, 'accepted', END_RETRY_DELAYS_MS, (entry, at, version) => {
      const calls = endCall(entry, callId, {
        outcome: reference ? 'accepted' : 'in_doubt',
        endedAt: at,
      });
      // A webhook may have settled the entry while the answer was on its way (after the entry's
      // deadline, when it read as in doubt): with another reference than the service's answer
      // gives, that settlement was about another transaction, and the call's outcome is open.
      if (FINAL_JOURNAL_STATES.has(entry.state)) {
        if (
          reference === undefined ||
          entry.reference === undefined ||
          entry.reference === reference ||
          entry.otherExecutions?.includes(reference) === true
        ) {
          // An answer with another call's reference is not kept: it would be replayed as this one's.
          const kept = entry.answer ?? (taken === undefined ? answer : undefined);
          return { ...entry, version, updatedAt: at, ...(kept && { answer: kept }), calls };
        }
        // The answer's reference is the call's; the settled one is kept as another execution
        // (two transactions, or a record the key was wrongly paired with): a person looks.
        const reason =
          `settled ${entry.state} (by ${entry.settledBy ?? 'unknown'}) on the reference ${entry.reference}, ` +
          `but the service answered the call with the reference ${reference}: look both up`;
        this.logger.error(`The payments journal entry ${entry.idempotencyKey} was ${reason}`);
        return {
          ...moreThanOnce({ ...entry, reference }, reason, entry.reference),
          version,
          updatedAt: at,
          answer,
          calls,
        };
      }
      // Not final: a person's `refused` (settledBy `manual`) no longer holds once a send was taken.
      const open = withoutSettlement(entry);
      if (reference === undefined) {
        const without =
          taken === undefined ? 'without a transaction reference' : takenBecause(taken);
        return {
          ...open,
          version,
          updatedAt: at,
          state: 'in_doubt',
          // Another call's answer is not kept: this call may not have executed, and a person may
          // find so and resolve it `refused`.
          ...(taken === undefined && { answer }),
          reason:
            entry.otherExecutions === undefined
              ? `the service accepted the call ${without}`
              : `${entry.reason ?? 'executed more than once'}; a further send was accepted ${without}`,
          calls,
        };
      }
      // Another send under the key ended as one that may have executed: an earlier one in doubt
      // (this call a `resend` over it), or a later one whose end was written before this answer
      // (late, the store down meanwhile). This call executed, and that one may have too.
      if (entry.reference === undefined && anotherMayHaveRun(calls, callId)) {
        const twice =
          `accepted with the reference ${reference}, and another send under the key ended in ` +
          'doubt: more than one transaction may have executed, look it up (resolve the entry ' +
          'refused before sending again when the earlier send did not execute)';
        this.logger.error(`The payments journal entry ${entry.idempotencyKey} was ${twice}`);
        return {
          ...moreThanOnce({ ...entry, reference }, twice),
          version,
          updatedAt: at,
          answer,
          calls,
        };
      }
      // Two sends under one key both accepted, each with its own reference (a service that
      // ignored the key after a send was taken for never executed): two transactions, of which
      // the entry follows the first and lists the other. Left in doubt for a person, naming both,
      // never one of them absorbed; an entry already so stays so.
      if (
        entry.otherExecutions !== undefined ||
        (entry.reference !== undefined && entry.reference !== reference)
      ) {
        const first = entry.reference ?? reference;
        const known = first === reference || entry.otherExecutions?.includes(reference) === true;
        const reason = known
          ? (entry.reason ?? `accepted with the reference ${first}, and executed more than once`)
          : `accepted with the reference ${first}, and a further send under the key was ` +
            `accepted with the reference ${reference}: more than one transaction may have executed, look each up`;
        if (!known) {
          this.logger.error(`The payments journal entry ${entry.idempotencyKey} was ${reason}`);
        }
        return {
          ...moreThanOnce({ ...entry, reference: first }, reason, reference),
          version,
          updatedAt: at,
          calls,
        };
      }
      return withoutReason({
        ...open,
        version,
        updatedAt: at,
        state: 'accepted',
        reference,
        answer,
        calls,
      });
    });
  }

  /** Records that the send failed with `error`. Never rejects. */
  failed(
    sent: JournalSendRef,
    error: unknown,
    { retryDelaysMs = END_RETRY_DELAYS_MS, undo = false } = {},
  ): Promise<void> {
    const known = error instanceof ServiceAPIError;
    const mayHaveExecuted = known ? error.mayHaveExecuted : true;
    const outcome = mayHaveExecuted ? 'in_doubt' : 'refused';
    const reason = known
      ? `${error.code}${error.status === undefined ? '' : ` (HTTP ${error.status})`}${mayHaveExecuted ? ': may have executed' : ': not executed'}`
      : 'an unexpected error: may have executed';
    const { callId } = sent;
    return this.endSend(
      sent,
      outcome,
      retryDelaysMs,
      (entry, at, version) => {
        const call: Partial<PaymentsJournalCall> = {
          outcome,
          mayHaveExecuted,
          endedAt: at,
          ...(known ? { code: error.code, attempts: error.attempts } : {}),
          ...(known && error.status !== undefined ? { httpStatus: error.status } : {}),
          ...(known && error.serviceStatus !== undefined && error.serviceStatus !== error.status
            ? { serviceStatus: error.serviceStatus }
            : {}),
        };
        const calls = endCall(entry, callId, call);
        // An entry `refused` (never executed: resolved so by a person while this send was stalled,
        // or a later send's 4xx) that a send now says may have executed is open again: the
        // service's evidence outranks the person, and `refused` would let the key be sent again.
        if (entry.state === 'refused' && mayHaveExecuted) {
          const reopened =
            `resolved or sent as never executed, but a send under the key then ended with ` +
            `${reason}: look it up (reconcile)`;
          this.logger.error(`The payments journal entry ${entry.idempotencyKey} was ${reopened}`);
          const open = withoutSettlement(entry);
          return { ...open, version, updatedAt: at, state: 'in_doubt', reason: reopened, calls };
        }
        // A send that may have executed, ending after another send under the key was accepted
        // (a stalled send, and a `resend` meanwhile): the service may have run the call twice.
        // A send a person weighed counts: a resolution on a reference cannot say which send made it.
        const ranWeighedToo = sendsThatMayHaveRun(calls, true);
        if (
          mayHaveExecuted &&
          entry.reference !== undefined &&
          ranWeighedToo.some((ran) => ran.callId === callId) &&
          ranWeighedToo.some((ran) => ran.callId !== callId)
        ) {
          const twice =
            `${entry.settledBy === undefined ? 'accepted' : 'settled'} with the reference ${entry.reference}, and another send under the key ended ` +
            `with ${reason}: more than one transaction may have executed, look it up`;
          this.logger.error(`The payments journal entry ${entry.idempotencyKey} was ${twice}`);
          return { ...moreThanOnce(entry, twice), version, updatedAt: at, calls };
        }
        // A send's late end (an undo that outlived a retry under the key) speaks for that send
        // only: the entry's state is the latest send's, which may have executed.
        if (
          (entry.state !== 'started' && entry.state !== 'in_doubt') ||
          entry.calls.at(-1)?.callId !== callId
        ) {
          return { ...entry, version, updatedAt: at, calls };
        }
        // The latest send was refused, but an earlier one under the key executed (the service
        // answered it) or may have (it ended in doubt, and this send was a `resend` over it):
        // `refused` would say the key never executed and let it be sent again, so the entry stays
        // in doubt for a person.
        if (outcome === 'refused') {
          const executed = hasExecuted(entry);
          const unsentResend =
            known && error.attempts === 0 && isResendOverAnOpenSend(calls, callId);
          if (executed || anotherMayHaveRun(calls, callId) || unsentResend) {
            const why =
              entry.state === 'in_doubt' && entry.reason !== undefined
                ? entry.reason
                : executed
                  ? `${executedBecause(entry)} an earlier call under the key, and a later send ended with ${reason}`
                  : unsentResend
                    ? `an earlier send under the key never ended and may have executed; a resend over it was not sent (${reason})`
                    : `an earlier send under the key may have executed, and a later send ended with ${reason}`;
            return { ...entry, version, updatedAt: at, state: 'in_doubt', reason: why, calls };
          }
        }
        return { ...entry, version, updatedAt: at, state: outcome, reason, calls };
      },
      undo,
    );
  }

  /**
   * Settles the entry the settlement points at (by idempotency key, else by reference) when it
   * agrees with it: same reference once the entry has one, same amount, same kind of call, and a
   * reference no other entry holds. Rejects when the store fails.
   */
  async settle(settlement: JournalSettlement): Promise<JournalSettleResult> {
    let entry =
      settlement.idempotencyKey === undefined
        ? undefined
        : await this.entryUnder(settlement.idempotencyKey);
    entry ??= await this.store.findByReference(settlement.reference);
    if (entry === undefined) {
      // Named by no key, or one the journal does not hold: a call being sent may get the record's
      // reference from its answer, and the event is then that call's, handed over with its key
      // (docs/journal.md, "Webhooks"). Asked again after the answer, as for a key being sent.
      const sending = (await this.callsTheRecordMayBe(settlement)).find((call) =>
        this.isBeingSent(call),
      );
      // The reference asked again after the open calls: an answer written between the first two
      // reads is in neither, and would leave the call's own event keyless.
      entry = await this.store.findByReference(settlement.reference);
      if (entry === undefined) {
        return sending === undefined
          ? { result: 'no-entry' }
          : { result: 'in-flight', entry: sending };
      }
    }
    for (let round = 0; round < MAX_REPLACE_ROUNDS; round += 1) {
      // Its `malipo_key` comes from a URL anyone can write: until the answer gives the call's
      // reference, an event about another transaction could settle the call (docs/journal.md).
      if (this.isBeingSent(entry)) return { result: 'in-flight', entry };
      const known = entry.otherExecutions;
      const another = known?.includes(settlement.reference) === true;
      if (another || (known !== undefined && settlement.reference === entry.reference)) {
        // More than one execution: only a person, who weighs them all, settles the entry; the
        // record of one of them, agreeing or not, changes nothing, and one of the others is
        // reported as a second execution.
        const mismatch = this.recordMismatch(entry, settlement);
        if (mismatch !== undefined) return { result: 'contradicted', entry, why: mismatch };
        if (another) {
          const why = `${settlement.reference} is another execution of the call (docs/journal.md, "More than one execution")`;
          return { result: 'second-execution', entry, why };
        }
        if (FINAL_JOURNAL_STATES.has(entry.state) && entry.state !== settlement.outcome) {
          this.logger.error(
            `The service's record of ${settlement.reference} says ${settlement.outcome}; the journal ` +
              `entry ${entry.idempotencyKey}, executed more than once, was resolved ${entry.state} ` +
              `by hand (${entry.note ?? 'no note'}): left as resolved, check it`,
          );
        }
        return { result: 'unchanged', entry };
      }
      if (refusedByTheServiceOnly(entry)) {
        // The service refused every send, yet its own record of a webhook under the key, with
        // the call's figures, says one executed: in doubt, and settled below as such an entry.
        // Only on a record no other call could own: the key is in a URL anyone can write.
        const bar = await this.barToReopening(entry, settlement);
        if (bar !== undefined) return { result: 'contradicted', entry, why: bar };
        const status = entry.calls[entry.calls.length - 1].httpStatus;
        const reopened: PaymentsJournalEntry = {
          ...entry,
          state: 'in_doubt',
          reason:
            `the service refused the call (HTTP ${status}), yet its record of ` +
            `${settlement.reference} (${settlement.outcome}), which a webhook under the key named, ` +
            'is of the call: it may have executed',
          version: entry.version + 1,
          updatedAt: new Date(this.now()).toISOString(),
        };
        const now = await this.writtenOrNow(entry, reopened);
        if (now === undefined) return { result: 'no-entry' };
        if (now === reopened) {
          this.logger.error(
            `The payments journal entry ${entry.idempotencyKey} was reopened in doubt: ${reopened.reason}`,
          );
        }
        entry = now;
        continue;
      }
      const why = this.contradiction(entry, settlement);
      if (why !== undefined) {
        // Named by a key anyone can write into a URL: reported (payment.duplicate), not written,
        // so that a genuine record paired with a stranger's key cannot put its entry in doubt.
        const second = await this.isSecondExecution(entry, settlement);
        return { result: second ? 'second-execution' : 'contradicted', entry, why };
      }
      let rival: PaymentsJournalEntry | undefined;
      if (entry.reference !== undefined) {
        // Two entries hold the reference (their answers written at once, or while the store could
        // not tell who held it): the one the store found first keeps it, and this one is not
        // settled by the record of another call's transaction. A store that cannot tell now (it
        // throws, or does not answer in time) holds up no settlement of the entry's own reference.
        const holder = await this.otherHolderOf(entry.reference, entry.idempotencyKey);
        if (holder) {
          const taken = { reference: entry.reference, holder };
          const next = withoutTakenReference(entry, taken);
          const why = `the reference ${entry.reference} belongs to the call ${holder.idempotencyKey}, which held it first`;
          if (next === undefined) {
            this.logger.error(weighedHolderLog(entry.idempotencyKey, taken));
            return { result: 'contradicted', entry, why };
          }
          const inDoubt: PaymentsJournalEntry = {
            ...next,
            version: entry.version + 1,
            updatedAt: new Date(this.now()).toISOString(),
          };
          const now = await this.writtenOrNow(entry, inDoubt);
          if (now === inDoubt) {
            this.logger.error(takenLog(entry.idempotencyKey, taken));
            return { result: 'contradicted', entry: inDoubt, why, wrote: true };
          }
          if (now === undefined) return { result: 'no-entry' };
          entry = now;
          continue;
        }
      } else {
        // The key comes from a URL anyone can write: a reference of another call settles nothing.
        // The open calls are read before the references, so that a call whose answer is written
        // between the two reads is seen by one of them (open without a reference, or holding it).
        rival = await this.rivalOf(entry, settlement);
        const holder = await this.store.findByReference(settlement.reference);
        if (holder !== undefined && holder.idempotencyKey !== entry.idempotencyKey) {
          const taken = `the reference ${settlement.reference} belongs to the call ${holder.idempotencyKey}`;
          return { result: 'contradicted', entry, why: taken };
        }
      }
      // Being sent, the rival may get the record's reference from its answer: ask again later.
      if (rival && this.isBeingSent(rival)) return { result: 'in-flight', entry: rival };
      if (rival) {
        const doubt =
          rival.reference === undefined
            ? `the call ${rival.idempotencyKey} could as well be the record's, and neither has a reference: a person decides (resolve with the reference)`
            : `the call ${rival.idempotencyKey}, executed more than once, could as well be the record's, and this one has no reference: a person decides (resolve with the reference)`;
        // Kept with the webhooks deferred during the send: the record may be this call's own
        // execution, so the key is neither sent again nor resolved `refused` until it is placed.
        const at = new Date(this.now()).toISOString();
        const deferredEvents = withDeferredEvent(entry, settlement.reference, settlement.kind, at);
        if (deferredEvents !== undefined) {
          const next: PaymentsJournalEntry = {
            ...entry,
            version: entry.version + 1,
            updatedAt: at,
            deferredEvents,
          };
          const now = await this.writtenOrNow(entry, next);
          if (now === undefined) return { result: 'no-entry' };
          if (now !== next) {
            entry = now;
            continue;
          }
          entry = next;
        }
        return { result: 'contradicted', entry, why: doubt, undecided: true };
      }
      // Two sends under the key ended as ones that may have executed (a `resend` over a send whose
      // answer was lost, itself unanswered): the record is of one of them, which cannot be told,
      // and the other may have executed too. The entry takes the reference and stays in doubt.
      // A send a person weighed counts here: resolved `refused`, then sent again without an
      // answer, the key's record may be the weighed send's, which the person then misjudged.
      if (entry.reference === undefined && sendsThatMayHaveRun(entry.calls, true).length >= 2) {
        const twice =
          `settled by the record of ${settlement.reference} (${settlement.outcome}), but more than ` +
          'one send under the key may have executed and the record cannot tell which: more than ' +
          'one transaction may have executed, look it up';
        this.logger.error(`The payments journal entry ${entry.idempotencyKey} was ${twice}`);
        const next: PaymentsJournalEntry = {
          ...moreThanOnce({ ...entry, reference: settlement.reference }, twice),
          version: entry.version + 1,
          updatedAt: new Date(this.now()).toISOString(),
        };
        const now = await this.writtenOrNow(entry, next);
        if (now === next) return { result: 'settled', entry: next };
        if (now === undefined) return { result: 'no-entry' };
        entry = now;
        continue;
      }
      if (FINAL_JOURNAL_STATES.has(entry.state)) {
        if (entry.state === settlement.outcome) {
          if (
            entry.settledBy !== 'manual' ||
            entry.settledStatus !== undefined ||
            settlement.status === undefined
          ) {
            return { result: 'unchanged', entry };
          }
          // A person's finding the service's final record now bears out (also one marked
          // unconfirmed): confirmed, so that `reconcile()` no longer looks it up.
          const { unconfirmed: _unconfirmed, ...stillTheirs } = entry;
          const confirmed: PaymentsJournalEntry = {
            ...stillTheirs,
            version: entry.version + 1,
            updatedAt: new Date(this.now()).toISOString(),
            settledStatus: settlement.status,
          };
          const now = await this.writtenOrNow(entry, confirmed);
          if (now === confirmed) return { result: 'unchanged', entry: confirmed };
          if (now === undefined) return { result: 'no-entry' };
          entry = now;
          continue;
        }
        // Only a manual resolution gets here (see `contradiction`): the service's own record of
        // the entry's reference outranks a person's finding.
        this.logger.error(
          `The service's record of ${settlement.reference} says ${settlement.outcome}; the journal ` +
            `entry ${entry.idempotencyKey} was resolved ${entry.state} by hand (${entry.note ?? 'no note'}): ` +
            `it now follows the service`,
        );
      }
      const next = withoutReason({
        ...withoutSettlement(entry),
        state: settlement.outcome,
        version: entry.version + 1,
        updatedAt: new Date(this.now()).toISOString(),
        reference: settlement.reference,
        settledBy: settlement.by,
        ...(settlement.status === undefined ? {} : { settledStatus: settlement.status }),
        ...(settlement.outcome === 'failed' && settlement.reason !== undefined
          ? { settledReason: settlement.reason }
          : {}),
      });
      const now = await this.writtenOrNow(entry, next);
      if (now === next) return { result: 'settled', entry: next };
      if (now === undefined) return { result: 'no-entry' };
      entry = now;
    }
    throw new Error(`The journal entry ${entry.idempotencyKey} kept changing while being settled`);
  }

  /**
   * `next` once written over `entry`; when another writer changed the entry first, the entry as
   * it is now (undefined: gone), for the caller to decide again.
   */
  private async writtenOrNow(
    entry: PaymentsJournalEntry,
    next: PaymentsJournalEntry,
  ): Promise<PaymentsJournalEntry | undefined> {
    if (await this.store.replace(this.sealed(next))) return next;
    return this.entryUnder(entry.idempotencyKey);
  }

  /**
   * The entry a person may resolve as `resolution` says, as it stands now: it must exist, be
   * neither final nor being sent, and agree with the resolution (its reference, an executed call's
   * reference for `succeeded` and `failed`, none for `refused`).
   * @throws PaymentsValidationError for a malformed resolution; PaymentsReconcilerError naming
   *   what stops it.
   */
  async resolvable(
    idempotencyKey: string,
    resolution: PaymentsJournalResolution,
  ): Promise<{ stored: PaymentsJournalEntry; entry: PaymentsJournalEntry }> {
    const { outcome, reference } = readResolution(resolution);
    const stored = await this.entryUnder(idempotencyKey);
    if (stored === undefined)
      throw this.unresolved(idempotencyKey, `The journal has no entry ${idempotencyKey}`);
    const entry = this.view(stored);
    if (FINAL_JOURNAL_STATES.has(entry.state)) {
      throw this.unresolved(
        idempotencyKey,
        `The journal entry ${idempotencyKey} is ${entry.state} already`,
      );
    }
    if (entry.state === 'started') {
      throw this.unresolved(
        idempotencyKey,
        `The journal entry ${idempotencyKey} is being sent now: resolve it after its deadline (${entry.deadlineAt})`,
      );
    }
    if (
      entry.reference !== undefined &&
      reference !== undefined &&
      reference !== entry.reference &&
      entry.otherExecutions?.includes(reference) !== true
    ) {
      throw this.unresolved(
        idempotencyKey,
        `The journal entry ${idempotencyKey} has reference ${entry.reference}, not ${reference}`,
      );
    }
    if (outcome === 'refused' && hasExecuted(entry)) {
      throw this.unresolved(
        idempotencyKey,
        `The journal entry ${idempotencyKey} cannot be resolved 'refused': ${executedBecause(entry)} ` +
          'a call under its key, so the call executed',
      );
    }
    if (
      outcome === 'refused' &&
      entry.deferredEvents !== undefined &&
      entry.deferredEvents.length
    ) {
      throw this.unresolved(
        idempotencyKey,
        `The journal entry ${idempotencyKey} cannot be resolved 'refused' yet: ${deferredReason(entry)}`,
      );
    }
    if (outcome !== 'refused' && (entry.reference ?? reference) === undefined) {
      throw this.unresolved(
        idempotencyKey,
        `The journal entry ${idempotencyKey} has no reference: a call that ${outcome} has one at ` +
          "the service; resolve it with that reference, or as 'refused' if it did not execute",
      );
    }
    return { stored, entry };
  }

  /**
   * Settles an entry by hand (docs/journal.md, "By a person"): only one {@link resolvable} so, and
   * `succeeded` or `failed` with a reference given only with the service's record of it, which
   * must agree.
   * @throws PaymentsReconcilerError naming what stops it (no entry, final already, in flight,
   *   another reference).
   */
  async resolve(
    idempotencyKey: string,
    resolution: PaymentsJournalResolution,
    /** The service's record of the reference (given, or the entry's), looked up by the reconciler. */
    record?: JournalSettlement,
  ): Promise<PaymentsJournalEntry> {
    const { outcome, reference } = resolution;
    for (let round = 0; round < MAX_REPLACE_ROUNDS; round += 1) {
      const { stored, entry } = await this.resolvable(idempotencyKey, resolution);
      // A reference a person gives is taken only with the service's record of it; a call the
      // service executed more than once, only with the final record of the one resolved on.
      const several = entry.otherExecutions !== undefined;
      if (
        outcome !== 'refused' &&
        ((entry.reference === undefined && record?.reference !== reference) ||
          (several && (record?.reference !== (reference ?? entry.reference) || !record?.status)))
      ) {
        throw this.unresolved(
          idempotencyKey,
          `The journal entry ${idempotencyKey} can be resolved ${outcome} only with the service's ` +
            `${several ? 'final ' : ''}record of the reference (PaymentsReconciler.resolve looks it up)`,
        );
      }
      if (reference !== undefined && entry.reference === undefined) {
        const mismatch = record && this.recordMismatch(entry, record);
        if (mismatch !== undefined) {
          throw this.unresolved(
            idempotencyKey,
            `The journal entry ${idempotencyKey} cannot take ${reference}: ${mismatch}`,
          );
        }
      }
      if (reference !== undefined && reference !== entry.reference) {
        const holder = await this.store.findByReference(reference);
        if (holder !== undefined && holder.idempotencyKey !== idempotencyKey) {
          throw this.unresolved(
            idempotencyKey,
            `The reference ${reference} belongs to the journal entry ${holder.idempotencyKey}`,
          );
        }
      }
      const note = resolution.note.trim();
      const at = new Date(this.now()).toISOString();
      // Resolved on one of its other executions: that one is the call's, the rest are listed.
      const swapped =
        reference !== undefined && entry.otherExecutions?.includes(reference) === true
          ? {
              reference,
              otherExecutions: [
                ...(entry.reference === undefined ? [] : [entry.reference]),
                ...entry.otherExecutions.filter((other) => other !== reference),
              ],
            }
          : {};
      const next: PaymentsJournalEntry = {
        ...withoutReason(withoutSettlement(stored)),
        state: outcome,
        version: stored.version + 1,
        updatedAt: at,
        resolvedAt: at,
        calls: weighedCalls(stored.calls),
        settledBy: 'manual',
        note,
        // The service's final record bore it out; without one, `reconcile()` looks it up until
        // the record is final (docs/journal.md, "By a person").
        ...(record?.status === undefined ? {} : { settledStatus: record.status }),
        ...(outcome === 'refused' ? { reason: `resolved by hand: ${note}` } : {}),
        ...((entry.reference ?? reference) === undefined
          ? {}
          : { reference: entry.reference ?? reference }),
        ...swapped,
      };
      if (await this.store.replace(this.sealed(next))) return next;
    }
    throw this.unresolved(
      idempotencyKey,
      `The journal entry ${idempotencyKey} kept changing while being resolved`,
    );
  }

  /**
   * Whether a person's resolution awaiting confirmation ({@link awaitsConfirmation}) is past
   * {@link PAYMENTS_CONFIRMATION_WINDOW_MS} since it was written.
   */
  confirmationLapsed(entry: PaymentsJournalEntry): boolean {
    return this.windowLapsedSince(entry.resolvedAt ?? entry.updatedAt);
  }

  /** Whether {@link PAYMENTS_CONFIRMATION_WINDOW_MS} has passed since `at` (ISO 8601). */
  windowLapsedSince(at: string): boolean {
    return this.now() - Date.parse(at) >= PAYMENTS_CONFIRMATION_WINDOW_MS;
  }

  /**
   * Marks a person's resolution the service's record did not bear out `unconfirmed`, saying `why`
   * (logged at error level): `reconcile()` no longer looks it up. Nothing when it no longer awaits
   * confirmation (a settlement came first). Resolves whether this call marked it.
   */
  async markUnconfirmed(entry: PaymentsJournalEntry, why: string): Promise<boolean> {
    const { entry: after, written: marked } = await this.rewriteEntry(
      entry.idempotencyKey,
      (current) => (awaitsConfirmation(current) ? { ...current, unconfirmed: why } : undefined),
    );
    if (marked) {
      this.logger.error(
        `The journal entry ${entry.idempotencyKey} was resolved ${entry.state} by hand ` +
          `(${entry.note ?? 'no note'}), and the service's record does not bear it out: ${why}; ` +
          'reconcile() no longer looks it up: check it (docs/journal.md, "By a person")',
      );
    } else if (after !== undefined && awaitsConfirmation(after)) {
      throw new Error(`The journal entry ${entry.idempotencyKey} kept changing while being marked`);
    }
    return marked;
  }

  /** What stops a person's resolution of `idempotencyKey`: nothing was resolved. */
  private unresolved(idempotencyKey: string, message: string): PaymentsReconcilerError {
    return new PaymentsReconcilerError(message, { code: 'REFUSED', idempotencyKey });
  }

  /**
   * Marks a `started` entry past its deadline `in_doubt` in the store. Resolves with the entry as
   * stored afterwards, and whether this mark is what changed it (another writer may have first).
   */
  async markOverdue(
    entry: PaymentsJournalEntry,
  ): Promise<{ readonly entry: PaymentsJournalEntry; readonly marked: boolean }> {
    const viewed = this.view(entry);
    if (viewed === entry) return { entry, marked: false };
    const next = {
      ...viewed,
      version: entry.version + 1,
      updatedAt: new Date(this.now()).toISOString(),
    };
    if (await this.store.replace(this.sealed(next))) return { entry: next, marked: true };
    return { entry: (await this.entryUnder(entry.idempotencyKey)) ?? entry, marked: false };
  }

  /**
   * Lists `reference` as another execution of the call of `idempotencyKey`, whose entry holds
   * another reference, and puts the entry in doubt (logged at error level): the service's final
   * record of `reference` agrees with the call, and a webhook deferred while it was being sent
   * named it. Nothing when the entry holds no reference, or that one, or lists it already.
   * Resolves whether this call listed it.
   */
  async anotherExecution(idempotencyKey: string, reference: string): Promise<boolean> {
    let reason = '';
    const { written } = await this.rewriteEntry(idempotencyKey, (entry) => {
      if (
        entry.reference === undefined ||
        entry.reference === reference ||
        entry.otherExecutions?.includes(reference) === true
      ) {
        return undefined;
      }
      reason =
        `${entry.state} on the reference ${entry.reference}, and the service's final record of ` +
        `${reference}, named by a webhook deferred while the call was being sent, agrees with ` +
        'the call: more than one transaction may have executed, look both up';
      return moreThanOnce(entry, reason, reference);
    });
    if (written) this.logger.error(`The payments journal entry ${idempotencyKey} was ${reason}`);
    return written;
  }

  /**
   * Whether a settlement that names `entry` by its key, with another reference, is a second
   * execution of its call rather than a forgery: the amount and kind agree and no other entry
   * holds the reference (a forger mixing a genuine reference of another call with this key is
   * caught by the latter).
   */
  private async isSecondExecution(
    entry: PaymentsJournalEntry,
    settlement: JournalSettlement,
  ): Promise<boolean> {
    if (
      entry.reference === undefined ||
      entry.reference === settlement.reference ||
      settlement.idempotencyKey !== entry.idempotencyKey
    ) {
      return false;
    }
    if (entry.amount === undefined || settlement.amount === undefined) return false;
    if (this.recordMismatch(entry, settlement) !== undefined) return false;
    // A lost answer's call could as well be the record's (rule 10): a forger who pairs its
    // reference with this key must not raise a false alarm, nor have its delivery taken as done.
    // Read before the references: a call whose answer is written between the two reads is then
    // seen by one of them (open without a reference, or holding it).
    if ((await this.rivalOf(entry, settlement)) !== undefined) return false;
    return (await this.store.findByReference(settlement.reference)) === undefined;
  }

  /**
   * What of the service's record says it is not the execution of the entry's call: its figures
   * ({@link figuresMismatch}), or, unless it is the record of the entry's own reference, a phone
   * number other than the call's (another payment of the same amount, which a forger may pair
   * with this call's key while the entry has no reference).
   */
  recordMismatch(entry: PaymentsJournalEntry, settlement: RecordFigures): string | undefined {
    const mismatch = figuresMismatch(entry, settlement);
    if (mismatch !== undefined) return mismatch;
    if (entry.reference !== undefined && entry.reference === settlement.reference) return undefined;
    if (this.toldApart(entry.payee, this.payeeOf(settlement.phoneNumber))) {
      return "the service's record is of another phone number than the entry's call";
    }
    return undefined;
  }

  /**
   * Whether the record's fingerprint (of its phone or account number) tells apart an entry's call
   * with `fingerprint`: both known, the entry's made with this key (one of a rotated secret tells
   * nothing), and different.
   */
  private toldApart(
    fingerprint: string | undefined,
    recordFingerprint: string | undefined,
  ): boolean {
    return (
      recordFingerprint !== undefined &&
      fingerprint !== undefined &&
      fingerprint.startsWith(`${this.payeeKeyId}.`) &&
      fingerprint !== recordFingerprint
    );
  }

  /**
   * Another call without a reference that the record may as well be the execution of: the same
   * figures, and a phone number the record does not tell apart. A key in a URL, which anyone can
   * write, cannot then say which call the record is (docs/journal.md, rule 10).
   */
  private async rivalOf(
    entry: PaymentsJournalEntry,
    settlement: JournalSettlement,
  ): Promise<PaymentsJournalEntry | undefined> {
    // The record's account number, when it is the entry's own, tells apart a call to another
    // account (the same contact number on two merchant or bank payouts); one that is not the
    // entry's says nothing, since what the service puts there for a payout is not documented.
    const recordAccount = this.payeeAccountOf(settlement.accountNumber);
    const ownAccount = recordAccount !== undefined && entry.payeeAccount === recordAccount;
    return (await this.callsTheRecordMayBe(settlement)).find(
      (other) =>
        other.idempotencyKey !== entry.idempotencyKey &&
        !(ownAccount && this.toldApart(other.payeeAccount, recordAccount)),
    );
  }

  /**
   * The open calls that the record may be an execution of ({@link rivalOf}): without a reference,
   * or in doubt as executed more than once (`otherExecutions`: an execution of theirs may have no
   * known reference, as a send stalled past a resend that was accepted).
   */
  private async callsTheRecordMayBe(
    settlement: JournalSettlement,
  ): Promise<PaymentsJournalEntry[]> {
    const recordPayee = this.payeeOf(settlement.phoneNumber);
    const open = await this.store.list({ states: ['started', 'in_doubt'] });
    return open.filter(
      (other) =>
        (other.reference === undefined ||
          (other.state === 'in_doubt' &&
            other.otherExecutions !== undefined &&
            other.reference !== settlement.reference &&
            !other.otherExecutions.includes(settlement.reference))) &&
        figuresMismatch(other, settlement) === undefined &&
        !this.toldApart(other.payee, recordPayee),
    );
  }

  /**
   * Why the record of a webhook under the key of an entry {@link refusedByTheServiceOnly} does not
   * reopen it, or undefined when it does: it must agree with the entry (figures, payee, the
   * figures a record must give), have been created while the call was being sent (give or take
   * the clocks), and be a transaction no other call holds or could as well own.
   */
  private async barToReopening(
    entry: PaymentsJournalEntry,
    settlement: JournalSettlement,
  ): Promise<string | undefined> {
    const refused = 'the entry was refused by the service';
    const mismatch = this.recordMismatch(entry, settlement) ?? missingFigure(entry, settlement);
    if (mismatch !== undefined) return `${refused}, and ${mismatch}`;
    const created = settlement.createdAt === undefined ? NaN : Date.parse(settlement.createdAt);
    const lastEnd = Math.max(
      ...entry.calls.map((call) => Date.parse(call.endedAt ?? call.startedAt)),
    );
    if (Number.isNaN(created) || created > lastEnd + CLOCK_SKEW_MS) {
      return `${refused}, and the service's record was not created while it was being sent`;
    }
    const holder = await this.store.findByReference(settlement.reference);
    if (holder !== undefined && holder.idempotencyKey !== entry.idempotencyKey) {
      return `${refused}, and the reference ${settlement.reference} belongs to the call ${holder.idempotencyKey}`;
    }
    const rival = await this.rivalOf(entry, settlement);
    if (rival !== undefined) {
      return `${refused}, and the call ${rival.idempotencyKey} could as well be the record's`;
    }
    return undefined;
  }

  /**
   * Why `settlement` cannot settle `entry`, from the two alone, or undefined when it agrees with
   * it. Whether another entry holds the reference is {@link settle}'s to read.
   */
  private contradiction(
    entry: PaymentsJournalEntry,
    settlement: JournalSettlement,
  ): string | undefined {
    if (neverExecuted(entry)) {
      // Every send was refused, or never sent: no genuine outcome can exist.
      return 'the entry was refused: its call never executed';
    }
    if (entry.reference !== undefined && entry.reference !== settlement.reference) {
      return `the entry has reference ${entry.reference}, the event ${settlement.reference}`;
    }
    const mismatch = this.recordMismatch(entry, settlement);
    if (mismatch !== undefined) return mismatch;
    if (
      FINAL_JOURNAL_STATES.has(entry.state) &&
      entry.state !== settlement.outcome &&
      !(entry.settledBy === 'manual' && entry.reference === settlement.reference)
    ) {
      return `the entry ${entry.state}, the service's record says ${settlement.outcome}`;
    }
    return missingFigure(entry, settlement);
  }

  /**
   * Records a send's end with retries; a write that still fails is logged and given up. With
   * `undo` (of a create that failed), an entry that is not there was never written, which is what
   * the undo wants.
   */
  private async endSend(
    sent: JournalSendRef,
    outcome: string,
    retryDelaysMs: readonly number[],
    /** The entry after the send's end, written at `at` as `version`. */
    change: (entry: PaymentsJournalEntry, at: string, version: number) => PaymentsJournalEntry,
    undo = false,
    /** Going on in the background after the caller's attempts failed. */
    late = false,
  ): Promise<void> {
    const { idempotencyKey, callId } = sent;
    // The entry as this process wrote it before sending: most sends end with one write and no
    // read; a write that lost to another (a webhook settled it) reads the entry back.
    let known = sent.written;
    for (let attempt = 0; ; attempt += 1) {
      try {
        for (let round = 0; round < MAX_REPLACE_ROUNDS; round += 1) {
          const entry = known ?? (await this.entryUnder(idempotencyKey));
          known = undefined;
          if (entry === undefined && undo) return;
          if (entry === undefined) throw new Error('the entry is gone');
          if (!holdsCall(entry, callId)) return;
          const next = change(entry, new Date(this.now()).toISOString(), entry.version + 1);
          if (await this.store.replace(this.sealed(next))) return;
        }
        throw new Error('the entry kept changing');
      } catch (error) {
        if (attempt >= retryDelaysMs.length) {
          const why = error instanceof Error ? error.message : 'error';
          if (!undo && !late && !this.closing.signal.aborted) {
            this.logger.warn(
              `The payments journal could not record yet that the call ${idempotencyKey} ended ` +
                `(${outcome}): ${why}; it tries again in the background for about ` +
                `${Math.round(sumOf(LATE_END_RETRY_DELAYS_MS) / 1000)} s`,
            );
            this.inBackground(
              this.endSend(
                { idempotencyKey, callId },
                outcome,
                LATE_END_RETRY_DELAYS_MS,
                change,
                false,
                true,
              ),
            );
            return;
          }
          this.logger.error(
            `The payments journal could not record that the call ${idempotencyKey} ended ` +
              `(${outcome}): ${why}; the entry counts as in doubt after its deadline`,
          );
          return;
        }
      }
      const waitMs = retryDelaysMs[attempt];
      try {
        // Nobody awaits an undo or a late attempt: close() stops their waits rather than sit out
        // their schedule.
        await delay(waitMs, undefined, undo || late ? { signal: this.closing.signal } : undefined);
      } catch {
        // Most failed writes never landed (Redis refused the password, or was down): only one
        // that landed anyway leaves an entry behind.
        this.logger.warn(
          undo
            ? `The payments journal stopped at close trying to mark the call ${idempotencyKey} ` +
                'unsent: if its failed write landed anyway, its entry counts as in doubt after its ' +
                'deadline'
            : `The payments journal stopped at close trying to record that the call ` +
                `${idempotencyKey} ended (${outcome}): its entry counts as in doubt after its ` +
                'deadline',
        );
        return;
      }
    }
  }

  /** A store call before sending: its failure stops the call with `JOURNAL_UNAVAILABLE`. */
  private async storeCall<T>(
    intent: JournalIntent,
    what: string,
    call: () => Promise<T>,
  ): Promise<T> {
    try {
      return await call();
    } catch (error) {
      throw this.unavailable(intent, what, error);
    }
  }

  /** `IN_DOUBT` for a key under which a call executed ({@link hasExecuted}): `so` says what follows. */
  private executed(
    intent: JournalIntent,
    entry: PaymentsJournalEntry,
    so: string,
  ): PaymentsJournalError {
    return this.stopped(
      intent,
      'IN_DOUBT',
      entry,
      true,
      `${executedBecause(entry)} a call under this idempotencyKey: it executed, so ${so}; a ` +
        'person resolves the entry (PaymentsReconciler.resolve)',
    );
  }

  /** The error of a store call that failed before sending: logged, the call not sent. */
  private unavailable(intent: JournalIntent, what: string, error: unknown): PaymentsJournalError {
    this.logger.warn(
      `The payments journal failed (${what}) for ${intent.operation} ${intent.idempotencyKey}: ` +
        `${error instanceof Error ? error.message : 'error'}; the call was not sent`,
    );
    return new PaymentsJournalError(
      // The store's own words (hosts, ports) stay in the log and the cause, out of the message
      // that PaymentsExceptionFilter shows to API clients.
      `${intent.operation} was not sent: the payments journal could not be written`,
      {
        operation: intent.operation,
        idempotencyKey: intent.idempotencyKey,
        code: 'JOURNAL_UNAVAILABLE',
        mayHaveExecuted: false,
        ...(error instanceof Error ? { cause: error } : {}),
      },
    );
  }

  /**
   * A write before sending that failed (a `create`, or a retry's `replace`) may still have been
   * made (a timeout after the command left): marks such a send `refused`, since it was not sent.
   * The first try is queued behind that write on the store's connection, then a few more over
   * about four seconds; if they all fail (Redis hangs that long), the entry reads `in_doubt` after
   * its deadline to other processes, and this one sends the key again (`unsent`). An entry that
   * does not hold the send was never written so: nothing to do.
   */
  private undoUnsentWrite(idempotencyKey: string, callId: string): void {
    this.unsent.add(callId);
    if (this.unsent.size > MAX_UNSENT_CALLS) {
      this.unsent.delete(this.unsent.values().next().value as string);
    }
    const undo = this.failed(
      { idempotencyKey, callId },
      new PaymentsJournalError('not sent: the journal failed', {
        operation: 'journal',
        idempotencyKey,
        code: 'JOURNAL_UNAVAILABLE',
        mayHaveExecuted: false,
      }),
      { retryDelaysMs: UNDO_RETRY_DELAYS_MS, undo: true },
    );
    this.inBackground(undo);
  }

  /** A write nobody awaits, which close() waits for once it stopped its waits. */
  private inBackground(write: Promise<void>): void {
    this.undos.add(write);
    void write.then(() => this.undos.delete(write));
  }

  /**
   * The latest send of `entry` when it is one that was never sent (its create failed, then landed
   * late), known so to this process or to the caller (`known`), and nothing recorded its end.
   */
  private unsentLeftover(
    entry: PaymentsJournalEntry,
    known: UnsentSends | undefined,
  ): PaymentsJournalCall | undefined {
    const latest = entry.calls.at(-1);
    if (latest === undefined || latest.outcome !== undefined) return undefined;
    if (entry.state !== 'started' && entry.state !== 'in_doubt') return undefined;
    return this.unsent.has(latest.callId) || known?.callIds.includes(latest.callId) === true
      ? latest
      : undefined;
  }

  private stopped(
    intent: JournalIntent,
    code: PaymentsJournalErrorCode,
    entry: PaymentsJournalEntry | undefined,
    mayHaveExecuted: boolean,
    /** Said instead of the code's usual reason. */
    reason?: string,
  ): PaymentsJournalError {
    const why: Record<PaymentsJournalErrorCode, string> = {
      IN_DOUBT:
        'an earlier call under this idempotencyKey may have executed and its outcome is not known: wait for its webhook or reconcile(); pass { resend: true } only if you know it did not execute',
      // A process that died mid-send leaves the same entry: said, with when it stops counting.
      IN_PROGRESS:
        'a call under this idempotencyKey is being sent now, or its process died mid-send: it ' +
        `counts as in doubt after its deadline${entry === undefined ? '' : ` (${entry.deadlineAt})`}, ` +
        'when reconcile() or a retry finds out more',
      ALREADY_FAILED:
        'the call under this idempotencyKey failed at the service: a new attempt needs a new idempotencyKey',
      ALREADY_REFUSED: `this idempotencyKey is held refused without a send (${entry?.reason ?? 'a payout-run item cancelled, or taken over and settled refused by a person'}): a new attempt needs a new idempotencyKey; pass { resend: true } only to send under it anyway`,
      JOURNAL_UNAVAILABLE: 'the payments journal could not be written',
    };
    return new PaymentsJournalError(`${intent.operation} was not sent: ${reason ?? why[code]}`, {
      operation: intent.operation,
      idempotencyKey: intent.idempotencyKey,
      code,
      mayHaveExecuted,
      ...(entry === undefined ? {} : { entry: this.shown(entry) }),
    });
  }
}

/**
 * Whether a call under the key of `entry` is sent again without `resend`, as a retry: it is
 * `refused`, and not a key held for a payout-run takeover (held keys have no send; docs/journal.md).
 */
export function sentAgainAsRetry(entry: PaymentsJournalEntry): boolean {
  return entry.state === 'refused' && entry.calls.length > 0;
}

/**
 * Whether the key's `refused` stands for good: a person resolved it so, a payout run's cancel
 * closed it (`settledBy`), or the service itself refused its latest send with a 4xx or a refusal
 * under 2xx, but not for the account's sake ({@link isRateLimitOrCredentialsStatus}, in the HTTP
 * status or the body: a payout run requeues such an item). Not a send that never went out
 * (`JOURNAL_UNAVAILABLE`, a closing client).
 * @internal
 */
export function refusedForGood(entry: PaymentsJournalEntry): boolean {
  if (entry.state !== 'refused') return false;
  if (entry.settledBy === 'manual' || entry.settledBy === 'run') return true;
  const latest = entry.calls.at(-1);
  if (latest?.outcome !== 'refused') return false;
  const status = latest.httpStatus;
  return (
    status !== undefined &&
    status < 500 &&
    !isRateLimitOrCredentialsStatus(status) &&
    !isRateLimitOrCredentialsStatus(latest.serviceStatus)
  );
}

/**
 * Whether no send under the entry's key can have executed: it is `refused` and every send ended
 * refused. (A `refused` entry whose earlier send was in doubt, resent with `resend: true`, may
 * still have executed then.)
 */
export function neverExecuted(entry: PaymentsJournalEntry): boolean {
  return entry.state === 'refused' && entry.calls.every((call) => call.outcome === 'refused');
}

/**
 * A figure of the entry the record leaves out, which then cannot agree with it: the service's
 * record of a transaction names its amount and currency (docs/wire-contract.md, "Transaction
 * status").
 */
function missingFigure(entry: PaymentsJournalEntry, settlement: RecordFigures): string | undefined {
  if (entry.amount !== undefined && settlement.amount === undefined) {
    return "the service's record has no amount to compare with the entry's";
  }
  if (entry.currency !== undefined && !settlement.currency) {
    return "the service's record has no currency to compare with the entry's";
  }
  return undefined;
}

/**
 * Whether the entry is {@link neverExecuted} by the service's word alone: every send answered with
 * a refusal (a 4xx, a 429), none held or never sent, and no person's resolution. The service's
 * own record of a webhook under its key may then still say the call executed (a service that
 * executed, then answered 429), which reopens it in doubt (docs/journal.md, "Webhooks").
 * @internal
 */
export function refusedByTheServiceOnly(entry: PaymentsJournalEntry): boolean {
  return (
    neverExecuted(entry) &&
    entry.settledBy === undefined &&
    entry.calls.length > 0 &&
    entry.calls.every((call) => call.httpStatus !== undefined)
  );
}

/**
 * How far before an entry's start the service's record of its call may say it was created: the
 * service's clock and ours may differ.
 */
const CLOCK_SKEW_MS = 10 * 60 * 1000;

/**
 * What of the service's record's figures says it is not the execution of the entry's call:
 * another amount, kind or currency, or a transaction created before the call was first sent (a
 * genuine record of an older call, which a forger may pair with this call's key).
 */
function figuresMismatch(
  entry: PaymentsJournalEntry,
  settlement: RecordFigures,
): string | undefined {
  if (
    entry.amount !== undefined &&
    settlement.amount !== undefined &&
    amountsDiffer(
      entry.amount,
      settlement.amount,
      // The entry's own currency: a record's, which anyone's reference may bring, never widens
      // the tolerance (a transfer sent without a currency has none, and is compared to 2 decimals).
      entry.currency,
    )
  ) {
    return `the entry has amount ${entry.amount}, the service's record ${settlement.amount}`;
  }
  const kind = EVENT_KIND_OF_OPERATION[entry.operation];
  if (settlement.kind !== undefined && settlement.kind !== 'unknown' && kind !== settlement.kind) {
    return `the entry is a ${kind ?? entry.operation}, the event a ${settlement.kind}`;
  }
  if (
    entry.currency !== undefined &&
    settlement.currency !== undefined &&
    settlement.currency !== '' &&
    settlement.currency.toUpperCase() !== entry.currency.toUpperCase()
  ) {
    return `the entry is in ${entry.currency}, the service's record in ${settlement.currency}`;
  }
  // The record of the reference the service gave the call is the call's, whatever the clocks say;
  // the time tells apart only records a key alone points at.
  const ownReference = entry.reference !== undefined && entry.reference === settlement.reference;
  const created = settlement.createdAt === undefined ? NaN : Date.parse(settlement.createdAt);
  if (
    !ownReference &&
    !Number.isNaN(created) &&
    created < Date.parse(entry.startedAt) - CLOCK_SKEW_MS
  ) {
    return `the service's record was created at ${settlement.createdAt}, before the call (${entry.startedAt})`;
  }
  return undefined;
}

/** The fields of a {@link PaymentsJournalResolution}: any other key is refused. */
const RESOLUTION_FIELDS: ReadonlySet<string> = new Set(['outcome', 'reference', 'note']);

const RESOLUTION_TARGET = 'PaymentsJournalResolution';

/**
 * `resolution` read once into a plain object and checked: an object of `outcome`, `note` and an
 * optional `reference`, each as its rule says.
 * @throws PaymentsValidationError naming the field and its rule.
 * @internal
 */
export function readResolution(resolution: unknown): PaymentsJournalResolution {
  const read = readObjectOfKnownKeys(
    resolution,
    'resolution',
    'resolution must be an object',
    RESOLUTION_FIELDS,
    (shown) => `${shown} is not a field of a resolution (${[...RESOLUTION_FIELDS].join(', ')})`,
  );
  if (read.problems) throw new PaymentsValidationError(RESOLUTION_TARGET, read.problems);
  const { outcome, reference, note } = read.fields;
  if (typeof outcome !== 'string' || !['succeeded', 'failed', 'refused'].includes(outcome)) {
    throw invalidResolution(
      'outcome',
      'isIn',
      "outcome must be 'succeeded', 'failed' or 'refused'",
    );
  }
  if (typeof note !== 'string' || note.trim() === '') {
    throw invalidResolution(
      'note',
      'isNotEmpty',
      'note is required: who resolved it, and how they know',
    );
  }
  if (reference !== undefined && (typeof reference !== 'string' || reference === '')) {
    throw invalidResolution('reference', 'isNotEmpty', 'reference must be a non-empty string');
  }
  if (outcome === 'refused' && reference !== undefined) {
    throw invalidResolution(
      'reference',
      'isEmpty',
      'a refused call has no reference: it did not execute',
    );
  }
  return {
    outcome: outcome as PaymentsJournalResolution['outcome'],
    note,
    ...(reference === undefined ? {} : { reference }),
  };
}

/** A resolution that breaks a rule: `field` of `PaymentsJournalResolution`. */
function invalidResolution(field: string, rule: string, message: string): PaymentsValidationError {
  return new PaymentsValidationError(RESOLUTION_TARGET, [{ field, rule, message }]);
}

/**
 * Fails when the store answered `action` of `idempotencyKey` with another key's entry: a store
 * that cuts keys (a `VARCHAR(64)` column) holds two keys as one, and the second call would be
 * answered with the first's outcome, or refused as a reuse. Also with an entry that has no list
 * of calls or no version, which every decision on the key reads.
 */
function assertEntryOf(
  idempotencyKey: string,
  entry: PaymentsJournalEntry,
  action: 'create' | 'get',
): void {
  if (entry.idempotencyKey === idempotencyKey) {
    // A store that leaves out empty lists (a held key has no send) answers what no code can read.
    if (Array.isArray(entry.calls) && Number.isInteger(entry.version)) return;
    throw new Error(
      `The journal store answered ${action} of the idempotencyKey ${idempotencyKey} with an entry ` +
        'without its calls (a list, empty or not) or its version (a whole number): it must give ' +
        'entries back as they were given (docs/journal.md, "The store contract")',
    );
  }
  throw new Error(
    `The journal store answered ${action} of the idempotencyKey ${idempotencyKey} with the entry of ` +
      `${String(entry.idempotencyKey).slice(0, 300)}: it must keep keys of up to 255 characters whole ` +
      '(docs/journal.md, "The store contract")',
  );
}

/** The entry without `reason` (it explains only `refused`, `failed` and `in_doubt`). */
function withoutReason(entry: PaymentsJournalEntry): PaymentsJournalEntry {
  if (entry.reason === undefined) return entry;
  // A rest copy, not `delete`: deleting a field turns the object into a slow dictionary.
  const { reason: _reason, ...rest } = entry;
  return rest;
}

/**
 * `entry` without what settled it (`settledBy`, `settledStatus`, `settledReason`, and a person's
 * `unconfirmed`; their `note` and `resolvedAt` stay, for the auditors): it is open again, or
 * settled anew.
 */
function withoutSettlement(entry: PaymentsJournalEntry): PaymentsJournalEntry {
  if (
    entry.settledBy === undefined &&
    entry.settledStatus === undefined &&
    entry.settledReason === undefined &&
    entry.unconfirmed === undefined
  ) {
    return entry;
  }
  const {
    settledBy: _settledBy,
    settledStatus: _settledStatus,
    settledReason: _settledReason,
    unconfirmed: _unconfirmed,
    ...open
  } = entry;
  return open;
}

/** How a send that never went out (its write's answer lost, its undo not written) ends, at `at`. */
function unsentEnd(at: string): Partial<PaymentsJournalCall> {
  return { outcome: 'refused', code: 'JOURNAL_UNAVAILABLE', mayHaveExecuted: false, endedAt: at };
}

/**
 * Whether the service gave a reference to a call under the entry's key, or accepted one without
 * a reference: it executed, whatever else is in doubt, and is never sent again nor resolved
 * `refused`.
 */
function hasExecuted(entry: PaymentsJournalEntry): boolean {
  return (
    entry.reference !== undefined ||
    entry.otherExecutions !== undefined ||
    entry.answer !== undefined
  );
}

/**
 * Whether `call` ended as a send that may have executed: `in_doubt`, `mayHaveExecuted`, or
 * accepted. A send that never ended is not: a `resend` over it is made once someone found it never
 * reached the service (docs/journal.md, "What happens when something breaks").
 */
function endedMayHaveExecuted(call: PaymentsJournalCall): boolean {
  return (
    call.outcome === 'in_doubt' || call.outcome === 'accepted' || call.mayHaveExecuted === true
  );
}

/**
 * The sends of `calls` that may have executed ({@link endedMayHaveExecuted}) and nobody weighed
 * since (with `weighedToo`, weighed ones too: a person's finding a record may prove wrong). A send
 * answered 409 at its only attempt ran nothing when an earlier send may have (the service held the
 * key for it); with none earlier, it stands for an execution under the key by itself. Weighing is
 * the mark a person's resolution writes on the sends that had ended, never a time.
 */
function sendsThatMayHaveRun(
  calls: readonly PaymentsJournalCall[],
  weighedToo = false,
): PaymentsJournalCall[] {
  const ran: PaymentsJournalCall[] = [];
  for (const call of calls) {
    if ((!weighedToo && call.weighed === true) || !endedMayHaveExecuted(call)) continue;
    if (call.httpStatus === 409 && call.attempts === 1 && ran.length > 0) continue;
    ran.push(call);
  }
  return ran;
}

/**
 * Whether `callId` is a `resend` over an entry in doubt of which another send never ended (its
 * process died or stalled): a resend that was never sent weighs nothing, and the key stays as it
 * read before it, in doubt, instead of `refused`.
 */
function isResendOverAnOpenSend(calls: readonly PaymentsJournalCall[], callId: string): boolean {
  let resend = false;
  let open = false;
  for (const call of calls) {
    if (call.callId === callId) resend = call.resend === true;
    else if (call.outcome === undefined && call.endedAt === undefined && call.weighed !== true) {
      open = true;
    }
  }
  return resend && open;
}

/** Whether a send under the key other than `callId` may have executed ({@link sendsThatMayHaveRun}). */
function anotherMayHaveRun(
  calls: readonly PaymentsJournalCall[],
  callId: string,
  weighedToo = false,
): boolean {
  return sendsThatMayHaveRun(calls, weighedToo).some((call) => call.callId !== callId);
}

/** The id of the key a payee fingerprint (`<key id>.<mac>`) was made with. */
function payeeKeyIdOf(payee: string | undefined): string | undefined {
  return payee?.split('.', 1)[0];
}

/** Whether two values are both known and unequal. */
function differ<T>(one: T | undefined, other: T | undefined): boolean {
  return one !== undefined && other !== undefined && one !== other;
}

/**
 * The entry's `deferredEvents` with one of `reference` arrived at `at`; undefined when it holds
 * that reference already, or {@link MAX_DEFERRED_EVENTS}.
 */
function withDeferredEvent(
  entry: PaymentsJournalEntry,
  reference: string,
  kind: string | undefined,
  at: string,
): PaymentsJournalDeferredEvent[] | undefined {
  const deferred = entry.deferredEvents ?? [];
  if (deferred.length >= MAX_DEFERRED_EVENTS) return undefined;
  if (deferred.some((event) => event.reference === reference)) return undefined;
  return [...deferred, { reference, ...(kind === undefined ? {} : { kind }), at }];
}

/** Why an entry in doubt with `deferredEvents` is neither sent again nor resolved `refused` yet. */
function deferredReason(entry: PaymentsJournalEntry): string {
  const named = (entry.deferredEvents ?? []).map((event) => event.reference).join(', ');
  return (
    `webhooks under this idempotencyKey named ${named}, which reconcile() has not placed yet: ` +
    "one may be the call's execution. Run reconcile(), which looks them up (the call's own " +
    'record settles the entry; one of no such transaction is dropped, and one it cannot place ' +
    "for 72 h is dropped then); neither { resend: true } nor a resolution 'refused' is taken before"
  );
}

/** What shows that a call under the key of an entry that {@link hasExecuted} executed. */
function executedBecause(entry: PaymentsJournalEntry): string {
  const references = journalEntryReferences(entry);
  return references.length > 0
    ? `the service gave the reference ${references.join(', ')} to`
    : 'the service accepted (without a transaction reference)';
}

/**
 * `entry` in doubt because the service may have executed its call more than once, `other` (a
 * reference of another execution, when known) listed in `otherExecutions`: nothing but a person
 * settles it (docs/journal.md, "More than one execution").
 */
function moreThanOnce(
  entry: PaymentsJournalEntry,
  reason: string,
  other?: string,
): PaymentsJournalEntry {
  const listed = entry.otherExecutions ?? [];
  // Not capped: each comes from the service's answer to a send (a key with a reference is never
  // sent again) or from a settlement it displaced, so there are few.
  const otherExecutions =
    other === undefined || other === entry.reference || listed.includes(other)
      ? listed
      : [...listed, other];
  return { ...withoutSettlement(entry), state: 'in_doubt', reason, otherExecutions };
}

/**
 * Whether `entry` was resolved `succeeded` or `failed` by a person while the service's record of
 * its reference was not final (no `settledStatus`, not `unconfirmed`, and executed once: a
 * person's resolution of several executions stands as it is): `reconcile()` looks it up
 * until the record is final or the confirmation window closes, and the record outranks the
 * person.
 * @internal
 */
export function awaitsConfirmation(entry: PaymentsJournalEntry): boolean {
  return (
    entry.settledBy === 'manual' &&
    entry.settledStatus === undefined &&
    entry.unconfirmed === undefined &&
    entry.otherExecutions === undefined &&
    entry.reference !== undefined &&
    FINAL_JOURNAL_STATES.has(entry.state)
  );
}

/**
 * Whether `entry` is being sent with `callId` as its latest send, not ended: this `begin()`'s own
 * write (a `callId` is drawn for one `begin()`), whose answer was lost and command sent again.
 */
function isOwnUnsentEntry(entry: PaymentsJournalEntry, callId: string): boolean {
  const latest = entry.calls.at(-1);
  return (
    entry.state === 'started' &&
    latest !== undefined &&
    latest.callId === callId &&
    latest.outcome === undefined
  );
}

/** Whether `callId` is one of the entry's sends. */
function holdsCall(entry: PaymentsJournalEntry, callId: string): boolean {
  for (const call of entry.calls) if (call.callId === callId) return true;
  return false;
}

/** `calls` with the send `callId` ended by `end`. */
function endCall(
  entry: PaymentsJournalEntry,
  callId: string,
  end: Partial<PaymentsJournalCall>,
): PaymentsJournalCall[] {
  const calls = new Array<PaymentsJournalCall>(entry.calls.length);
  for (let index = 0; index < calls.length; index += 1) {
    const call = entry.calls[index];
    calls[index] = call.callId === callId ? { ...call, ...end } : call;
  }
  return calls;
}

/** `calls` as a person's resolution leaves them: each send that has ended is `weighed`. */
function weighedCalls(calls: readonly PaymentsJournalCall[]): PaymentsJournalCall[] {
  return calls.map((call) =>
    call.endedAt === undefined || call.weighed === true ? call : { ...call, weighed: true },
  );
}

/**
 * At most {@link MAX_CALLS_PER_ENTRY} sends, by dropping the oldest sends after the first that
 * ended refused (never executed), so that {@link neverExecuted} reads the same of the sends kept
 * as of all of them. Every other send is evidence (one that may have executed, weighed or not, one
 * answered 409, one that has not ended) and stays, beyond the bound if need be: each needs a
 * caller's `resend` or a person's resolution, so they stay few.
 */
function boundCalls(calls: PaymentsJournalCall[]): PaymentsJournalCall[] {
  let kept = calls;
  while (kept.length > MAX_CALLS_PER_ENTRY) {
    const dropped = kept.findIndex((call, index) => index > 0 && call.outcome === 'refused');
    if (dropped === -1) return kept;
    kept = [...kept.slice(0, dropped), ...kept.slice(dropped + 1)];
  }
  return kept;
}

/** What a read-and-replace of an entry left: the entry as it is after, and whether it wrote it. */
interface EntryRewrite {
  readonly entry: PaymentsJournalEntry | undefined;
  readonly written: boolean;
}

/** A reference the service gave a call that another entry holds. */
interface TakenReference {
  readonly reference: string;
  readonly holder: PaymentsJournalEntry;
}

/** How the reason of an entry answered with another call's reference goes on. */
function takenBecause(taken: TakenReference): string {
  return (
    `with the reference ${taken.reference}, which the call ${taken.holder.idempotencyKey} holds: ` +
    "one transaction is not two calls, look both up (a service that answered this call with the other's " +
    'answer may not have executed it)'
  );
}

/**
 * `entry`, which holds `taken.reference` that another entry held first, in doubt without it, the
 * answer that gave it, or a settlement by its record; `callId`'s send ended in doubt. Undefined
 * for an entry a person weighed (resolved by hand, or executed more than once), left to them.
 */
function withoutTakenReference(
  entry: PaymentsJournalEntry,
  taken: TakenReference,
  callId?: string,
): PaymentsJournalEntry | undefined {
  if (entry.settledBy === 'manual' || entry.otherExecutions !== undefined) return undefined;
  const { reference: _taken, answer: _answer, ...rest } = withoutSettlement(entry);
  return {
    ...rest,
    state: 'in_doubt',
    reason: `the service accepted the call ${takenBecause(taken)}`,
    calls: callId === undefined ? entry.calls : endCall(entry, callId, { outcome: 'in_doubt' }),
  };
}

/** The error line of an entry a person weighed that holds a reference another held first. */
function weighedHolderLog(idempotencyKey: string, taken: TakenReference): string {
  return (
    `The payments journal entry ${idempotencyKey} holds the reference ${taken.reference}, ` +
    `which the call ${taken.holder.idempotencyKey} held first: look both up`
  );
}

/** The error line of an entry answered with another call's reference. */
function takenLog(idempotencyKey: string, taken: TakenReference): string {
  return (
    `The payments journal entry ${idempotencyKey} was answered with the reference ` +
    `${taken.reference}, which the call ${taken.holder.idempotencyKey} holds: not taken as this ` +
    "call's, look both up"
  );
}

printsAsNameOnly(PaymentsJournal.prototype, 'PaymentsJournal');

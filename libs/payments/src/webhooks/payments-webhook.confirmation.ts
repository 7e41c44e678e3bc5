import { printsAsNameOnly } from '../secret-holders';
import { setMaxListeners } from 'node:events';
import { setTimeout as wait } from 'node:timers/promises';
import { Inject, Injectable, Logger, OnModuleDestroy, OnModuleInit } from '@nestjs/common';
import { ModuleRef, ModulesContainer } from '@nestjs/core';
import type { TransactionStatus } from '../dto/lookups';
import { amountsDiffer, recordFigures, recordOutcome } from '../transaction-outcome';
import { getPaymentsReconcilerToken, getTransactionsToken } from '../payments.decorators';
import { neverExecuted, refusedByTheServiceOnly } from '../journal/payments-journal';
import type { PaymentsJournalEntry } from '../journal/payments-journal.interfaces';
import type { PaymentsReconciler } from '../payments-reconciler';
import { OperationRunner } from '../operation-runner';
import { isBuiltAtBoot, registrationNameOf, registrationProvider } from '../registration-lookup';
import type { TransactionsService } from '../transactions.service';
import type { PaymentWebhookEvent } from './payment-webhook-event';
import { WEBHOOK_WIRE_FIELDS } from './payment-webhook.wire';
import {
  DEFAULT_IN_FLIGHT_HOLD_MS,
  DEFAULT_PENDING_RECHECK_DELAYS_MS,
  IN_FLIGHT_POLL_MS,
  IN_FLIGHT_READ_MS,
  MAX_HELD_DELIVERIES_PER_CALL,
  PAYMENTS_WEBHOOK_LOGGER_CONTEXT,
} from './payments-webhook.constants';
import { DEFAULT_REGISTRATION_NAME, PAYMENTS_WEBHOOK_OPTIONS } from '../payments.constants';
import { SecretRedactor } from '../secret-redactor';
import {
  PaymentWebhookBudgetError,
  PaymentWebhookConfirmationError,
  PaymentWebhookContradictedError,
  type PaymentWebhookContradiction,
  PaymentWebhookNotFinalError,
  PaymentWebhookCallInFlightError,
  PaymentWebhookStoreError,
} from './payments-webhook.errors';
import type { PaymentsWebhookModuleOptions } from './payments-webhook.interfaces';
import { forLog, ThrottledWarnings } from './payments-webhook.logging';
import { type LookupBudgetName, PaymentsWebhookLookups } from './payments-webhook.lookups';
import { moduleOptionError } from '../known-options';
import { PaymentsValidationError, failureNamed } from '../errors';

/** The record's status, fit for a log line. */
function shownStatus(record: TransactionStatus): string {
  const status: unknown = record.transactionDetails?.status;
  return typeof status === 'string' ? `"${forLog(status, 32)}"` : 'no status';
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** What a hold's timer resolves when the hold's time is up before the journal answered. */
const HOLD_ENDED = Symbol('hold ended');

/** The work running under `key` in `running`, else `start()`'s, shared until it ends. */
function sharedBy<T>(running: Map<string, Promise<T>>, key: string, start: () => Promise<T>) {
  const current = running.get(key);
  if (current) return current;
  const started = start().finally(() => running.delete(key));
  running.set(key, started);
  return started;
}

/**
 * What an event that is no success says, in its own values: a failure (`result_code 1`, `success
 * false`), or values of another type (`"0"`, `"true"`), which are no success either.
 */
function noSuccess(event: PaymentWebhookEvent): string {
  const shown = (key: string): string => forLog(JSON.stringify(event._raw[key]) ?? 'none', 24);
  return (
    `is no success (result_code ${shown(WEBHOOK_WIRE_FIELDS.resultCode.key)}, success ` +
    `${shown(WEBHOOK_WIRE_FIELDS.success.key)}; a success has result_code 0 and success true)`
  );
}

/**
 * What of the record contradicts the event, if anything. A record that is not final (`outcome`
 * undefined) contradicts only by its reference: its outcome and amount are judged once it settled.
 */
function contradiction(
  event: PaymentWebhookEvent,
  record: TransactionStatus,
  outcome: 'succeeded' | 'failed' | undefined,
): [PaymentWebhookContradiction, string] | undefined {
  const code: unknown = record.code;
  if (code !== event.transactionReference) {
    return [
      'reference-mismatch',
      `the record is of ${typeof code === 'string' ? forLog(code) : 'no reference'}`,
    ];
  }
  if (outcome === undefined) return undefined;
  if (event.succeeded !== (outcome === 'succeeded')) {
    return [
      'outcome-mismatch',
      `the event ${event.succeeded ? 'succeeded' : noSuccess(event)}, the record has ${shownStatus(record)}`,
    ];
  }
  const sent: unknown = event._raw[WEBHOOK_WIRE_FIELDS.amount.key];
  if (sent !== undefined && sent !== null && typeof event.amount !== 'number') {
    // `"7000000"`: left out of the typed event, it would pass unchecked into `_raw`.
    return ['amount-mismatch', 'the event has an amount that is not a number'];
  }
  const amount: unknown = record.amount;
  if (typeof event.amount === 'number' && typeof amount !== 'number') {
    // The handlers would read the event's amount, which anyone can write, unchecked.
    return ['amount-mismatch', `the event has amount ${event.amount}, the record none`];
  }
  if (
    typeof event.amount === 'number' &&
    typeof amount === 'number' &&
    amountsDiffer(event.amount, amount, recordFigures(record).currency)
  ) {
    return ['amount-mismatch', `the event has amount ${event.amount}, the record ${amount}`];
  }
  return undefined;
}

/** The record a watch ended on, and how many look-ups it took. */
interface WatchedRecord {
  readonly record: TransactionStatus;
  readonly lookUps: number;
}

/**
 * What settling the journal found that the dispatcher acts on: a second execution of the entry's
 * call (whose first reference it names) raises `payment.duplicate` only; and, once the journal
 * was asked, the idempotency key it vouches for.
 */
export interface JournalSettling {
  readonly secondExecutionOf?: string;
  /**
   * Present when the journal judged the event: the key of the entry it matched, or undefined when
   * none matched, since a key in a URL that names no entry of this reference is anyone's word.
   */
  readonly journaled?: { readonly idempotencyKey: string | undefined };
}

/**
 * Confirms webhook events with the service's status look-up before any handler sees them: the
 * service does not sign its callbacks, so the look-up is what tells a genuine outcome from a
 * forged one. The `TransactionsService` is found in the whole app at boot, so `PaymentsModule`
 * needs to be neither global nor imported here.
 */
@Injectable()
export class PaymentsWebhookConfirmation implements OnModuleInit, OnModuleDestroy {
  private readonly logger = new Logger(PAYMENTS_WEBHOOK_LOGGER_CONTEXT);
  /** Refusals and deferrals: anyone who reaches the route can cause them, a line each. */
  private readonly deliveryWarnings = new ThrottledWarnings(
    this.logger,
    'webhook refusals and deferrals',
  );
  /** The registration's look-ups, which confirm events. */
  private transactions?: TransactionsService;
  /**
   * The redactor of every registration's credentials, and the runners it was made of: made again
   * when they change (a registration loaded lazily after boot).
   */
  private redaction: { runners: readonly OperationRunner[]; redactor?: SecretRedactor } = {
    runners: [],
  };
  /** Registrations whose credentials cannot be redacted from deliveries, already logged. */
  private readonly unredactable = new Set<string>();
  /** Records being watched until final, by budget and reference: see `watch`. */
  private readonly watches = new Map<string, Promise<WatchedRecord>>();
  /** The reconciler of the same registration, when it has a journal: confirmed events settle it. */
  private reconciler?: PaymentsReconciler;
  private recheckDelaysMs: readonly number[] = DEFAULT_PENDING_RECHECK_DELAYS_MS;
  private inFlightHoldMs = DEFAULT_IN_FLIGHT_HOLD_MS;
  /** Deliveries waiting for the answer of a call being sent, by its key: one poll per call. */
  private readonly holds = new Map<string, Promise<PaymentsJournalEntry | undefined>>();
  /** How many deliveries wait in each of {@link holds}. */
  private readonly heldDeliveries = new Map<string, number>();
  /** Ends the holds when the app shuts down: they are answered 503 at once. */
  private readonly closing = new AbortController();

  constructor(
    @Inject(PAYMENTS_WEBHOOK_OPTIONS) private readonly options: PaymentsWebhookModuleOptions,
    private readonly moduleRef: ModuleRef,
    private readonly modules: ModulesContainer,
    private readonly lookups: PaymentsWebhookLookups,
  ) {
    // Each held call's poll listens for the shutdown: one per call being sent, not a leak.
    setMaxListeners(0, this.closing.signal);
  }

  /** Resolves the look-up at boot, so a missing `PaymentsModule` fails the boot, not a payment. */
  onModuleInit(): void {
    const delays: unknown = this.options.pendingRecheckDelaysMs;
    if (delays !== undefined) {
      if (
        !Array.isArray(delays) ||
        !delays.every((ms: unknown) => Number.isSafeInteger(ms) && (ms as number) >= 0)
      ) {
        throw moduleOptionError(
          'PaymentsWebhookModule',
          'pendingRecheckDelaysMs',
          'isArray',
          'pendingRecheckDelaysMs must be an array of non-negative integers (ms)',
        );
      }
      // A copy: the schedule is the one checked here, whatever becomes of the caller's array.
      this.recheckDelaysMs = [...(delays as number[])];
    }
    const hold: unknown = this.options.inFlightHoldMs;
    if (hold !== undefined) {
      if (!Number.isSafeInteger(hold) || (hold as number) < 0) {
        throw moduleOptionError(
          'PaymentsWebhookModule',
          'inFlightHoldMs',
          'isNonNegativeInteger',
          'inFlightHoldMs must be a non-negative integer (ms)',
        );
      }
      this.inFlightHoldMs = hold as number;
    }
    const { account } = this.options;
    const confirming = this.options.confirm !== false;
    try {
      this.transactions = registrationProvider<TransactionsService>(
        this.moduleRef,
        this.modules,
        getTransactionsToken(account),
        account,
      );
    } catch (error) {
      // A registration that is there but request-scoped says so itself; none: confirmation fails
      // the boot below.
      if (error instanceof PaymentsValidationError && (confirming || account !== undefined)) {
        throw error;
      }
    }
    this.redactorNow();
    // Confirmation needs the registration; without it, an account the app lacks is a typo.
    if (this.transactions === undefined && (confirming || account !== undefined)) {
      const which = account ? `PaymentsModule registration named "${account}"` : 'PaymentsModule';
      throw moduleOptionError(
        'PaymentsWebhookModule',
        'account',
        'isRegistered',
        confirming
          ? `PaymentsWebhookModule confirms webhooks with the TransactionsService of the ${which}, ` +
              `and the app has none. Import PaymentsModule.forRoot(${account ? `{ ..., name: '${account}' }` : '...'}) ` +
              'in the app, set the webhook option account to the name of a registration, or set confirm: false with a verify hook.'
          : `PaymentsWebhookModule's account names the PaymentsModule registration "${account}", and the app has none. Leave ` +
              'account out with confirm: false, or name a registration.',
      );
    }
    if (!confirming) {
      if (!this.options.verify) {
        this.logger.warn(
          'Webhook confirmation is off (confirm: false) and no verify hook is set: anyone who ' +
            'can reach the webhook route can post a fake success. Set verify, or keep confirm on.',
        );
      }
      return;
    }
    try {
      const reconciler = registrationProvider<PaymentsReconciler>(
        this.moduleRef,
        this.modules,
        getPaymentsReconcilerToken(account),
        account,
      );
      if (reconciler.enabled) this.reconciler = reconciler;
    } catch {
      // An app that provides its own TransactionsService (a test double) has no journal to feed.
    }
  }

  onModuleDestroy(): void {
    this.closing.abort();
  }

  /**
   * A delivery's parsed body with the credentials of every registration in the app redacted, in
   * every form: it comes from whoever posts it, and what it echoes reaches the event's fields, its
   * `_raw` and the app's handlers and logs.
   */
  redacted(body: unknown): unknown {
    const redactor = this.redactorNow();
    return redactor === undefined ? body : redactor.value(body);
  }

  /**
   * One redactor of the credentials of every registration in the app now: one route may receive
   * the callbacks of several accounts, and what `account` names is only the one that confirms.
   * Found in the modules, not by `moduleRef.get(..., { each: true })`, which throws for all when
   * one registration is request-scoped. Such a registration has no credentials until a request
   * comes: its deliveries cannot be redacted of them, which is logged once at error level.
   */
  private redactorNow(): SecretRedactor | undefined {
    const runners: OperationRunner[] = [];
    for (const module of this.modules.values()) {
      const wrapper = module.providers.get(OperationRunner);
      if (wrapper === undefined) continue;
      if (!isBuiltAtBoot(wrapper)) {
        const name = registrationNameOf(module);
        this.warnUnredactable(typeof name === 'string' ? name : DEFAULT_REGISTRATION_NAME);
      } else if (
        wrapper.instance instanceof OperationRunner &&
        // A registration being loaded lazily holds a bare prototype until its options resolve:
        // it has no credentials yet, and is taken once it has (the runners differ then).
        wrapper.instance.credentialsRedactor instanceof SecretRedactor
      ) {
        runners.push(wrapper.instance);
      }
    }
    const known = this.redaction.runners;
    if (runners.length !== known.length || runners.some((runner, at) => runner !== known[at])) {
      this.redaction = {
        runners,
        redactor: SecretRedactor.combining(runners.map((runner) => runner.credentialsRedactor)),
      };
    }
    return this.redaction.redactor;
  }

  private warnUnredactable(registration: string): void {
    if (this.unredactable.has(registration)) return;
    this.unredactable.add(registration);
    this.logger.error(
      `The PaymentsModule registration "${registration}" is request-scoped or transient: its ` +
        'credentials are made per request, and webhook deliveries cannot be redacted of them ' +
        "(an echo of its password would reach the handlers). Other registrations' are.",
    );
  }

  /**
   * Settles the payments journal's entry a confirmed event points at (by `malipo_key`, else by
   * reference), when the registration has a journal. An event that contradicts its entry settles
   * nothing and is refused (logged).
   * @throws PaymentWebhookContradictedError (`journal-mismatch`).
   * @throws PaymentWebhookStoreError when the journal cannot be read or written (answered 503).
   * @throws PaymentWebhookCallInFlightError when the entry is being sent, its reference not known
   *   yet (answered 503).
   */
  async settleJournal(event: PaymentWebhookEvent): Promise<JournalSettling> {
    const reconciler = this.reconciler;
    const record = event.confirmation;
    if (!reconciler || !record) return {};
    let settled: Awaited<ReturnType<PaymentsReconciler['settle']>>;
    try {
      settled = await reconciler.settle({
        ...(event.idempotencyKey === undefined ? {} : { idempotencyKey: event.idempotencyKey }),
        reference: event.transactionReference,
        outcome: event.succeeded ? 'succeeded' : 'failed',
        ...recordFigures(record),
        kind: event.kind,
        by: 'webhook',
      });
    } catch (error) {
      this.logger.warn(
        `The payments journal failed for ${forLog(event.transactionReference)}: ` +
          `${error instanceof Error ? error.message : 'error'}; the service should deliver it again`,
      );
      throw new PaymentWebhookStoreError(event.transactionReference, 'journal', error);
    }
    if (settled.result === 'no-entry') return { journaled: { idempotencyKey: undefined } };
    if (settled.result === 'in-flight') throw await this.deferredInFlight(event, settled.entry);
    if (settled.result === 'second-execution') {
      // Settles nothing and is not refused: the dispatcher raises payment.duplicate, and only it.
      this.logger.error(
        `A ${event.kind} webhook for ${forLog(event.transactionReference)} names the journal entry ` +
          `${forLog(settled.entry.idempotencyKey)} of another reference: the service may have ` +
          `executed the call twice (${settled.why})`,
      );
      return {
        secondExecutionOf: settled.entry.reference,
        journaled: { idempotencyKey: settled.entry.idempotencyKey },
      };
    }
    if (settled.result === 'contradicted') {
      throw this.refused(
        event,
        'journal-mismatch',
        `it points at the journal entry ${forLog(settled.entry.idempotencyKey)}, which it contradicts: ${settled.why}`,
      );
    }
    // Matched by its reference, the entry's key is the call's, whatever key the URL carried.
    return { journaled: { idempotencyKey: settled.entry.idempotencyKey } };
  }

  /**
   * The event with the service's record as `confirmation`, or the event as it is when `confirm` is
   * off. A record that is not final yet is looked up again after each of `pendingRecheckDelaysMs`.
   * @throws PaymentWebhookContradictedError when the record contradicts the event (logged).
   * @throws PaymentWebhookNotFinalError when the record is still not final after the re-checks
   *   (logged).
   * @throws PaymentWebhookConfirmationError when the look-up failed (logged).
   */
  async confirm(event: PaymentWebhookEvent): Promise<PaymentWebhookEvent> {
    const transactions = this.transactions;
    if (this.options.confirm === false || !transactions) return event;
    const budget = await this.budgetOf(event);
    const { record, lookUps } = await this.watch(transactions, event, budget);
    const outcome = recordOutcome(record);
    const found = contradiction(event, record, outcome);
    if (found) throw this.refused(event, ...found);
    if (outcome !== undefined) return { ...event, confirmation: record };
    this.deliveryWarnings.warn(
      `Deferred a ${event.kind} webhook for ${forLog(event.transactionReference)}: the ` +
        `service's record is not final (${shownStatus(record)}) after ${lookUps} ` +
        'look-up(s); answered 503 so that the service delivers it again',
    );
    throw new PaymentWebhookNotFinalError(event.transactionReference);
  }

  /**
   * The record of the event's reference once final (or of another reference), else after the last
   * re-check. Deliveries of one reference from one budget that arrive meanwhile share it, look-ups
   * and all: a flood of copies of a pending reference costs one schedule of look-ups, not one each,
   * and none of them waits behind the others' schedules.
   */
  private watch(
    transactions: TransactionsService,
    event: PaymentWebhookEvent,
    budget: LookupBudgetName,
  ): Promise<WatchedRecord> {
    return sharedBy(this.watches, `${budget}:${event.transactionReference}`, () =>
      this.recheck(transactions, event, budget),
    );
  }

  private async recheck(
    transactions: TransactionsService,
    event: PaymentWebhookEvent,
    budget: LookupBudgetName,
  ): Promise<WatchedRecord> {
    for (let recheck = 0; ; recheck += 1) {
      const record = await this.lookUp(transactions, event, budget);
      if (
        record.code !== event.transactionReference ||
        recordOutcome(record) !== undefined ||
        recheck >= this.recheckDelaysMs.length
      ) {
        return { record, lookUps: recheck + 1 };
      }
      await sleep(this.recheckDelaysMs[recheck]);
    }
  }

  /**
   * Which look-up budget the event draws from (docs/errors.md, "What a flood of webhooks costs"):
   * without a journal, the main one; with it, none for an event of a journal entry with the same
   * reference, the main one for an entry matched by `malipo_key` that has no reference yet, the
   * small foreign one for any other, or a refusal when the app said all its calls are journaled.
   * An event of an entry being sent waits for its call's answer first (`inFlightHoldMs`).
   * @throws PaymentWebhookCallInFlightError, before any look-up, for an entry still being sent.
   */
  private async budgetOf(event: PaymentWebhookEvent): Promise<LookupBudgetName> {
    const reconciler = this.reconciler;
    if (!reconciler) return 'main';
    let entry: Awaited<ReturnType<PaymentsReconciler['findEntry']>>;
    try {
      entry = await reconciler.findEntry(event.idempotencyKey, event.transactionReference);
    } catch (error) {
      this.logger.warn(
        `The payments journal failed for ${forLog(event.transactionReference)}: ` +
          `${error instanceof Error ? error.message : 'error'}; the service should deliver it again`,
      );
      throw new PaymentWebhookStoreError(event.transactionReference, 'journal', error);
    }
    if (entry === undefined) {
      if (this.options.unjournaledEvents !== 'refuse') return 'foreign';
      this.lookups.refusedWithoutLookUp('not-journaled');
      throw this.refused(
        event,
        'not-journaled',
        'it matches no payments journal entry (unjournaledEvents: refuse)',
      );
    }
    // Its call is being sent: only the answer's reference tells whether the event is about it.
    if (reconciler.isBeingSent(entry)) {
      const answered = await this.answerOf(reconciler, entry.idempotencyKey);
      if (answered === undefined) throw await this.deferredInFlight(event, entry);
      entry = answered;
    }
    // Its key names an entry of another reference: a forgery, or a second execution of the call
    // (payment.duplicate), which is rare: the small budget.
    if (entry.reference !== undefined && entry.reference !== event.transactionReference) {
      return 'foreign';
    }
    if (neverExecuted(entry) && !refusedByTheServiceOnly(entry)) {
      // Its call never executed: no genuine event of it can exist. (One the service alone said
      // it refused is looked up: a service may execute, then answer 429.)
      this.lookups.refusedWithoutLookUp('journal-mismatch');
      throw this.refused(
        event,
        'journal-mismatch',
        `it points at the journal entry ${forLog(entry.idempotencyKey)}, whose call never executed`,
      );
    }
    // Only the service and this app know an entry's reference: an event that has it is looked up
    // at once, whatever floods the budgets. One whose entry has no reference yet (its answer was
    // lost, or is on its way) names it by the key, which is in a URL anyone may see: budgeted,
    // and each key only a few times from the main budget.
    return entry.reference === undefined
      ? this.lookups.budgetOfKeyOnly(entry.idempotencyKey)
      : 'known';
  }

  /**
   * The entry of `idempotencyKey` once its call is no longer being sent (its answer came, or its
   * deadline passed), or undefined when it still is after `inFlightHoldMs`, is gone, cannot be
   * read, or the app shuts down, or when {@link MAX_HELD_DELIVERIES_PER_CALL} deliveries already
   * wait for it. Deliveries that wait for one call share one poll of the journal.
   */
  private async answerOf(
    reconciler: PaymentsReconciler,
    idempotencyKey: string,
  ): Promise<PaymentsJournalEntry | undefined> {
    const held = this.heldDeliveries.get(idempotencyKey) ?? 0;
    if (held >= MAX_HELD_DELIVERIES_PER_CALL) return undefined;
    this.heldDeliveries.set(idempotencyKey, held + 1);
    try {
      return await sharedBy(this.holds, idempotencyKey, () =>
        this.hold(reconciler, idempotencyKey),
      );
    } finally {
      const left = (this.heldDeliveries.get(idempotencyKey) ?? 1) - 1;
      if (left > 0) this.heldDeliveries.set(idempotencyKey, left);
      else this.heldDeliveries.delete(idempotencyKey);
    }
  }

  private async hold(
    reconciler: PaymentsReconciler,
    idempotencyKey: string,
  ): Promise<PaymentsJournalEntry | undefined> {
    const until = Date.now() + this.inFlightHoldMs;
    try {
      for (let left = this.inFlightHoldMs; left > 0; left = until - Date.now()) {
        await wait(Math.min(IN_FLIGHT_POLL_MS, left), undefined, { signal: this.closing.signal });
        // The last read starts as the hold's time runs out, and the call's answer may be in it.
        const readMs = Math.max(until - Date.now(), IN_FLIGHT_READ_MS);
        const entry = await this.readWithin(reconciler, idempotencyKey, readMs);
        if (entry === HOLD_ENDED) return undefined;
        if (entry === undefined || !reconciler.isBeingSent(entry)) return entry;
      }
    } catch {
      // The app shuts down, or the journal failed: answered 503, the service delivers it again.
    }
    return undefined;
  }

  /**
   * The journal's entry of `idempotencyKey`, or {@link HOLD_ENDED} when the read took longer than
   * `ms` (a store without a timeout) or the app shuts down first. Its timer ends with the read:
   * none outlives it.
   */
  private async readWithin(
    reconciler: PaymentsReconciler,
    idempotencyKey: string,
    ms: number,
  ): Promise<PaymentsJournalEntry | undefined | typeof HOLD_ENDED> {
    // One listener on the shutdown signal per read, removed with it: a signal made by
    // `AbortSignal.any()` of the app-long one would be kept by it after the read (Node 20).
    const read = new AbortController();
    const endRead = (): void => read.abort();
    const { signal: closing } = this.closing;
    if (closing.aborted) return HOLD_ENDED;
    closing.addEventListener('abort', endRead, { once: true });
    const timedOut = wait<typeof HOLD_ENDED>(ms, HOLD_ENDED, { signal: read.signal }).catch(
      (): typeof HOLD_ENDED => HOLD_ENDED,
    );
    try {
      return await Promise.race([reconciler.get(idempotencyKey), timedOut]);
    } finally {
      closing.removeEventListener('abort', endRead);
      read.abort();
    }
  }

  /**
   * The error of an event that names by key alone an entry being sent (logged): answered 503, so
   * that the service delivers it again once the call's answer gave the entry its reference. Its
   * reference is kept on the entry, for `reconcile()` should that answer never come.
   */
  private async deferredInFlight(
    event: PaymentWebhookEvent,
    entry: PaymentsJournalEntry,
  ): Promise<PaymentWebhookCallInFlightError> {
    let kept = 'kept for reconcile()';
    try {
      await this.reconciler?.deferEvent(
        entry.idempotencyKey,
        event.transactionReference,
        event.kind,
      );
    } catch (error) {
      kept = `not kept for reconcile(): the journal failed (${error instanceof Error ? error.message : 'error'})`;
    }
    this.deliveryWarnings.warn(
      `Deferred a ${event.kind} webhook for ${forLog(event.transactionReference)}: the journal ` +
        `entry ${forLog(entry.idempotencyKey)} it names is being sent and has no reference yet; ` +
        `answered 503 so that the service delivers it again (its reference ${kept})`,
    );
    return new PaymentWebhookCallInFlightError(event.transactionReference);
  }

  /** The service's record of the event's transaction, within the look-up budget. */
  private async lookUp(
    transactions: TransactionsService,
    event: PaymentWebhookEvent,
    budget: LookupBudgetName,
  ): Promise<TransactionStatus> {
    const reference = event.transactionReference;
    let result: Awaited<ReturnType<PaymentsWebhookLookups['lookUp']>>;
    try {
      result = await this.lookups.lookUp(reference, budget, () => transactions.status(reference));
    } catch (error) {
      if (error instanceof PaymentWebhookBudgetError || error instanceof PaymentWebhookStoreError) {
        throw error;
      }
      this.logger.warn(
        `Could not confirm a ${event.kind} webhook for ${forLog(reference)}: the status look-up ` +
          `failed (${failureNamed(error)}); the service should deliver it again`,
      );
      throw new PaymentWebhookConfirmationError(reference, error);
    }
    if (!result.found) {
      // A reference the journal holds exists: the service does not show it yet. Not refused for
      // good, the service delivers it again.
      if (budget === 'known') {
        throw new PaymentWebhookConfirmationError(
          reference,
          new Error('the service does not show a reference the payments journal holds yet'),
        );
      }
      throw this.refused(
        event,
        'unknown-reference',
        result.remembered
          ? 'the service did not know it a moment ago (remembered, not looked up again)'
          : 'the service has no such transaction',
      );
    }
    return result.record;
  }

  private refused(
    event: PaymentWebhookEvent,
    reason: PaymentWebhookContradiction,
    detail: string,
  ): PaymentWebhookContradictedError {
    // Reference, kind and reason only: the body may carry phone numbers and names.
    this.deliveryWarnings.warn(
      `Refused a ${event.kind} webhook for ${forLog(event.transactionReference)} (${reason}): ${detail}`,
    );
    return new PaymentWebhookContradictedError(event.transactionReference, reason, detail);
  }
}

// It reaches Nest's container (and the options as the app wrote them) through what it injects.
printsAsNameOnly(PaymentsWebhookConfirmation.prototype, 'PaymentsWebhookConfirmation');

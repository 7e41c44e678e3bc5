import { printsAsNameOnly } from '../secret-holders';
import { checkPaymentsWebhookOptions } from './payments-webhook.options';
import { Inject, Injectable, Logger, OnModuleInit } from '@nestjs/common';
import { DiscoveryService, MetadataScanner, Reflector } from '@nestjs/core';
import {
  PAYMENT_DUPLICATE_EVENT,
  type PaymentDuplicateEvent,
  type PaymentWebhookEvent,
} from './payment-webhook-event';
import {
  ALL_PAYMENT_EVENTS,
  DEFAULT_WEBHOOK_LEASE_MS,
  PAYMENTS_WEBHOOK_LOGGER_CONTEXT,
} from './payments-webhook.constants';
import {
  PAYMENT_EVENT_HANDLER,
  PAYMENTS_WEBHOOK_OPTIONS,
  PAYMENTS_WEBHOOK_STORE,
} from '../payments.constants';
import { type BoundHandler, decoratedMethods } from '../decorated-methods';
import { PaymentsWebhookConfirmation } from './payments-webhook.confirmation';
import {
  PaymentWebhookBusyError,
  PaymentWebhookConcurrentFailureError,
  PaymentWebhookContradictedError,
  PaymentWebhookCallInFlightError,
  PaymentWebhookStoreError,
} from './payments-webhook.errors';
import type { PaymentsWebhookModuleOptions } from './payments-webhook.interfaces';
import { forLog } from './payments-webhook.logging';
import type { PaymentsWebhookStore } from './payments-webhook.store';
import type { PaymentsWebhookStoreHost } from './payments-webhook.store-host';
import { moduleOptionError } from '../known-options';

/** What one delivery did. */
export interface PaymentWebhookDispatch {
  /** The event was processed before: no handler ran. */
  duplicate: boolean;
  /** Handlers that ran. */
  handled: number;
}

/**
 * How a delivery ended, as seen by a copy that waited for it: `processed` (the copy then finds it
 * in the store), `refused` (the journal refused the event, or deferred it while its call is sent:
 * the copy is judged on its own), `failed` (a handler or the store failed: the copy must not be
 * acknowledged either).
 */
type DeliveryEnd = 'processed' | 'refused' | 'failed';

/** Key of an event in the store: a reference has one outcome, delivered any number of times. */
function deliveryKey(event: PaymentWebhookEvent): string {
  return `${event.transactionReference}:${event.succeeded ? 'succeeded' : 'failed'}`;
}

/** The methods a store must have, as the boot error names them. */
const STORE_METHODS = {
  claim: 'claim(key, leaseMs)',
  complete: 'complete(key)',
  release: 'release(key)',
  recordReference: 'recordReference(idempotencyKey, reference)',
} as const;

/** Waits between the attempts to mark a processed event `done` when the store fails. */
const COMPLETE_RETRY_DELAYS_MS = [50, 200];

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Runs the `@OnPaymentEvent()` handlers of the app for each confirmed event, once: confirmation
 * first, then the claim in the store (so a forged event can never mark the genuine one as seen),
 * then the duplicate-execution check, then the handlers, then `complete` (or `release` when a
 * handler failed).
 *
 * The claim is what makes several instances safe: of all the deliveries of one event, to any
 * instance, one holds it at a time (`busy` answers 503, and the service delivers again later),
 * and once one completed the others are duplicates. Copies that reach the same instance are
 * confirmed together (one look-up), then wait for the delivery in flight (no store round trip,
 * and a 200 when it succeeds).
 */
@Injectable()
export class PaymentsWebhookDispatcher implements OnModuleInit {
  private readonly logger = new Logger(PAYMENTS_WEBHOOK_LOGGER_CONTEXT);
  private readonly handlers = new Map<string, BoundHandler[]>();
  /** Deliveries being handled now, by event key: a copy waits for the first instead of racing it. */
  private readonly inFlight = new Map<string, Promise<DeliveryEnd>>();

  private readonly store: PaymentsWebhookStore;
  private readonly leaseMs: number;

  constructor(
    private readonly discovery: DiscoveryService,
    private readonly scanner: MetadataScanner,
    private readonly reflector: Reflector,
    private readonly confirmation: PaymentsWebhookConfirmation,
    @Inject(PAYMENTS_WEBHOOK_STORE) host: PaymentsWebhookStoreHost,
    @Inject(PAYMENTS_WEBHOOK_OPTIONS) options: PaymentsWebhookModuleOptions,
  ) {
    checkPaymentsWebhookOptions(options);
    this.store = host.store;
    this.leaseMs = options.leaseMs ?? DEFAULT_WEBHOOK_LEASE_MS;
  }

  onModuleInit(): void {
    // A store written for an older version (has/add) could not claim events atomically, nor
    // journal references: several instances would run handlers twice.
    const store = this.store as Partial<Record<keyof typeof STORE_METHODS, unknown>>;
    const missing = Object.entries(STORE_METHODS)
      .filter(([method]) => typeof store[method as keyof typeof STORE_METHODS] !== 'function')
      .map(([, signature]) => signature);
    if (missing.length > 0) {
      throw moduleOptionError(
        'PaymentsWebhookModule',
        'store',
        'isPaymentsWebhookStore',
        `store must implement ${missing.join(', ')}`,
      );
    }
    if (!Number.isSafeInteger(this.leaseMs) || this.leaseMs < 1) {
      throw moduleOptionError(
        'PaymentsWebhookModule',
        'leaseMs',
        'isPositiveInteger',
        'leaseMs must be a positive integer (ms)',
      );
    }
    for (const [name, handlers] of decoratedMethods<string>(
      this.discovery,
      this.scanner,
      this.reflector,
      PAYMENT_EVENT_HANDLER,
    )) {
      this.handlers.set(name, handlers);
    }
  }

  /** A delivery's parsed body without any registration's credentials, before it is parsed. */
  redacted(body: unknown): unknown {
    return this.confirmation.redacted(body);
  }

  /**
   * Confirms `event` and runs its handlers unless it was processed already.
   *
   * A copy that arrives at this instance while the same event is being handled here shares its
   * confirmation's look-ups, then waits for it: if that delivery failed, the copy fails too
   * ({@link PaymentWebhookConcurrentFailureError}) rather than being acknowledged for work that
   * did not happen; if it was refused, the copy is judged on its own. A copy held by another instance fails with {@link PaymentWebhookBusyError}.
   * @throws PaymentWebhookContradictedError, PaymentWebhookConfirmationError,
   *   PaymentWebhookNotFinalError, PaymentWebhookCallInFlightError, PaymentWebhookConcurrentFailureError, PaymentWebhookBusyError, PaymentWebhookStoreError, or
   *   what a handler threw.
   */
  async dispatch(event: PaymentWebhookEvent): Promise<PaymentWebhookDispatch> {
    // Before the wait: concurrent copies share the look-ups of one confirmation (and a record
    // that is not final refuses them all at once), rather than each confirming after the other.
    const looked = await this.confirmation.confirm(event);
    const key = deliveryKey(event);
    for (let running = this.inFlight.get(key); running; running = this.inFlight.get(key)) {
      if ((await running) === 'failed') {
        throw new PaymentWebhookConcurrentFailureError(event.transactionReference);
      }
    }
    // No await between the check above and this claim: a concurrent copy sees the claim.
    const run = this.process(event, looked, key);
    const end = run.then(
      (): DeliveryEnd => 'processed',
      (error: unknown): DeliveryEnd =>
        error instanceof PaymentWebhookContradictedError ||
        error instanceof PaymentWebhookCallInFlightError
          ? 'refused'
          : 'failed',
    );
    // Released before the waiters resume, so that they see the next claim, not this one.
    this.inFlight.set(
      key,
      end.then((result) => {
        this.inFlight.delete(key);
        return result;
      }),
    );
    return run;
  }

  private async process(
    event: PaymentWebhookEvent,
    looked: PaymentWebhookEvent,
    key: string,
  ): Promise<PaymentWebhookDispatch> {
    // Before the claim: settling is idempotent, and a handler that fails leaves it settled.
    const settling = await this.confirmation.settleJournal(looked);
    const confirmed = settling.journaled
      ? withKey(looked, settling.journaled.idempotencyKey)
      : looked;
    const { secondExecutionOf } = settling;
    // Taken for a second execution of a journaled call on the word of its URL's key, which anyone
    // can write: its own claim, so that it never marks the transaction's own event as handled.
    const claimKey =
      secondExecutionOf === undefined
        ? key
        : `${key}:${PAYMENT_DUPLICATE_EVENT}:${confirmed.idempotencyKey ?? ''}`;
    const claim = await this.storeCall(event, 'claim', () =>
      this.store.claim(claimKey, this.leaseMs),
    );
    if (claim === 'done') return { duplicate: true, handled: 0 };
    // Anything but a claim (`busy`, or a store's unknown answer) runs nothing: deliver it later.
    if (claim !== 'claimed') throw new PaymentWebhookBusyError(event.transactionReference);
    let handled: number;
    try {
      const idempotencyKey = confirmed.idempotencyKey;
      if (idempotencyKey !== undefined) {
        if (secondExecutionOf !== undefined) {
          // The first execution may have been settled by a look-up, never by a webhook here.
          await this.storeCall(event, 'recordReference', () =>
            this.store.recordReference(idempotencyKey, secondExecutionOf),
          );
        }
        await this.detectDuplicateExecution(confirmed, idempotencyKey);
      }
      // A second execution is for the payment.duplicate alarm only: the ordinary handlers would
      // take it for the outcome of the call its key names (docs/journal.md).
      const handlers =
        secondExecutionOf !== undefined
          ? []
          : [
              ...(confirmed.name ? (this.handlers.get(confirmed.name) ?? []) : []),
              ...(this.handlers.get(ALL_PAYMENT_EVENTS) ?? []),
            ];
      for (const handler of handlers) await handler(confirmed as never);
      handled = handlers.length;
    } catch (error) {
      await this.release(event, claimKey);
      throw error;
    }
    await this.complete(event, claimKey);
    return { duplicate: false, handled };
  }

  /**
   * Journals the event's reference under its idempotency key; a second reference means the call
   * was executed twice. The alarm has its own claim, completed only after its handlers succeeded,
   * so that of several instances one raises it, and a failing alarm handler sees it again on the
   * re-delivery. An alarm another delivery holds is left to it: that delivery is not acknowledged
   * until the alarm was handled.
   */
  private async detectDuplicateExecution(
    event: PaymentWebhookEvent,
    idempotencyKey: string,
  ): Promise<void> {
    const recorded = await this.storeCall(event, 'recordReference', () =>
      this.store.recordReference(idempotencyKey, event.transactionReference),
    );
    const references = [...new Set(recorded)];
    if (references.length < 2) return;
    const alarmKey = `${PAYMENT_DUPLICATE_EVENT}:${idempotencyKey}:${[...references].sort().join(',')}`;
    const claim = await this.storeCall(event, 'claim', () =>
      this.store.claim(alarmKey, this.leaseMs),
    );
    if (claim !== 'claimed') return;
    this.logger.error(
      `The call with idempotency key ${forLog(idempotencyKey)} was executed more than once: ` +
        `references ${references.map((reference) => forLog(reference)).join(', ')}`,
    );
    const alarm: PaymentDuplicateEvent = {
      name: PAYMENT_DUPLICATE_EVENT,
      idempotencyKey,
      references,
      event,
    };
    try {
      for (const handler of this.handlers.get(PAYMENT_DUPLICATE_EVENT) ?? []) {
        await handler(alarm as never);
      }
    } catch (error) {
      await this.release(event, alarmKey);
      throw error;
    }
    await this.complete(event, alarmKey);
  }

  /** A store call whose failure becomes a {@link PaymentWebhookStoreError} (answered 503). */
  private async storeCall<T>(
    event: PaymentWebhookEvent,
    operation: string,
    call: () => T | Promise<T>,
  ): Promise<T> {
    try {
      return await call();
    } catch (error) {
      this.logger.warn(
        `The webhook store failed (${operation}) for ${forLog(event.transactionReference)}: ` +
          `${error instanceof Error ? error.message : 'error'}; the service should deliver it again`,
      );
      throw new PaymentWebhookStoreError(event.transactionReference, operation, error);
    }
  }

  /**
   * Gives the claim up after a handler failed. If the store fails too, the claim stays until its
   * lease ends: the re-deliveries meanwhile are `busy` (503), the first one after it runs.
   */
  private async release(event: PaymentWebhookEvent, key: string): Promise<void> {
    try {
      await this.store.release(key);
    } catch (error) {
      this.logger.warn(
        `Could not release the claim of ${forLog(key)} after a handler failed ` +
          `(${error instanceof Error ? error.message : 'error'}): it ends with its lease ` +
          `(${this.leaseMs} ms) for ${forLog(event.transactionReference)}`,
      );
    }
  }

  /**
   * Marks the event processed, retrying briefly when the store fails. The handlers already ran:
   * the delivery is acknowledged even if the mark could not be written, because a 503 would make
   * the service deliver it again and, once the lease ended, run the handlers a second time.
   */
  private async complete(event: PaymentWebhookEvent, key: string): Promise<void> {
    for (let attempt = 0; ; attempt += 1) {
      try {
        await this.store.complete(key);
        return;
      } catch (error) {
        if (attempt >= COMPLETE_RETRY_DELAYS_MS.length) {
          this.logger.error(
            `The handlers of ${forLog(key)} ran but the store could not mark it processed ` +
              `(${error instanceof Error ? error.message : 'error'}); a copy delivered after ` +
              `the lease (${this.leaseMs} ms) would run them again`,
          );
          return;
        }
      }
      await sleep(COMPLETE_RETRY_DELAYS_MS[attempt]);
    }
  }
}

/**
 * `event` with the idempotency key the journal vouches for: the matched entry's, or none. Another
 * key in the URL (anyone may write one) would tie the outcome of one call to another call's key,
 * in the handlers and in the duplicate-execution check.
 */
function withKey(
  event: PaymentWebhookEvent,
  idempotencyKey: string | undefined,
): PaymentWebhookEvent {
  if (event.idempotencyKey === idempotencyKey) return event;
  const { idempotencyKey: _unverified, ...rest } = event;
  return idempotencyKey === undefined ? rest : { ...rest, idempotencyKey };
}

// It reaches Nest's container (and the options as the app wrote them) through what it injects.
printsAsNameOnly(PaymentsWebhookDispatcher.prototype, 'PaymentsWebhookDispatcher');

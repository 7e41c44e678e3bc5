import { Inject, Injectable, Logger, OnModuleInit } from '@nestjs/common';
import { DiscoveryService, MetadataScanner, Reflector } from '@nestjs/core';
import {
  PAYMENT_DUPLICATE_EVENT,
  type PaymentDuplicateEvent,
  type PaymentWebhookEvent,
} from './payment-webhook-event';
import {
  ALL_PAYMENT_EVENTS,
  PAYMENT_EVENT_HANDLER,
  PAYMENTS_WEBHOOK_LOGGER_CONTEXT,
  PAYMENTS_WEBHOOK_STORE,
} from './payments-webhook.constants';
import { PaymentsWebhookConfirmation } from './payments-webhook.confirmation';
import {
  PaymentWebhookConcurrentFailureError,
  PaymentWebhookConfirmationError,
  PaymentWebhookContradictedError,
} from './payments-webhook.errors';
import { forLog } from './payments-webhook.logging';
import type { PaymentsWebhookStore } from './payments-webhook.store';

export { PAYMENTS_WEBHOOK_STORE } from './payments-webhook.constants';

type Handler = (event: never) => unknown;

/** What one delivery did. */
export interface PaymentWebhookDispatch {
  /** The event was processed before: no handler ran. */
  duplicate: boolean;
  /** Handlers that ran. */
  handled: number;
}

/**
 * How a delivery ended, as seen by a copy that waited for it: `processed` (the copy then finds it
 * in the store), `refused` (confirmation failed: the copy is judged on its own), `failed` (a handler
 * or the store failed: the copy must not be acknowledged either).
 */
type DeliveryEnd = 'processed' | 'refused' | 'failed';

/** Key of an event in the store: a reference has one outcome, delivered any number of times. */
function deliveryKey(event: PaymentWebhookEvent): string {
  return `${event.transactionReference}:${event.succeeded ? 'succeeded' : 'failed'}`;
}

/**
 * Runs the `@OnPaymentEvent()` handlers of the app for each confirmed event, once: confirmation
 * first, then deduplication (so a forged event can never mark the genuine one as seen), then the
 * duplicate-execution check, then the handlers.
 */
@Injectable()
export class PaymentsWebhookDispatcher implements OnModuleInit {
  private readonly logger = new Logger(PAYMENTS_WEBHOOK_LOGGER_CONTEXT);
  private readonly handlers = new Map<string, Handler[]>();
  /** Deliveries being handled now, by event key: a copy waits for the first instead of racing it. */
  private readonly inFlight = new Map<string, Promise<DeliveryEnd>>();

  constructor(
    private readonly discovery: DiscoveryService,
    private readonly scanner: MetadataScanner,
    private readonly reflector: Reflector,
    private readonly confirmation: PaymentsWebhookConfirmation,
    @Inject(PAYMENTS_WEBHOOK_STORE) private readonly store: PaymentsWebhookStore,
  ) {}

  onModuleInit(): void {
    // A store written for an older version would silently lose the duplicate-execution check.
    if (typeof (this.store as Partial<PaymentsWebhookStore>).recordReference !== 'function') {
      throw new Error(
        'The PaymentsWebhookModule store must implement recordReference(idempotencyKey, reference)',
      );
    }
    // An instance reached through several providers (useExisting aliases) registers once.
    const scanned = new Set<object>();
    for (const wrapper of this.discovery.getProviders()) {
      const instance: unknown = wrapper.instance;
      if (!wrapper.isDependencyTreeStatic() || typeof instance !== 'object' || instance === null) {
        continue;
      }
      if (scanned.has(instance)) continue;
      scanned.add(instance);
      const prototype = Object.getPrototypeOf(instance) as Record<string, unknown>;
      for (const method of this.scanner.getAllMethodNames(prototype)) {
        const target = prototype[method];
        if (typeof target !== 'function') continue;
        const events = this.reflector.get<string[] | undefined>(PAYMENT_EVENT_HANDLER, target);
        for (const event of events ?? []) {
          const list = this.handlers.get(event) ?? [];
          list.push((payload: never) => (target as Handler).call(instance, payload));
          this.handlers.set(event, list);
        }
      }
    }
  }

  /**
   * Confirms `event` and runs its handlers unless it was processed already.
   *
   * A copy that arrives while the same event is being handled waits for it: if that delivery
   * failed, the copy fails too ({@link PaymentWebhookConcurrentFailureError}) rather than being
   * acknowledged for work that did not happen; if it was refused, the copy is judged on its own.
   * @throws PaymentWebhookContradictedError, PaymentWebhookConfirmationError,
   *   PaymentWebhookConcurrentFailureError, or what a handler or the store threw.
   */
  async dispatch(event: PaymentWebhookEvent): Promise<PaymentWebhookDispatch> {
    const key = deliveryKey(event);
    for (let running = this.inFlight.get(key); running; running = this.inFlight.get(key)) {
      if ((await running) === 'failed') {
        throw new PaymentWebhookConcurrentFailureError(event.transactionReference);
      }
    }
    // No await between the check above and this claim: a concurrent copy sees the claim.
    const run = this.process(event, key);
    const end = run.then(
      (): DeliveryEnd => 'processed',
      (error: unknown): DeliveryEnd =>
        error instanceof PaymentWebhookContradictedError ||
        error instanceof PaymentWebhookConfirmationError
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

  private async process(event: PaymentWebhookEvent, key: string): Promise<PaymentWebhookDispatch> {
    const confirmed = await this.confirmation.confirm(event);
    if (await this.store.has(key)) return { duplicate: true, handled: 0 };
    if (confirmed.idempotencyKey !== undefined) {
      await this.detectDuplicateExecution(confirmed, confirmed.idempotencyKey);
    }
    const handlers = [
      ...(confirmed.name ? (this.handlers.get(confirmed.name) ?? []) : []),
      ...(this.handlers.get(ALL_PAYMENT_EVENTS) ?? []),
    ];
    for (const handler of handlers) await handler(confirmed as never);
    await this.store.add(key);
    return { duplicate: false, handled: handlers.length };
  }

  /**
   * Journals the event's reference under its idempotency key; a second reference means the call
   * was executed twice. The alarm is marked raised only after its handlers succeeded, so a failing
   * alarm handler sees it again on the re-delivery.
   */
  private async detectDuplicateExecution(
    event: PaymentWebhookEvent,
    idempotencyKey: string,
  ): Promise<void> {
    const references = [
      ...new Set(await this.store.recordReference(idempotencyKey, event.transactionReference)),
    ];
    if (references.length < 2) return;
    const alarmKey = `${PAYMENT_DUPLICATE_EVENT}:${idempotencyKey}:${[...references].sort().join(',')}`;
    if (await this.store.has(alarmKey)) return;
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
    for (const handler of this.handlers.get(PAYMENT_DUPLICATE_EVENT) ?? []) {
      await handler(alarm as never);
    }
    await this.store.add(alarmKey);
  }
}

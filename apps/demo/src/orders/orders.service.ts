import { randomUUID } from 'node:crypto';
import { Injectable, Logger, NotFoundException } from '@nestjs/common';
import {
  PaymentsCallOptions,
  PaymentsClient,
  PaymentsResponse,
  ServiceAPIError,
} from '@malipo/nestjs';
import { PaymentWebhookEvent } from '@malipo/nestjs/webhooks';
import { FINAL_STATUSES, Order, OrderStatus, PaymentOperationName } from './order';

type Start = (
  client: PaymentsClient,
  request: never,
  options: PaymentsCallOptions,
) => Promise<PaymentsResponse & { checkoutUrl?: string }>;

/**
 * Payouts retry only failures before the request was sent (`retryAmbiguous: false`): until the
 * service is known to honour `Idempotency-Key`, a retried timeout could pay twice. An ambiguous
 * payout fails with `mayHaveExecuted` and settles by its webhook (matched by `malipo_key`).
 */
const PAYOUT_CALL: PaymentsCallOptions = { retryAmbiguous: false };

/** Which client method starts each operation. */
const STARTERS: Record<PaymentOperationName, Start> = {
  'collections.mpesa': (c, r, o) => c.collections.mpesa(r, o),
  'collections.card': (c, r, o) => c.collections.card(r, o),
  'collections.panAfrican': (c, r, o) => c.collections.panAfrican(r, o),
  'payouts.mpesa': (c, r, o) => c.payouts.mpesa(r, { ...o, ...PAYOUT_CALL }),
  'payouts.panAfrican': (c, r, o) => c.payouts.panAfrican(r, { ...o, ...PAYOUT_CALL }),
  'payouts.merchant': (c, r, o) => c.payouts.merchant(r, { ...o, ...PAYOUT_CALL }),
};

/** Outcomes kept for references no order knows yet; bounded so that stray callbacks cannot grow memory. */
const MAX_EARLY_OUTCOMES = 1000;

/** The fields of the library's `payment.duplicate` alarm (`PaymentDuplicateEvent`) the demo reads. */
export interface DuplicateExecution {
  idempotencyKey: string;
  references: string[];
}

/** What a webhook outcome did to the order book. */
export type WebhookOutcome = 'applied' | 'already-settled' | 'unknown-reference';

/** An order's status once the service accepted its call: accepted, not paid. */
function acceptedStatus(operation: PaymentOperationName): OrderStatus {
  return operation.startsWith('payouts.') ? 'QUEUED' : 'PENDING';
}

/** In-memory order book (a real app would use its database). */
@Injectable()
export class OrdersService {
  private readonly logger = new Logger(OrdersService.name);
  private readonly orders = new Map<string, Order>();
  private readonly byReference = new Map<string, string>();
  /** A webhook without `malipo_key` can beat the answer that carries its reference. */
  private readonly earlyOutcomes = new Map<string, PaymentWebhookEvent>();

  constructor(private readonly payments: PaymentsClient) {}

  /**
   * Records an order and starts its payment. The order id is the call's idempotency key: a retried
   * call cannot pay twice, and the webhook (which carries the key as `malipo_key`) finds the order
   * even when the call's answer was lost.
   */
  async start(operation: PaymentOperationName, request: { amount: number }): Promise<Order> {
    const now = new Date().toISOString();
    const id = randomUUID();
    const order: Order = {
      id,
      operation,
      amount: request.amount,
      status: 'CREATED',
      idempotencyKey: id,
      events: [],
      createdAt: now,
      updatedAt: now,
    };
    this.orders.set(order.id, order);
    try {
      const response = await STARTERS[operation](this.payments, request as never, {
        idempotencyKey: order.idempotencyKey,
      });
      // `status: "SUCCESS"` in the answer means "accepted": only a webhook settles the order,
      // and it may already have (it can beat the answer).
      if (order.status === 'CREATED') order.status = acceptedStatus(operation);
      order.checkoutUrl = response.checkoutUrl;
      this.attachReference(order, response.transactionReference);
      const early = this.earlyOutcomes.get(response.transactionReference);
      if (early) {
        this.earlyOutcomes.delete(response.transactionReference);
        this.settle(order, early);
      }
    } catch (error) {
      if (!FINAL_STATUSES.includes(order.status)) order.status = 'ERROR';
      order.error = error instanceof Error ? error.name : 'Error';
      if (error instanceof ServiceAPIError && error.mayHaveExecuted) order.mayHaveExecuted = true;
      throw error;
    } finally {
      order.updatedAt = new Date().toISOString();
    }
    return order;
  }

  get(id: string): Order {
    const order = this.orders.get(id);
    if (!order) throw new NotFoundException(`Order ${id} not found`);
    return order;
  }

  list(): Order[] {
    return [...this.orders.values()];
  }

  /** Applies a confirmed webhook outcome once; repeated or late deliveries change nothing. */
  applyOutcome(event: PaymentWebhookEvent): WebhookOutcome {
    const order = this.orderOf(event);
    // A call of another part of the app (a payroll run): its key names no order, so the event is
    // not an order's that arrived early, and is not kept for one.
    if (!order && event.idempotencyKey !== undefined && !this.orders.has(event.idempotencyKey)) {
      return 'unknown-reference';
    }
    if (!order) {
      this.logger.warn(`Webhook for unknown reference ${event.transactionReference.slice(0, 64)}`);
      if (this.earlyOutcomes.size < MAX_EARLY_OUTCOMES) {
        this.earlyOutcomes.set(event.transactionReference, event);
      }
      return 'unknown-reference';
    }
    return this.settle(order, event);
  }

  /** Records the other executions of an order's call, for someone to reverse them. */
  flagDuplicate(alarm: DuplicateExecution): void {
    const order = this.orders.get(alarm.idempotencyKey);
    if (!order) return;
    order.duplicateReferences = alarm.references.filter(
      (reference) => reference !== order.transactionReference,
    );
    order.updatedAt = new Date().toISOString();
    this.logger.error(`Order ${order.id} was executed ${alarm.references.length} times`);
  }

  /**
   * The order of an event: by its idempotency key, else by its reference. The key travels in the
   * callback URL and the status look-up does not vouch for it, so it is trusted only when the
   * rest agrees: same kind of operation, and the same reference once the order knows one, else
   * the same amount.
   */
  private orderOf(event: PaymentWebhookEvent): Order | undefined {
    const keyed = event.idempotencyKey ? this.orders.get(event.idempotencyKey) : undefined;
    if (keyed && this.agrees(keyed, event)) {
      this.attachReference(keyed, event.transactionReference);
      return keyed;
    }
    const id = this.byReference.get(event.transactionReference);
    return id === undefined ? undefined : this.orders.get(id);
  }

  private agrees(order: Order, event: PaymentWebhookEvent): boolean {
    if (!order.operation.startsWith(`${event.kind}s.`)) return false;
    if (order.transactionReference !== undefined) {
      return order.transactionReference === event.transactionReference;
    }
    const amount = event.confirmation?.amount ?? event.amount;
    return amount === order.amount;
  }

  private attachReference(order: Order, reference: string): void {
    order.transactionReference ??= reference;
    this.byReference.set(reference, order.id);
  }

  private settle(order: Order, event: PaymentWebhookEvent): WebhookOutcome {
    if (FINAL_STATUSES.includes(order.status)) return 'already-settled';
    order.status = event.succeeded ? 'SUCCESS' : 'FAILED';
    order.events.push({
      event: event.name ?? event.kind,
      status: order.status,
      receivedAt: new Date().toISOString(),
    });
    order.updatedAt = new Date().toISOString();
    return 'applied';
  }
}

import { randomUUID } from 'node:crypto';
import { Injectable, Logger, NotFoundException } from '@nestjs/common';
import { PaymentsCallOptions, PaymentsClient, PaymentsResponse } from '@malipo/nestjs';
import { FINAL_STATUSES, Order, PaymentOperationName } from './order';

type Start = (
  client: PaymentsClient,
  request: never,
  options: PaymentsCallOptions,
) => Promise<PaymentsResponse & { checkoutUrl?: string }>;

/** Which client method starts each operation. */
const STARTERS: Record<PaymentOperationName, Start> = {
  'collections.mpesa': (c, r, o) => c.collections.mpesa(r, o),
  'collections.card': (c, r, o) => c.collections.card(r, o),
  'collections.panAfrican': (c, r, o) => c.collections.panAfrican(r, o),
  'payouts.mpesa': (c, r, o) => c.payouts.mpesa(r, o),
  'payouts.panAfrican': (c, r, o) => c.payouts.panAfrican(r, o),
  'payouts.merchant': (c, r, o) => c.payouts.merchant(r, o),
};

/** Outcomes kept for references no order knows yet; bounded so junk callbacks cannot grow memory. */
const MAX_EARLY_OUTCOMES = 1000;

interface Outcome {
  transactionReference: string;
  status: string;
  event: string;
}

/** What a webhook outcome did to the order book. */
export type WebhookOutcome = 'applied' | 'already-settled' | 'unknown-reference';

/** In-memory order book (a real app would use its database). */
@Injectable()
export class OrdersService {
  private readonly logger = new Logger(OrdersService.name);
  private readonly orders = new Map<string, Order>();
  private readonly byReference = new Map<string, string>();
  /** A webhook can beat the response that carries its reference (a lost response and a retry). */
  private readonly earlyOutcomes = new Map<string, Outcome>();

  constructor(private readonly payments: PaymentsClient) {}

  /**
   * Records an order and starts its payment. The order id is the idempotency key, so a retried
   * call can never pay twice.
   */
  async start(operation: PaymentOperationName, request: { amount: number }): Promise<Order> {
    const now = new Date().toISOString();
    const order: Order = {
      id: randomUUID(),
      operation,
      amount: request.amount,
      status: 'CREATED',
      events: [],
      createdAt: now,
      updatedAt: now,
    };
    this.orders.set(order.id, order);
    try {
      const response = await STARTERS[operation](this.payments, request as never, {
        idempotencyKey: order.id,
      });
      order.transactionReference = response.transactionReference;
      order.checkoutUrl = response.checkoutUrl;
      order.status = response.status;
      this.byReference.set(response.transactionReference, order.id);
      const early = this.earlyOutcomes.get(response.transactionReference);
      if (early) {
        this.earlyOutcomes.delete(response.transactionReference);
        this.settle(order, early);
      }
    } catch (error) {
      order.status = 'ERROR';
      order.error = error instanceof Error ? error.name : 'Error';
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

  /** Applies a webhook outcome once; repeated or late deliveries change nothing. */
  applyOutcome(outcome: Outcome): WebhookOutcome {
    const id = this.byReference.get(outcome.transactionReference);
    const order = id === undefined ? undefined : this.orders.get(id);
    if (!order) {
      this.logger.warn(
        `Webhook for unknown transaction reference ${outcome.transactionReference.slice(0, 64)}`,
      );
      if (this.earlyOutcomes.size < MAX_EARLY_OUTCOMES) {
        this.earlyOutcomes.set(outcome.transactionReference, outcome);
      }
      return 'unknown-reference';
    }
    return this.settle(order, outcome);
  }

  private settle(order: Order, outcome: Outcome): WebhookOutcome {
    if (FINAL_STATUSES.includes(order.status)) return 'already-settled';
    order.status = outcome.status;
    order.events.push({
      event: outcome.event,
      status: outcome.status,
      receivedAt: new Date().toISOString(),
    });
    order.updatedAt = new Date().toISOString();
    return 'applied';
  }
}

import { Injectable } from '@nestjs/common';
import { OnPaymentEvent, PaymentWebhookEvent } from '@malipo/nestjs/webhooks';
import { DuplicateExecution, OrdersService } from './orders.service';

/**
 * Settles orders from the service's outcome webhooks (mounted by PaymentsWebhookModule, which
 * confirms each event with the service's status look-up before it gets here).
 */
@Injectable()
export class OrderOutcomesHandler {
  constructor(private readonly orders: OrdersService) {}

  @OnPaymentEvent('collection.succeeded', 'collection.failed', 'payout.succeeded', 'payout.failed')
  settle(event: PaymentWebhookEvent): void {
    this.orders.applyOutcome(event);
  }

  /** One order's call was executed twice: flag the order for a refund or a reversal. */
  @OnPaymentEvent('payment.duplicate')
  flagDuplicate(alarm: DuplicateExecution): void {
    this.orders.flagDuplicate(alarm);
  }
}

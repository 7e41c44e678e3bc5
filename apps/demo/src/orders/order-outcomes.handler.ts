import { Injectable } from '@nestjs/common';
import { OnPaymentEvent, PaymentWebhookEvent } from '@malipo/nestjs';
import { OrdersService } from './orders.service';

/** Settles orders from the service's outcome webhooks (mounted by PaymentsWebhookModule). */
@Injectable()
export class OrderOutcomesHandler {
  constructor(private readonly orders: OrdersService) {}

  @OnPaymentEvent()
  settle(event: PaymentWebhookEvent): void {
    this.orders.applyOutcome(event);
  }
}

import { Injectable, Logger } from '@nestjs/common';
import { OnPaymentEvent } from '@malipo/nestjs/webhooks';
import type { PaymentWebhookEvent } from '@malipo/nestjs/webhooks';

export interface PaidCollection {
  reference: string;
  orderKey?: string;
  amount?: number;
}

/** Records the confirmed successful collections that the webhook module dispatches. */
@Injectable()
export class PaymentOutcomes {
  private readonly logger = new Logger(PaymentOutcomes.name);
  private readonly paid = new Map<string, PaidCollection>();

  @OnPaymentEvent('collection.succeeded')
  onCollectionSucceeded(event: PaymentWebhookEvent): void {
    this.paid.set(event.transactionReference, {
      reference: event.transactionReference,
      orderKey: event.idempotencyKey,
      amount: event.amount,
    });
    this.logger.log(`collection ${event.transactionReference} paid`);
  }

  find(reference: string): PaidCollection | undefined {
    return this.paid.get(reference);
  }
}

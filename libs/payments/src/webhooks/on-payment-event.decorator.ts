import { SetMetadata } from '@nestjs/common';
import type { PaymentWebhookEventName } from './payment-webhook-event';

export const PAYMENT_EVENT_HANDLER = 'malipo:payment-event-handler';

/**
 * Marks a provider method as a handler of webhook events: `@OnPaymentEvent('payout.failed')`,
 * several names, or none for every event. The method receives a `PaymentWebhookEvent`; if it
 * throws, the delivery answers 500 and is not marked processed, so the service re-delivers it.
 */
export const OnPaymentEvent = (...events: PaymentWebhookEventName[]) =>
  SetMetadata(PAYMENT_EVENT_HANDLER, events.length > 0 ? events : ['*']);

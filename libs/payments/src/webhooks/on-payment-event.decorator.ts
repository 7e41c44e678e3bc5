import { SetMetadata } from '@nestjs/common';
import { ALL_PAYMENT_EVENTS } from './payments-webhook.constants';
import { PAYMENT_EVENT_HANDLER } from '../payments.constants';
import type { PaymentEventName } from './payment-webhook-event';

/**
 * Marks a provider method as a handler of webhook events.
 *
 * - `@OnPaymentEvent('collection.succeeded')`, or several names: the method receives the
 *   confirmed {@link PaymentWebhookEvent} of those outcomes.
 * - `@OnPaymentEvent()`: every transaction event, top-ups and unknown kinds included.
 * - `@OnPaymentEvent('payment.duplicate')`: the method receives a {@link PaymentDuplicateEvent}
 *   when one call was executed twice. Only named handlers get it: it is an alarm, not an outcome.
 *
 * Handlers run one after another. If one throws, the delivery answers 500 and is not marked
 * processed, so the service re-delivers it and every handler runs again: make them idempotent.
 */
export const OnPaymentEvent = (...events: PaymentEventName[]) =>
  SetMetadata(PAYMENT_EVENT_HANDLER, events.length > 0 ? events : [ALL_PAYMENT_EVENTS]);

/**
 * `@malipo/nestjs/webhooks`: the webhook module and its event types. A subpath of its own so that
 * an app that only sends calls never loads `@nestjs/core`'s discovery or the webhook code.
 */
export { PaymentsWebhookModule } from './payments-webhook.module';
export type {
  PaymentsWebhookModuleAsyncOptions,
  PaymentsWebhookModuleForRootOptions,
  PaymentsWebhookOptionsFactory,
} from './payments-webhook.module-definition';
export { PAYMENTS_WEBHOOK_OPTIONS } from '../payments.constants';
export type {
  PaymentsWebhookLookupBudget,
  PaymentsWebhookModuleExtras,
  PaymentsWebhookModuleOptions,
  PaymentWebhookDelivery,
} from './payments-webhook.interfaces';
export { OnPaymentEvent } from './on-payment-event.decorator';
export {
  PAYMENT_DUPLICATE_EVENT,
  PAYMENT_WEBHOOK_EVENTS,
  parsePaymentWebhook,
  paymentWebhookKind,
  type PaymentDuplicateEvent,
  type PaymentEventName,
  type PaymentWebhookDeliveryContext,
  type PaymentWebhookEvent,
  type PaymentWebhookEventName,
  type PaymentWebhookKind,
  type PaymentWebhookPayload,
} from './payment-webhook-event';
export {
  InMemoryPaymentsWebhookStore,
  type PaymentsWebhookClaim,
  type PaymentsWebhookStore,
} from './payments-webhook.store';
export {
  PaymentsWebhookDispatcher,
  type PaymentWebhookDispatch,
} from './payments-webhook.dispatcher';
export type { PaymentWebhookReceipt } from './payments-webhook.controller';
export {
  verifyPaymentsSignature,
  type PaymentsSignatureOptions,
} from './payments-webhook.signature';
export {
  PaymentWebhookBudgetError,
  PaymentWebhookBusyError,
  PaymentWebhookCallInFlightError,
  PaymentWebhookConcurrentFailureError,
  PaymentWebhookConfirmationError,
  PaymentWebhookContradictedError,
  type PaymentWebhookContradiction,
  PaymentWebhookNotFinalError,
  PaymentWebhookStoreError,
} from './payments-webhook.errors';

export { PaymentsModule } from './payments.module';
export { PaymentsOperationName } from './operations';
export {
  PAYMENTS_OPTIONS,
  PaymentsModuleAsyncOptions,
  PaymentsModuleForRootOptions,
} from './payments.module-definition';
export { DEFAULT_BASE_URL, PAYMENTS_LOGGER_CONTEXT } from './payments.constants';
export {
  PaymentsCallOptions,
  PaymentsDefaults,
  PaymentsModuleOptions,
  WalletType,
} from './payments-options.interface';
export { CollectionsService } from './collections.service';
export { PayoutsService } from './payouts.service';
export { PaymentsClient } from './payments.client';
export { createPaymentsClient } from './create-payments-client';
export {
  CardCollectionRequest,
  MpesaCollectionRequest,
  PanAfricanCollectionRequest,
} from './dto/collection-requests';
export {
  MerchantPayoutRequest,
  MpesaPayoutRequest,
  PanAfricanPayoutRequest,
} from './dto/payout-requests';
export { AccountType } from './dto/rules';
export {
  BankAccount,
  CardCollectionResponse,
  CollectionResponse,
  MerchantPayoutResponse,
  MpesaCollectionResponse,
  MpesaPayoutResponse,
  PanAfricanCollectionResponse,
  PanAfricanPayoutResponse,
  PaymentsResponse,
  PayoutResponse,
} from './dto/responses';
export {
  AuthenticationError,
  PaymentsFieldError,
  PaymentsValidationError,
  ServiceAPIError,
  ServiceAPIErrorDetails,
} from './errors';
export {
  PaymentsWebhookModule,
  PaymentsWebhookModuleOptions,
} from './webhooks/payments-webhook.module';
export { OnPaymentEvent } from './webhooks/on-payment-event.decorator';
export {
  PAYMENT_WEBHOOK_EVENTS,
  parsePaymentWebhook,
  PaymentWebhookEvent,
  PaymentWebhookEventName,
} from './webhooks/payment-webhook-event';
export {
  InMemoryPaymentsWebhookStore,
  PaymentsWebhookStore,
} from './webhooks/payments-webhook.store';
export {
  PaymentsWebhookDispatcher,
  PaymentWebhookDispatch,
} from './webhooks/payments-webhook.dispatcher';
export {
  getCollectionsToken,
  getPaymentsClientToken,
  getPayoutsToken,
  InjectCollections,
  InjectPaymentsClient,
  InjectPayouts,
} from './payments.tokens';
export { PaymentsModuleExtras } from './payments.module-definition';

/** Token of the options as given to `forRoot`/`forRootAsync`. */
export const PAYMENTS_WEBHOOK_OPTIONS = 'MALIPO_PAYMENTS_WEBHOOK_OPTIONS';

/** Token of the {@link PaymentsWebhookStore} of a registration. */
export const PAYMENTS_WEBHOOK_STORE = Symbol('MALIPO_PAYMENTS_WEBHOOK_STORE');

/** Route of the webhook when `path` is not given: `POST /webhooks/payments`. */
export const DEFAULT_WEBHOOK_PATH = 'webhooks/payments';

/** Logger context of the webhook module's warnings and errors. */
export const PAYMENTS_WEBHOOK_LOGGER_CONTEXT = 'PaymentsWebhook';

/** Metadata key set by `@OnPaymentEvent()`. */
export const PAYMENT_EVENT_HANDLER = 'malipo:payment-event-handler';

/** Handler key of `@OnPaymentEvent()` without names: every transaction event. */
export const ALL_PAYMENT_EVENTS = '*';

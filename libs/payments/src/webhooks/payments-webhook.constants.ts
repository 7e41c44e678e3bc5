/** Token of the options as given to `forRoot`/`forRootAsync`. */
export const PAYMENTS_WEBHOOK_OPTIONS = 'MALIPO_PAYMENTS_WEBHOOK_OPTIONS';

/**
 * Token of the store of a registration, held with whether the registration made it (then it is
 * closed on shutdown). Not the store itself: Nest would run the hooks of a store the app owns.
 */
export const PAYMENTS_WEBHOOK_STORE = Symbol('MALIPO_PAYMENTS_WEBHOOK_STORE');

/** Token saying where the options of a registration come from: `forRoot` or `forRootAsync`. */
export const PAYMENTS_WEBHOOK_OPTIONS_SOURCE = Symbol('MALIPO_PAYMENTS_WEBHOOK_OPTIONS_SOURCE');

/**
 * How long a delivery holds its claim on an event when `leaseMs` is not given: 30 s, above any
 * sane handler; an instance that crashes mid-handler delays its event by at most this.
 */
export const DEFAULT_WEBHOOK_LEASE_MS = 30_000;

/** Route of the webhook when `path` is not given: `POST /webhooks/payments`. */
export const DEFAULT_WEBHOOK_PATH = 'webhooks/payments';

/** Logger context of the webhook module's warnings and errors. */
export const PAYMENTS_WEBHOOK_LOGGER_CONTEXT = 'PaymentsWebhook';

/** Metadata key set by `@OnPaymentEvent()`. */
export const PAYMENT_EVENT_HANDLER = 'malipo:payment-event-handler';

/** Handler key of `@OnPaymentEvent()` without names: every transaction event. */
export const ALL_PAYMENT_EVENTS = '*';

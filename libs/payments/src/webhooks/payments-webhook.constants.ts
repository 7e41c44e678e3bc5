/** Defaults of the webhook module. Its tokens are in ../payments.constants.ts with the others. */

/**
 * How long a delivery holds its claim on an event when `leaseMs` is not given: 30 s, above any
 * sane handler; an instance that crashes mid-handler delays its event by at most this.
 */
export const DEFAULT_WEBHOOK_LEASE_MS = 30_000;

/** Route of the webhook when `path` is not given: `POST /webhooks/payments`. */
export const DEFAULT_WEBHOOK_PATH = 'webhooks/payments';

/** Logger context of the webhook module's warnings and errors. */
export const PAYMENTS_WEBHOOK_LOGGER_CONTEXT = 'PaymentsWebhook';

/** Handler key of `@OnPaymentEvent()` without names: every transaction event. */
export const ALL_PAYMENT_EVENTS = '*';

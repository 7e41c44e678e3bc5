/**
 * Every injection token and metadata key of the library, in one style: a string under the
 * `MalipoPayments:` prefix, so tokens read the same in Nest's errors and survive two copies of
 * the package. See docs/architecture.md.
 */

/**
 * Production base URL of the Payments Service: the interface document leaves it to the service
 * (`{base_url}`), whose own client defaults to this (docs/wire-contract.md). Set `baseUrl` for
 * any other environment.
 */
export const DEFAULT_BASE_URL = 'https://api.payd.money';

/** Logger context of every line this library writes. */
export const PAYMENTS_LOGGER_CONTEXT = 'MalipoPayments';

/** Options as given to `forRoot`/`forRootAsync`, before validation (internal: holds the password). */
export const PAYMENTS_MODULE_OPTIONS = 'MalipoPayments:moduleOptions';

/** Options validated, with defaults applied (internal). */
export const PAYMENTS_RESOLVED_OPTIONS = 'MalipoPayments:resolvedOptions';

/** The registration's private `HttpService`, whose axios instance carries the retries (internal). */
export const PAYMENTS_HTTP_SERVICE = 'MalipoPayments:httpService';

/** Name of a `PaymentsModule` registration (`default` when unnamed), written on journal entries. */
export const PAYMENTS_REGISTRATION_NAME = 'MalipoPayments:registrationName';

/** Account name of the unnamed registration and of `createPaymentsClient`. */
export const DEFAULT_REGISTRATION_NAME = 'default';

/** Token of the service `service` of the registration `name`: `MalipoPayments:<name>:<service>`. */
export function namedServiceToken(name: string, service: string): string {
  return `MalipoPayments:${name}:${service}`;
}

/** Webhook options as given to `PaymentsWebhookModule.forRoot`/`forRootAsync`. */
export const PAYMENTS_WEBHOOK_OPTIONS = 'MalipoPayments:webhookOptions';

/**
 * The store of a webhook registration, held with whether the registration made it (then it is
 * closed on shutdown). Not the store itself: Nest would run the hooks of a store the app owns.
 */
export const PAYMENTS_WEBHOOK_STORE = 'MalipoPayments:webhookStore';

/** Where the webhook options come from: `forRoot` or `forRootAsync`. */
export const PAYMENTS_WEBHOOK_OPTIONS_SOURCE = 'MalipoPayments:webhookOptionsSource';
/** Token of the route a `PaymentsWebhookModule` registration serves. @internal */
export const PAYMENTS_WEBHOOK_ROUTE = 'MalipoPayments:webhookRoute';

/** Metadata key set by `@OnPaymentEvent()`. */
export const PAYMENT_EVENT_HANDLER = 'MalipoPayments:paymentEventHandler';

/** Payout-run options as given to `PayoutRunsModule.forRoot`/`forRootAsync`. */
export const PAYOUT_RUNS_OPTIONS = 'MalipoPayments:payoutRunsOptions';

/** Metadata key set by `@OnPayoutRunEvent()`. */
export const PAYOUT_RUN_EVENT_HANDLER = 'MalipoPayments:payoutRunEventHandler';

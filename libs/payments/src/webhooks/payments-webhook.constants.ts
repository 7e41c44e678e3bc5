/** Defaults of the webhook module. Its tokens are in ../payments.constants.ts with the others. */

/**
 * How long a delivery holds its claim on an event when `leaseMs` is not given: 30 s, above any
 * sane handler; an instance that crashes mid-handler delays its event by at most this.
 */
export const DEFAULT_WEBHOOK_LEASE_MS = 30_000;

/**
 * Waits (ms) before each re-check of a record that is not final yet, when `pendingRecheckDelaysMs`
 * is not given: four re-checks over 3 s with backoff, so a callback posted just before the service
 * settled its record is confirmed within the same delivery, and one that stays pending is answered
 * 503 well before a sender would give up on the request.
 */
export const DEFAULT_PENDING_RECHECK_DELAYS_MS: readonly number[] = [250, 500, 1000, 1250];

/**
 * How long a delivery that names by key alone a journaled call being sent waits for that call's
 * answer, when `inFlightHoldMs` is not given: a callback the service posts before its answer to
 * the call reaches the app is then handled in the same delivery, within a sender's patience.
 */
export const DEFAULT_IN_FLIGHT_HOLD_MS = 3_000;

/** How often a held delivery reads the journal entry of the call being sent. */
export const IN_FLIGHT_POLL_MS = 100;

/**
 * The least time a read of the journal gets during a hold, also when it starts as the hold runs
 * out: the call's answer may be in it. A store that answers slower ends the hold (503).
 */
export const IN_FLIGHT_READ_MS = 500;

/**
 * Deliveries held at once for one call being sent; more are answered 503 at once. The service
 * delivers an event once, and again on failure: a flood that names a leaked key holds no more
 * sockets than that, however many deliveries it sends.
 */
export const MAX_HELD_DELIVERIES_PER_CALL = 5;

/** Route of the webhook when `path` is not given: `POST /webhooks/payments`. */
export const DEFAULT_WEBHOOK_PATH = 'webhooks/payments';

/** Header of the signature `verifyPaymentsSignature` checks when `header` is not given. */
export const DEFAULT_SIGNATURE_HEADER = 'x-payd-connect-signature';

/** Logger context of the webhook module's warnings and errors. */
export const PAYMENTS_WEBHOOK_LOGGER_CONTEXT = 'PaymentsWebhook';

/** Handler key of `@OnPaymentEvent()` without names: every transaction event. */
export const ALL_PAYMENT_EVENTS = '*';

/**
 * Status look-ups the webhook module may spend when `lookupBudget` is not given: 10 a second with
 * bursts of 50, which a real account can afford beside its payouts. A flood of forged deliveries
 * then costs at most this at the service, whatever its size (docs/errors.md).
 */
export const DEFAULT_LOOKUP_BUDGET = { perSecond: 10, burst: 50 } as const;

/**
 * Look-ups for events that match no journal entry (calls made by another system on the account)
 * when `foreignLookupBudget` is not given: small, so that they never starve the app's own events.
 */
export const DEFAULT_FOREIGN_LOOKUP_BUDGET = { perSecond: 1, burst: 5 } as const;

/**
 * How long a reference the service said it does not know is answered 409 without a look-up, when
 * `unknownReferenceTtlMs` is not given: long enough to absorb a flood's repeats, short enough that
 * a genuine event delivered too early is looked up again on its next delivery.
 */
export const DEFAULT_UNKNOWN_REFERENCE_TTL_MS = 30_000;

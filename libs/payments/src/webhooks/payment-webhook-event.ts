import type { TransactionStatus } from '../dto/lookups';
import { PaymentsValidationError } from '../errors';
import { CORRELATION_QUERY_KEY } from '../wire';
import {
  MAX_WEBHOOK_IDEMPOTENCY_KEY_LENGTH,
  MAX_WEBHOOK_REFERENCE_LENGTH,
  WEBHOOK_REFERENCE_SUFFIXES,
  WEBHOOK_SUCCESS_RESULT_CODE,
  WEBHOOK_WIRE_FIELDS,
} from './payment-webhook.wire';

/** The names `@OnPaymentEvent(...)` takes for the outcome of a transaction. */
export const PAYMENT_WEBHOOK_EVENTS = [
  'collection.succeeded',
  'collection.failed',
  'payout.succeeded',
  'payout.failed',
  'transfer.succeeded',
  'transfer.failed',
] as const;

/** Name of a transaction outcome event: `collection.succeeded`, `payout.failed`... */
export type PaymentWebhookEventName = (typeof PAYMENT_WEBHOOK_EVENTS)[number];

/**
 * Name of the alarm raised when webhooks of two different references carry one idempotency key:
 * the call that key belongs to was executed twice (see {@link PaymentDuplicateEvent}).
 */
export const PAYMENT_DUPLICATE_EVENT = 'payment.duplicate';

/** Every name `@OnPaymentEvent(...)` accepts. */
export type PaymentEventName = PaymentWebhookEventName | typeof PAYMENT_DUPLICATE_EVENT;

/**
 * Kind of transaction, from the suffix of its reference: `eR` collection (receipt), `eW` payout
 * (withdrawal), `eS` transfer, `eT` top-up; `unknown` for any other reference.
 */
export type PaymentWebhookKind = 'collection' | 'payout' | 'transfer' | 'topup' | 'unknown';

/**
 * The keys of the service's webhook body, camelCase (table: `WEBHOOK_WIRE_FIELDS`). Any key may
 * be missing; a key whose value has an unexpected JSON type is left out here and kept in `_raw`.
 */
export interface PaymentWebhookPayload {
  /** `transaction_reference`: the reference of the operation's answer, e.g. `9BD103739849eR`. */
  transactionReference: string;
  /** `result_code`: 0 on success; e.g. 1 "Request Cancelled by user", 3000 a pan-African failure. */
  resultCode?: number;
  /** `remarks`: the service's words on the outcome. */
  remarks?: string;
  /** `third_party_trans_id`: the provider's id, e.g. the M-Pesa receipt number. */
  thirdPartyTransId?: string;
  /** `amount` of the transaction. */
  amount?: number;
  /** `transaction_date`: free text (`2026-02-09 10:37:50.28 +0000 UTC`, once just `November`). */
  transactionDate?: string;
  /** `forward_url`: the callback URL of the call. */
  forwardUrl?: string;
  /** `order_id`, often empty. */
  orderId?: string;
  /** `user_id` of the account at the service. */
  userId?: string;
  /** `customer_name`, often empty; for pan-African payouts the receiver's phone. */
  customerName?: string;
  /** `success` flag of the service. */
  success?: boolean;
  /** `status`: `""`, `"failed"` or absent. Not the outcome: see `succeeded`. */
  status?: string;
  /** `phone_number` of the payer or receiver (personal data: keep it out of logs). */
  phoneNumber?: string;
  /** `web3_transaction_reference`, usually empty. */
  web3TransactionReference?: string;
}

/**
 * One webhook delivery: the payload's fields, what the library derived from them, and the body as
 * received in `_raw` (every key kept, unknown ones included).
 */
export interface PaymentWebhookEvent extends PaymentWebhookPayload {
  /** `result_code === 0 && success === true`. Anything else is a failure. */
  succeeded: boolean;
  /** Kind of transaction, from the reference suffix. */
  kind: PaymentWebhookKind;
  /** `<kind>.succeeded` or `<kind>.failed`; absent for `topup` and `unknown` kinds. */
  name?: PaymentWebhookEventName;
  /**
   * Idempotency key of the call that started the transaction: the `malipo_key` query parameter of
   * the delivery's URL, else of `forwardUrl` (the library appends it to every `callback_url`).
   * It matches an outcome to its call even when the call's answer was lost. It travels in the URL
   * and the status look-up does not vouch for it: without the journal, a forger who paid one order
   * can post its genuine reference under another order's key, of the same amount or not; match on
   * the reference the call returned once known. With the payments journal and confirmed events (the default),
   * handlers get the key of the journal entry the event matched (by this key or by its reference),
   * or none when it matched no entry.
   */
  idempotencyKey?: string;
  /**
   * The service's record of the transaction (`transactions.status`) that confirmed this event.
   * Set on every event a handler receives, unless the module's `confirm` option is off.
   */
  confirmation?: TransactionStatus;
  /** The body as received. */
  _raw: Record<string, unknown>;
}

/**
 * Raised (as `@OnPaymentEvent('payment.duplicate')`) when confirmed webhooks of two different
 * references carry the same idempotency key: the one call was executed twice, for example a payout
 * whose answer was lost and that was then repeated by a service that ignores `Idempotency-Key`.
 */
export interface PaymentDuplicateEvent {
  name: typeof PAYMENT_DUPLICATE_EVENT;
  /** The idempotency key of the call. */
  idempotencyKey: string;
  /** Every reference seen with that key, oldest first (two or more). */
  references: string[];
  /** The confirmed event that revealed the duplicate. */
  event: PaymentWebhookEvent;
}

/** What of the delivery besides its body the parser reads. */
export interface PaymentWebhookDeliveryContext {
  /** The request URL (path and query, or absolute), read for `malipo_key`. */
  url?: string;
}

function isJsonObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Kind of the transaction `reference` names, from its suffix. */
export function paymentWebhookKind(reference: string): PaymentWebhookKind {
  for (const [suffix, kind] of WEBHOOK_REFERENCE_SUFFIXES) {
    if (reference.endsWith(suffix)) return kind;
  }
  return 'unknown';
}

/** The `malipo_key` of `url`, when it has a usable one. */
function correlationKey(url: string | undefined): string | undefined {
  if (!url) return undefined;
  let parsed: URL;
  try {
    // The delivery's URL is relative (`/webhooks/payments?malipo_key=...`): any base will do.
    parsed = new URL(url, 'http://webhook.invalid');
  } catch {
    return undefined;
  }
  const key = parsed.searchParams.get(CORRELATION_QUERY_KEY);
  return key && key.length <= MAX_WEBHOOK_IDEMPOTENCY_KEY_LENGTH ? key : undefined;
}

/**
 * Parses a webhook body into a {@link PaymentWebhookEvent}. Lenient by design: the service decides
 * what it sends, so only a body that is not a JSON object, or lacks a usable
 * `transaction_reference`, is refused; fields of an unexpected type are left out (kept in `_raw`).
 * @param context the delivery's URL, read for the `malipo_key` idempotency key.
 * @throws PaymentsValidationError for a body that is not an object or has no usable reference.
 */
export function parsePaymentWebhook(
  body: unknown,
  context: PaymentWebhookDeliveryContext = {},
): PaymentWebhookEvent {
  const target = 'PaymentWebhookEvent';
  if (!isJsonObject(body)) {
    throw new PaymentsValidationError(target, [
      { field: 'body', rule: 'isObject', message: 'the webhook body must be a JSON object' },
    ]);
  }
  const referenceKey = WEBHOOK_WIRE_FIELDS.transactionReference.key;
  const reference = Object.hasOwn(body, referenceKey) ? body[referenceKey] : undefined;
  if (
    typeof reference !== 'string' ||
    reference === '' ||
    reference.length > MAX_WEBHOOK_REFERENCE_LENGTH
  ) {
    throw new PaymentsValidationError(target, [
      {
        field: referenceKey,
        rule: 'isNotEmpty',
        message: `${referenceKey} must be a string of 1 to ${MAX_WEBHOOK_REFERENCE_LENGTH} characters`,
      },
    ]);
  }

  const payload: Record<string, unknown> = {};
  for (const [field, { key, type }] of Object.entries(WEBHOOK_WIRE_FIELDS)) {
    // Own keys only: a body key such as `__proto__` must not reach the prototype chain.
    if (Object.hasOwn(body, key) && typeof body[key] === type) payload[field] = body[key];
  }
  const fields = payload as unknown as PaymentWebhookPayload;
  const succeeded = fields.resultCode === WEBHOOK_SUCCESS_RESULT_CODE && fields.success === true;
  const kind = paymentWebhookKind(reference);
  const event: PaymentWebhookEvent = { ...fields, succeeded, kind, _raw: body };
  if (kind !== 'topup' && kind !== 'unknown') {
    event.name = `${kind}.${succeeded ? 'succeeded' : 'failed'}`;
  }
  const idempotencyKey = correlationKey(context.url) ?? correlationKey(fields.forwardUrl);
  if (idempotencyKey !== undefined) event.idempotencyKey = idempotencyKey;
  return event;
}

import type { PaymentWebhookKind, PaymentWebhookPayload } from './payment-webhook-event';

/**
 * The webhook (callback) payload of docs/wire-contract.md, "Webhook (callback) payload": every
 * event field with its JSON key and JSON type, in one table. The other wire tables are in
 * `../wire.ts`; this one stays with the webhook subpath, so an app that only sends calls never
 * loads it. The sandbox's webhook spec checks the payloads it sends against it.
 *
 * A value of another type than the table's is left out of the typed event (it stays in `_raw`):
 * the service's payload is loosely typed, and a field we cannot trust must not steer a handler.
 */
export const WEBHOOK_WIRE_FIELDS = {
  transactionReference: { key: 'transaction_reference', type: 'string' },
  resultCode: { key: 'result_code', type: 'number' },
  remarks: { key: 'remarks', type: 'string' },
  thirdPartyTransId: { key: 'third_party_trans_id', type: 'string' },
  amount: { key: 'amount', type: 'number' },
  transactionDate: { key: 'transaction_date', type: 'string' },
  forwardUrl: { key: 'forward_url', type: 'string' },
  orderId: { key: 'order_id', type: 'string' },
  userId: { key: 'user_id', type: 'string' },
  customerName: { key: 'customer_name', type: 'string' },
  success: { key: 'success', type: 'boolean' },
  status: { key: 'status', type: 'string' },
  phoneNumber: { key: 'phone_number', type: 'string' },
  web3TransactionReference: { key: 'web3_transaction_reference', type: 'string' },
} as const satisfies { readonly [F in keyof PaymentWebhookPayload]-?: WireField<F> };

/** One row of {@link WEBHOOK_WIRE_FIELDS}: the JSON key and the JSON type of the field `F`. */
type WireField<F extends keyof PaymentWebhookPayload> = {
  readonly key: string;
  readonly type: JsonTypeOf<NonNullable<PaymentWebhookPayload[F]>>;
};
type JsonTypeOf<T> = T extends string
  ? 'string'
  : T extends number
    ? 'number'
    : T extends boolean
      ? 'boolean'
      : never;

/** `result_code` of a successful transaction. */
export const WEBHOOK_SUCCESS_RESULT_CODE = 0;

/** Reference suffixes of the service (`9BD103739849eR`) and the kind of transaction each names. */
export const WEBHOOK_REFERENCE_SUFFIXES: readonly (readonly [string, PaymentWebhookKind])[] = [
  ['eR', 'collection'],
  ['eW', 'payout'],
  ['eS', 'transfer'],
  ['eT', 'topup'],
];

/** Longest `transaction_reference` accepted (real ones have 14 characters). */
export const MAX_WEBHOOK_REFERENCE_LENGTH = 128;

/** Longest `malipo_key` taken as an idempotency key (the library's own keys are UUIDs). */
export const MAX_WEBHOOK_IDEMPOTENCY_KEY_LENGTH = 255;

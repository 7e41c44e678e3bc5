/**
 * The wire format of `shared/wire-contract.md`: every client field and its JSON key, in one place.
 * `username`, `channel`, `amount`, `success` and `transaction_reference` are the document's; the
 * rest are this project's choice, so a correction from the real service is a one-line change here.
 */
export const REQUEST_WIRE_KEYS = {
  username: 'username',
  amount: 'amount',
  phoneNumber: 'phone_number',
  narration: 'narration',
  callbackUrl: 'callback_url',
  accountName: 'account_name',
  accountNumber: 'account_number',
  accountHolderName: 'account_holder_name',
  networkCode: 'network_code',
  channelId: 'channel_id',
  currency: 'currency',
  transactionChannel: 'transaction_channel',
  redirectUrl: 'redirect_url',
  providerName: 'provider_name',
  providerCode: 'provider_code',
  businessAccount: 'business_account',
  businessNumber: 'business_number',
  walletType: 'wallet_type',
} as const;

/** Body key that tells apart the operations sharing `/api/v2/payments`. */
export const CHANNEL_WIRE_KEY = 'channel';

export const RESPONSE_WIRE_KEYS = {
  success: 'success',
  message: 'message',
  status: 'status',
  transactionReference: 'transaction_reference',
  trackingId: 'tracking_id',
  reference: 'reference',
  result: 'result',
  paymentMethod: 'payment_method',
  checkoutUrl: 'checkout_url',
  bankAccount: 'bank_account',
  channel: 'channel',
  amount: 'amount',
} as const;

/** JSON type of each response field; a present field of another type is an invalid response. */
export const RESPONSE_FIELD_TYPES: Partial<
  Record<keyof typeof RESPONSE_WIRE_KEYS, 'string' | 'boolean' | 'number'>
> = {
  success: 'boolean',
  message: 'string',
  status: 'string',
  transactionReference: 'string',
  trackingId: 'string',
  reference: 'string',
  paymentMethod: 'string',
  checkoutUrl: 'string',
  channel: 'string',
  amount: 'number',
};

export const BANK_ACCOUNT_WIRE_KEYS = {
  name: 'name',
  branchCode: 'branch_code',
  accountNumber: 'account_number',
  accountName: 'account_name',
  accountReference: 'account_reference',
} as const;

/** The webhook payload of the contract (`event` names what happened). */
export const WEBHOOK_WIRE_KEYS = {
  event: 'event',
  transactionReference: 'transaction_reference',
  status: 'status',
  success: 'success',
  amount: 'amount',
  currency: 'currency',
  message: 'message',
  channel: 'channel',
  occurredAt: 'occurred_at',
} as const;

export type RequestField = keyof typeof REQUEST_WIRE_KEYS;
export type ResponseField = keyof typeof RESPONSE_WIRE_KEYS;
export type JsonObject = Record<string, unknown>;

/** The JSON body of a validated request: fields in table order, absent ones left out. */
export function toWireBody(
  request: object,
  fields: readonly RequestField[],
  channel: string | undefined,
): JsonObject {
  const source = request as Partial<Record<RequestField, unknown>>;
  const body: JsonObject = {};
  for (const field of fields) {
    const value = source[field];
    if (value !== undefined && value !== null) body[REQUEST_WIRE_KEYS[field]] = value;
  }
  if (channel !== undefined) body[CHANNEL_WIRE_KEY] = channel;
  return body;
}

/** Reads a field from its snake_case key, falling back to the camelCase key. */
function readKey(body: JsonObject, wireKey: string, field: string): unknown {
  if (Object.hasOwn(body, wireKey)) return body[wireKey];
  if (Object.hasOwn(body, field)) return body[field];
  return undefined;
}

export function isJsonObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function fromWireBankAccount(value: unknown): unknown {
  if (!isJsonObject(value)) return value;
  const account: JsonObject = {};
  for (const [field, wireKey] of Object.entries(BANK_ACCOUNT_WIRE_KEYS)) {
    const fieldValue = readKey(value, wireKey, field);
    if (fieldValue !== undefined) account[field] = fieldValue;
  }
  return account;
}

/** The camelCase fields of a webhook body that are present (snake_case key first). */
export function fromWebhookBody(body: JsonObject): JsonObject {
  const event: JsonObject = {};
  for (const [field, wireKey] of Object.entries(WEBHOOK_WIRE_KEYS)) {
    const value = readKey(body, wireKey, field);
    if (value !== undefined) event[field] = value;
  }
  return event;
}

/** The camelCase response record of the given fields, with `_raw` holding the body unmodified. */
export function fromWireBody(body: JsonObject, fields: readonly ResponseField[]): JsonObject {
  const record: JsonObject = {};
  for (const field of fields) {
    const value = readKey(body, RESPONSE_WIRE_KEYS[field], field);
    if (value === undefined) continue;
    record[field] = field === 'bankAccount' ? fromWireBankAccount(value) : value;
  }
  record._raw = body;
  return record;
}

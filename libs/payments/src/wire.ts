/**
 * The wire format of docs/wire-contract.md in one place: request keys and their encodings, the
 * keys each response field is read from, and the type checks of every answer. Operations
 * (operations.ts) differ only by the rows they pick from these tables.
 */

import { generateFunction, literal, property, stepPerTable } from './generated-function';
import { isPathSegment } from './path-segment';
import { asDecimal } from './money';

/** Client request field → JSON key of the request body or query. */
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
  receiverUsername: 'receiver_username',
  transactionType: 'transaction_type',
  dialCode: 'dial_code',
  reference: 'reference',
} as const;

export type RequestField = keyof typeof REQUEST_WIRE_KEYS;
export type JsonObject = Record<string, unknown>;

/** Query parameter that carries a call's idempotency key on its `callback_url` (correlation). */
export const CORRELATION_QUERY_KEY = 'malipo_key';

/**
 * How a field's value is written on the wire:
 * - `kenyanLocalPhone`: `+254XXXXXXXXX` as `0XXXXXXXXX` (the service refuses other forms);
 * - `usdWalletOnly`: sent only when `"USD"`, absence meaning the local wallet;
 * - `correlatedUrl`: the URL with the call's idempotency key as `malipo_key`, when enabled.
 */
export type WireFormat = 'kenyanLocalPhone' | 'usdWalletOnly' | 'correlatedUrl';

/** One key of a request body: a field, a field in a wire format, a constant, or a copy of a field. */
export type BodyEntry =
  | RequestField
  | { readonly field: RequestField; readonly format: WireFormat }
  /** An amount, sent as the decimal of `decimals` places it was validated as (`asDecimal`). */
  | { readonly field: RequestField; readonly decimals: number }
  | { readonly key: string; readonly value: string }
  | { readonly key: string; readonly copyOf: RequestField };

/** What encoding needs to know about the call besides its request. */
export interface EncodingContext {
  readonly idempotencyKey: string;
  /** Append `malipo_key` to `callback_url` (option `correlateCallbacks`). */
  readonly correlate: boolean;
}

/** The request of an operation as it goes on the wire. */
export interface EncodedRequest {
  readonly method: 'GET' | 'POST';
  /** Path with URL-encoded parameters and query, relative to `baseUrl`. */
  readonly url: string;
  readonly body?: JsonObject;
}

function isPresent(value: unknown): boolean {
  return value !== undefined && value !== null;
}

/** `value` with the call's idempotency key appended as `malipo_key`, keeping the URL's own query. */
export function correlatedUrl(value: string, idempotencyKey: string): string {
  // The common case, appended as text: the caller's URL stays byte for byte as given.
  if (!value.includes('#') && !carriesCorrelationKey(value)) {
    const separator = value.includes('?') ? '&' : '?';
    return `${value}${separator}${CORRELATION_QUERY_KEY}=${encodeURIComponent(idempotencyKey)}`;
  }
  const url = new URL(value);
  url.searchParams.set(CORRELATION_QUERY_KEY, idempotencyKey);
  return url.toString();
}

/**
 * Whether the URL's query already names `malipo_key`, written as is or percent-encoded
 * (`malipo%5Fkey`): a receiver decodes both to the same name and would read the first.
 */
function carriesCorrelationKey(value: string): boolean {
  if (!value.includes(CORRELATION_QUERY_KEY) && !value.includes('%')) return false;
  // A URL `URL` cannot parse never passed validation (`IsHttpUrl`); as text it is appended to.
  return URL.canParse(value) && new URL(value).searchParams.has(CORRELATION_QUERY_KEY);
}

function formatValue(format: WireFormat, value: unknown, context: EncodingContext): unknown {
  switch (format) {
    case 'kenyanLocalPhone':
      return typeof value === 'string' && value.startsWith('+254') ? `0${value.slice(4)}` : value;
    case 'usdWalletOnly':
      return value === 'USD' ? value : undefined;
    case 'correlatedUrl':
      return context.correlate && typeof value === 'string'
        ? correlatedUrl(value, context.idempotencyKey)
        : value;
  }
}

type BodyEncoder = (request: object, context: EncodingContext) => JsonObject;

/** The JSON body of a validated request, keys in table order, absent optional fields left out. */
export function encodeBodyByTable(
  request: object,
  entries: readonly BodyEntry[],
  context: EncodingContext,
): JsonObject {
  const source = request as Partial<Record<RequestField, unknown>>;
  const body: JsonObject = {};
  for (const entry of entries) {
    if (typeof entry === 'string') {
      if (isPresent(source[entry])) body[REQUEST_WIRE_KEYS[entry]] = source[entry];
    } else if ('format' in entry) {
      const value = formatValue(entry.format, source[entry.field], context);
      if (isPresent(value)) body[REQUEST_WIRE_KEYS[entry.field]] = value;
    } else if ('decimals' in entry) {
      const value = source[entry.field];
      if (isPresent(value)) {
        body[REQUEST_WIRE_KEYS[entry.field]] =
          typeof value === 'number' ? asDecimal(value, entry.decimals) : value;
      }
    } else if ('value' in entry) {
      body[entry.key] = entry.value;
    } else if (isPresent(source[entry.copyOf])) {
      body[entry.key] = source[entry.copyOf];
    }
  }
  return body;
}

/**
 * `encodeBodyByTable` for one table, written out entry by entry with literal keys
 * (generated-function.ts); `undefined` where code generation is disallowed.
 */
function generatedBodyEncoder(entries: readonly BodyEntry[]): BodyEncoder | undefined {
  const bindings: Record<string, unknown> = { asDecimal, formatValue };
  const lines = ['const body = {};'];
  const copy = (from: string, key: string) =>
    lines.push(
      `{ const value = ${from}; if (value !== undefined && value !== null) ${property('body', key)} = value; }`,
    );
  // The table is read once, here: own properties only, so that a polluted Object.prototype at
  // that moment cannot become part of the encoder.
  entries.forEach((entry, index) => {
    if (typeof entry === 'string') {
      copy(property('request', entry), REQUEST_WIRE_KEYS[entry]);
    } else if (Object.hasOwn(entry, 'format')) {
      const { field, format } = entry as Extract<BodyEntry, { format: WireFormat }>;
      copy(
        `formatValue(${literal(format)}, ${property('request', field)}, context)`,
        REQUEST_WIRE_KEYS[field],
      );
    } else if (Object.hasOwn(entry, 'decimals')) {
      const { field, decimals } = entry as Extract<BodyEntry, { decimals: number }>;
      if (!Number.isSafeInteger(decimals)) throw new Error(`decimals of ${field}: ${decimals}`);
      const value = property('request', field);
      copy(
        `(typeof ${value} === 'number' ? asDecimal(${value}, ${decimals}) : ${value})`,
        REQUEST_WIRE_KEYS[field],
      );
    } else if (Object.hasOwn(entry, 'value')) {
      const { key, value } = entry as Extract<BodyEntry, { value: string }>;
      bindings[`VALUE_${index}`] = value;
      lines.push(`${property('body', key)} = VALUE_${index};`);
    } else {
      const { key, copyOf } = entry as Extract<BodyEntry, { copyOf: RequestField }>;
      copy(property('request', copyOf), key);
    }
  });
  lines.push('return body;');
  return generateFunction<BodyEncoder>(
    'encodeBody',
    bindings,
    ['request', 'context'],
    lines.join('\n'),
  );
}

const bodyEncoderOf = stepPerTable(
  generatedBodyEncoder,
  (entries: readonly BodyEntry[]): BodyEncoder =>
    (request, context) =>
      encodeBodyByTable(request, entries, context),
);

/** The JSON body of a validated request, keys in table order, absent optional fields left out. */
export function encodeBody(
  request: object,
  entries: readonly BodyEntry[],
  context: EncodingContext,
): JsonObject {
  return bodyEncoderOf(entries)(request, context);
}

/**
 * The path of a validated request: `{field}` segments replaced by the URL-encoded value (the
 * field's rule already refused `/`, `..`, `?` and `#`), plus the query fields.
 */
export function encodePath(
  request: object,
  template: string,
  queryFields: readonly RequestField[],
): string {
  const source = request as Partial<Record<RequestField, unknown>>;
  const path = template.includes('{')
    ? template.replace(/\{(\w+)\}/g, (_match, field: string) =>
        encodeURIComponent(String(source[field as RequestField])),
      )
    : template;
  if (queryFields.length === 0) return path;
  const query = new URLSearchParams();
  for (const field of queryFields) {
    if (isPresent(source[field])) query.set(REQUEST_WIRE_KEYS[field], String(source[field]));
  }
  const search = query.toString();
  return search === '' ? path : `${path}?${search}`;
}

// ---------------------------------------------------------------------------------------------
// Answers of the six operations and of a transfer: the response records of the interface document.

/** Response field → the wire keys it is read from, first present wins. */
export const RESPONSE_WIRE_KEYS = {
  success: ['success'],
  message: ['message'],
  status: ['status'],
  transactionReference: ['transaction_reference', 'correlator_id', 'payd_transaction_ref'],
  trackingId: ['trackingId', 'tracking_id'],
  reference: ['reference'],
  result: ['result'],
  paymentMethod: ['payment_method'],
  checkoutUrl: ['checkout_url'],
  bankAccount: ['bank_account'],
  channel: ['channel'],
  amount: ['amount'],
} as const satisfies Record<string, readonly string[]>;

export type ResponseField = keyof typeof RESPONSE_WIRE_KEYS;

/**
 * Strings a response types as always there that the service may leave out or send as `null`:
 * `''` then. The real transfer answer has no `status`, some answers no `message`, and a tracking
 * id or reference often comes empty (docs/wire-contract.md, "Responses").
 */
const EMPTY_WHEN_ABSENT: readonly ResponseField[] = [
  'message',
  'status',
  'trackingId',
  'reference',
];

/** How an operation's answer becomes its response record (docs/wire-contract.md, "Responses"). */
export interface AcceptanceDecoding {
  readonly kind: 'acceptance';
  readonly fields: readonly ResponseField[];
  /** Fields whose value the interface document fixes, whatever the wire says. */
  readonly constants?: Partial<Record<ResponseField, string>>;
  /** Fields whose absence is an API error even on HTTP 2xx (rule 4.2.3). */
  readonly required?: readonly ResponseField[];
  /** A payout's `amount`: the wire's when positive, else the request's (the wire sends 0). */
  readonly amountFromRequest?: boolean;
  /**
   * The places the request's amount went on the wire with (its body's `decimals`): the request's
   * amount is answered as sent (`100.1 * 3` as 300.3), as the ledger and the status record say.
   */
  readonly amountDecimals?: number;
}

/** A look-up's answer: the camelCase form of its wire keys, checked against a shape. */
export interface RecordDecoding {
  readonly kind: 'record';
  readonly shape: WireShape;
  /** Extra names for top-level fields, e.g. `local` for `fiatBalance`. */
  readonly aliases?: Readonly<Record<string, string>>;
  /**
   * A top-level wire key that the record must have, equal to a request field: the record asked
   * for, not another one or none (`code` of the status look-up, its `reference`).
   */
  readonly echoes?: { readonly key: string; readonly requestField: string };
  /**
   * Wire paths (`fiat_balance.balance`) the record must have, neither absent nor null: a record
   * without them is `MISSING_FIELD`, never a response whose field reads `undefined`. A key ending
   * in `?` may be absent or null, and what follows it is required only when it is there
   * (`onchain_balance?.balance`).
   */
  readonly required?: readonly string[];
}

export type ResponseDecoding = AcceptanceDecoding | RecordDecoding;

/** JSON type of a value; objects and arrays name their members' shapes. */
export type WireShape =
  | 'string'
  /** A string, or a finite number read as its decimal text. */
  | 'text'
  | 'number'
  | 'boolean'
  | 'unknown'
  | { readonly object: Readonly<Record<string, WireShape>> }
  | { readonly listOf: WireShape };

const RESPONSE_FIELD_SHAPES: Record<ResponseField, WireShape> = {
  success: 'boolean',
  message: 'string',
  // The real service's SDK types every answer's `status` as a string or a number
  // (docs/wire-contract.md, "Status strings"): a number must not make an accepted call unreadable.
  status: 'text',
  transactionReference: 'string',
  trackingId: 'string',
  reference: 'string',
  result: 'unknown',
  paymentMethod: 'string',
  checkoutUrl: 'string',
  bankAccount: {
    object: {
      name: 'string',
      branch_code: 'string',
      account_number: 'string',
      account_name: 'string',
      account_reference: 'string',
    },
  },
  channel: 'string',
  amount: 'number',
};

/** The outcome of decoding: the record, or what was wrong with the answer. */
export type Decoded =
  | { readonly ok: true; readonly record: JsonObject }
  | {
      readonly ok: false;
      readonly code: 'INVALID_RESPONSE' | 'MISSING_FIELD';
      readonly problem: string;
    };

export function isJsonObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** `user_id` → `userId`; keys without `_` are kept. */
export function camelCase(key: string): string {
  return key.replace(/_+([a-zA-Z0-9])/g, (_match, letter: string) => letter.toUpperCase());
}

/**
 * Decodes `value` by `shape`: objects get camelCase keys (unknown keys kept as they are, in
 * camelCase), absent or null lists read as empty, `null` passes for any other type. Mistyped paths are pushed
 * to `invalid` by their wire names.
 */
function decodeShape(value: unknown, shape: WireShape, path: string, invalid: string[]): unknown {
  // A list the service sends as null (a Go service's empty slice) reads as empty, as an absent one.
  if (value === null && typeof shape === 'object' && 'listOf' in shape) return [];
  if (value === null || shape === 'unknown') return value;
  if (shape === 'text') {
    if (typeof value === 'number' && Number.isFinite(value)) return String(value);
    if (typeof value !== 'string') invalid.push(path);
    return value;
  }
  if (typeof shape === 'string') {
    // `1e400` parses as Infinity: no amount or count the service means.
    if (typeof value !== shape || (typeof value === 'number' && !Number.isFinite(value))) {
      invalid.push(path);
    }
    return value;
  }
  if ('listOf' in shape) {
    if (value === undefined) return [];
    if (!Array.isArray(value)) {
      invalid.push(path);
      return value;
    }
    return value.map((item, index) =>
      decodeShape(item, shape.listOf, `${path}[${index}]`, invalid),
    );
  }
  if (!isJsonObject(value)) {
    invalid.push(path);
    return value;
  }
  const record: JsonObject = {};
  for (const [key, item] of Object.entries(value)) {
    const documented = Object.hasOwn(shape.object, key);
    const name = camelCase(key);
    // `transactionDetails` or `transaction__details` beside `transaction_details`: the documented
    // key's value is the field's, whatever order they came in (the other stays in `_raw`).
    if (!documented && Object.hasOwn(record, name)) continue;
    const member = documented ? shape.object[key] : 'unknown';
    const decoded = decodeShape(item, member, path === '' ? key : `${path}.${key}`, invalid);
    // defineProperty: a `__proto__` key stays data.
    Object.defineProperty(record, name, {
      value: decoded,
      enumerable: true,
      writable: true,
      configurable: true,
    });
  }
  for (const [key, member] of Object.entries(shape.object)) {
    if (typeof member === 'object' && 'listOf' in member && !Object.hasOwn(value, key)) {
      record[camelCase(key)] = [];
    }
  }
  return record;
}

function firstPresent(body: JsonObject, keys: readonly string[]): unknown {
  let found: unknown;
  for (const key of keys) {
    if (!Object.hasOwn(body, key)) continue;
    const value = body[key];
    if (isPresent(value) && value !== '') return value;
    // An empty or null value counts only when no other key has a value.
    if (found === undefined || (found === null && value === '')) found = value;
  }
  return found;
}

/**
 * Whether an accepted call's reference is one `transactions.status` can look up: an empty one
 * (`""`), or one with `/` or `..`, would leave the caller a payment it can never check on.
 */
const isLookupReference = isPathSegment;

function invalidAnswer(invalid: readonly string[]): Decoded {
  return {
    ok: false,
    code: 'INVALID_RESPONSE',
    problem: `the response has a missing or mistyped ${[...new Set(invalid)].join(', ')}`,
  };
}

function missingFields(missing: readonly string[]): Decoded {
  return { ok: false, code: 'MISSING_FIELD', problem: `the response has no ${missing.join(', ')}` };
}

/** An acceptance decoded by a loop over its table: the reference the generated decoder must match. */
export function decodeAcceptanceByTable(
  body: JsonObject,
  decoding: AcceptanceDecoding,
  request: object,
): Decoded {
  const record: JsonObject = {};
  const invalid: string[] = [];
  for (const field of decoding.fields) {
    const constant = decoding.constants?.[field];
    if (constant !== undefined) {
      record[field] = constant;
      continue;
    }
    const value = firstPresent(body, RESPONSE_WIRE_KEYS[field]);
    if (value === undefined) continue;
    record[field] = decodeShape(value, RESPONSE_FIELD_SHAPES[field], field, invalid);
  }
  if (typeof record.success !== 'boolean') invalid.push('success');
  if (record.success === true && !isLookupReference(record.transactionReference)) {
    invalid.push('transactionReference');
  }
  if (invalid.length > 0) return invalidAnswer(invalid);
  for (const field of EMPTY_WHEN_ABSENT) {
    if (decoding.fields.includes(field) && !isPresent(record[field])) record[field] = '';
  }
  if (decoding.amountFromRequest && !(typeof record.amount === 'number' && record.amount > 0)) {
    record.amount = amountAsSent((request as { amount?: unknown }).amount, decoding.amountDecimals);
  }
  const missing = (decoding.required ?? []).filter(
    (field) => !isPresent(record[field]) || record[field] === '',
  );
  if (missing.length > 0) return missingFields(missing);
  record._raw = body;
  return { ok: true, record };
}

type AcceptanceDecoder = (body: JsonObject, request: object) => Decoded;

/**
 * `decodeAcceptanceByTable` for one table, written out field by field with literal keys
 * (generated-function.ts); `undefined` where code generation is disallowed.
 */
function generatedAcceptanceDecoder(decoding: AcceptanceDecoding): AcceptanceDecoder | undefined {
  const bindings: Record<string, unknown> = {
    decodeShape,
    invalidAnswer,
    isLookupReference,
    missingFields,
  };
  const lines = ['const record = {};', 'const invalid = [];'];
  // The tables are read once, here: only their own properties, so that a polluted
  // Object.prototype at that moment cannot become part of the decoder.
  const constants = decoding.constants ?? {};
  decoding.fields.forEach((field, index) => {
    const constant = Object.hasOwn(constants, field) ? constants[field] : undefined;
    if (constant !== undefined) {
      bindings[`CONSTANT_${index}`] = constant;
      lines.push(`${property('record', field)} = CONSTANT_${index};`);
      return;
    }
    // firstPresent, unrolled: the first key with a value wins; an empty or null value counts
    // only when no other key has a value.
    bindings[`SHAPE_${index}`] = RESPONSE_FIELD_SHAPES[field];
    lines.push('{', '  let found;', '  pick: {');
    for (const key of RESPONSE_WIRE_KEYS[field]) {
      lines.push(
        `    if (Object.hasOwn(body, ${literal(key)})) {`,
        `      const value = ${property('body', key)};`,
        `      if (value !== undefined && value !== null && value !== '') { found = value; break pick; }`,
        `      if (found === undefined || (found === null && value === '')) found = value;`,
        '    }',
      );
    }
    lines.push(
      '  }',
      `  if (found !== undefined) ${property('record', field)} = decodeShape(found, SHAPE_${index}, ${literal(field)}, invalid);`,
      '}',
    );
  });
  lines.push(
    `if (typeof record.success !== 'boolean') invalid.push('success');`,
    `if (record.success === true && !isLookupReference(record.transactionReference)) invalid.push('transactionReference');`,
    'if (invalid.length > 0) return invalidAnswer(invalid);',
  );
  for (const field of EMPTY_WHEN_ABSENT) {
    if (!decoding.fields.includes(field)) continue;
    const value = property('record', field);
    lines.push(`if (${value} === undefined || ${value} === null) ${value} = '';`);
  }
  if (Object.hasOwn(decoding, 'amountFromRequest') && decoding.amountFromRequest) {
    bindings.amountAsSent = amountAsSent;
    bindings.AMOUNT_DECIMALS = Object.hasOwn(decoding, 'amountDecimals')
      ? decoding.amountDecimals
      : undefined;
    lines.push(
      `if (!(typeof record.amount === 'number' && record.amount > 0)) record.amount = amountAsSent(request.amount, AMOUNT_DECIMALS);`,
    );
  }
  const required = Object.hasOwn(decoding, 'required') ? (decoding.required ?? []) : [];
  if (required.length > 0) {
    lines.push('let missing;');
    for (const field of required) {
      const value = property('record', field);
      lines.push(
        `if (${value} === undefined || ${value} === null || ${value} === '') (missing ??= []).push(${literal(field)});`,
      );
    }
    lines.push('if (missing !== undefined) return missingFields(missing);');
  }
  lines.push('record._raw = body;', 'return { ok: true, record };');
  return generateFunction<AcceptanceDecoder>(
    'decodeAcceptance',
    bindings,
    ['body', 'request'],
    lines.join('\n'),
  );
}

const acceptanceDecoderOf = stepPerTable(
  generatedAcceptanceDecoder,
  (decoding: AcceptanceDecoding): AcceptanceDecoder =>
    (body, request) =>
      decodeAcceptanceByTable(body, decoding, request),
);

function decodeAcceptance(
  body: JsonObject,
  decoding: AcceptanceDecoding,
  request: object,
): Decoded {
  return acceptanceDecoderOf(decoding)(body, request);
}

function decodeRecord(body: JsonObject, decoding: RecordDecoding, request: object): Decoded {
  const { echoes } = decoding;
  if (echoes !== undefined) {
    const echoed = Object.hasOwn(body, echoes.key) ? body[echoes.key] : undefined;
    // A record that names no transaction (no `code`, or null) is no more the one asked for than
    // a record of another: read as it, it would tell `isPaid()` that a payment succeeded.
    if (echoed !== (request as Record<string, unknown>)[echoes.requestField]) {
      return {
        ok: false,
        code: 'INVALID_RESPONSE',
        problem:
          echoed === undefined || echoed === null
            ? `the response has no ${echoes.key}: it does not say it is the ${echoes.requestField} asked for`
            : `the response's ${echoes.key} is not the ${echoes.requestField} asked for`,
      };
    }
  }
  const missing: string[] = [];
  for (const path of decoding.required ?? []) {
    let value: unknown = body;
    for (const step of path.split('.')) {
      const optional = step.endsWith('?');
      const key = optional ? step.slice(0, -1) : step;
      value = isJsonObject(value) && Object.hasOwn(value, key) ? value[key] : undefined;
      if (value !== undefined && value !== null) continue;
      if (!optional) missing.push(path.replaceAll('?', ''));
      break;
    }
  }
  if (missing.length > 0) return missingFields(missing);
  const invalid: string[] = [];
  const record = decodeShape(body, decoding.shape, '', invalid) as JsonObject;
  if (invalid.length > 0) {
    return {
      ok: false,
      code: 'INVALID_RESPONSE',
      problem: `the response has a mistyped ${invalid.slice(0, 10).join(', ')}`,
    };
  }
  for (const [alias, field] of Object.entries(decoding.aliases ?? {}))
    record[alias] = record[field];
  record._raw = body;
  return { ok: true, record };
}

/** A request's `amount` as it went on the wire, with `decimals` places (`asDecimal`). */
function amountAsSent(amount: unknown, decimals: number | undefined): unknown {
  return typeof amount === 'number' && decimals !== undefined
    ? asDecimal(amount, decimals)
    : amount;
}

/** The response record of a 2xx JSON object answer, or what makes it unusable. */
export function decodeResponse(
  body: JsonObject,
  decoding: ResponseDecoding,
  request: object,
): Decoded {
  return decoding.kind === 'acceptance'
    ? decodeAcceptance(body, decoding, request)
    : decodeRecord(body, decoding, request);
}

/** What the service's error body says (`{"status": 400, "success": false, "message": ...}`). */
export interface ServiceErrorBody {
  readonly message?: string;
  /** The body's numeric `status`, apart from the HTTP status. */
  readonly status?: number;
  /** A `code` the body may carry (the real service sends none). */
  readonly code?: string;
}

/**
 * Whether an answer names a transaction (a non-empty reference under any of its wire keys): the
 * service's refusals carry none, so a refusal that does may stand for a call that executed.
 */
/**
 * The transaction reference of a wire answer, read as the decoder reads it (the first of its keys
 * with a value), or undefined when it has none.
 * @internal
 */
export function transactionReferenceOf(body: JsonObject): string | undefined {
  const reference = firstPresent(body, RESPONSE_WIRE_KEYS.transactionReference);
  return typeof reference === 'string' && reference !== '' ? reference : undefined;
}

export function namesTransaction(body: unknown): boolean {
  if (!isJsonObject(body)) return false;
  return RESPONSE_WIRE_KEYS.transactionReference.some((key) => {
    const value = Object.hasOwn(body, key) ? body[key] : undefined;
    return (typeof value === 'string' && value.trim() !== '') || typeof value === 'number';
  });
}

/** Reads the service's error fields from any body, tolerating every shape. */
export function readServiceError(body: unknown): ServiceErrorBody {
  if (!isJsonObject(body)) return {};
  const { message, status, code } = body;
  return {
    ...(typeof message === 'string' && message !== '' ? { message } : {}),
    ...(typeof status === 'number' && Number.isFinite(status) ? { status } : {}),
    // Some gateways write it as text ("500", "503 Service Unavailable", "503: upstream", IIS's
    // "502.3"): a status all the same, though not a longer number ("5000").
    ...(typeof status === 'string' && /^\s*[1-5]\d\d(?!\d)/.test(status)
      ? { status: Number(status.trim().slice(0, 3)) }
      : {}),
    ...(typeof code === 'string' || (typeof code === 'number' && Number.isFinite(code))
      ? { code: String(code) }
      : {}),
  };
}

/** The parts of an operation that say how its request goes on the wire. */
export interface RequestLayout {
  readonly method: 'GET' | 'POST';
  readonly path: string;
  readonly body?: readonly BodyEntry[];
  readonly query?: readonly RequestField[];
}

const NO_QUERY: readonly RequestField[] = [];

/** A validated request as it goes on the wire: method, URL and JSON body. */
export function encodeRequest(
  layout: RequestLayout,
  request: object,
  context: EncodingContext,
): EncodedRequest {
  const url = encodePath(request, layout.path, layout.query ?? NO_QUERY);
  return layout.body
    ? { method: layout.method, url, body: encodeBody(request, layout.body, context) }
    : { method: layout.method, url };
}

import { validateSync } from 'class-validator';
import { isEmptyValue, readField } from './dto/rules';
import type { PaymentsFieldError } from './errors';
import { PaymentsValidationError } from './errors';
import type { PaymentsOperation } from './operations';
import { randomUUID } from 'node:crypto';
import type { PaymentsCallOptions, PaymentsDefaults } from './payments-options.interface';

const FALLBACK_FIELDS = [
  {
    field: 'username',
    option: 'defaultUsername',
    fromDefaults: (d: PaymentsDefaults) => d.username,
  },
  {
    field: 'callbackUrl',
    option: 'defaultCallbackUrl',
    fromDefaults: (d: PaymentsDefaults) => d.callbackUrl,
  },
] as const;

/** Printable ASCII without spaces, as a header value must be; long enough for any UUID or order id. */
const IDEMPOTENCY_KEY_PATTERN = /^[\x21-\x7e]{1,255}$/;

/**
 * The `Idempotency-Key` of one logical call: the caller's, validated, or a new UUID v4. Chosen
 * once per call, before the first attempt, so every retry carries the same key.
 * @throws PaymentsValidationError for a key that cannot be a header value.
 */
export function resolveIdempotencyKey(
  target: string,
  callOptions: PaymentsCallOptions | undefined,
): string {
  const retryAmbiguous: unknown = callOptions?.retryAmbiguous;
  if (retryAmbiguous !== undefined && typeof retryAmbiguous !== 'boolean') {
    throw new PaymentsValidationError(target, [
      {
        field: 'retryAmbiguous',
        rule: 'isBoolean',
        message: 'retryAmbiguous must be a boolean',
      },
    ]);
  }
  const key = callOptions?.idempotencyKey;
  if (key === undefined) return randomUUID();
  if (typeof key !== 'string' || !IDEMPOTENCY_KEY_PATTERN.test(key)) {
    throw new PaymentsValidationError(target, [
      {
        field: 'idempotencyKey',
        rule: 'isIdempotencyKey',
        message: 'idempotencyKey must be 1 to 255 printable ASCII characters without spaces',
      },
    ]);
  }
  return key;
}

/** Longest unknown key echoed back in an error message. */
const MAX_ECHOED_KEY_LENGTH = 64;

/**
 * Copies the operation's own fields of `input` into a new request instance, applies the fallback
 * rule (2.2) and the wallet rule (2.4, 4.2), and validates the result. The caller's object is not
 * modified; keys that are not fields of the operation (including `__proto__`) are rejected.
 * @throws PaymentsValidationError listing every failed field and rule.
 */
export function prepareRequest<TRequest extends object>(
  operation: PaymentsOperation<TRequest, unknown>,
  input: unknown,
  defaults: PaymentsDefaults,
): TRequest {
  const target = operation.requestClass.name;
  if (typeof input !== 'object' || input === null || Array.isArray(input)) {
    throw new PaymentsValidationError(target, [
      { field: 'request', rule: 'isObject', message: 'request must be an object' },
    ]);
  }
  const fields: readonly string[] = operation.requestFields;
  const errors: PaymentsFieldError[] = [];
  const request = new operation.requestClass() as Record<string, unknown>;

  for (const key of Object.keys(input)) {
    if (!fields.includes(key)) {
      const shown = key.slice(0, MAX_ECHOED_KEY_LENGTH);
      errors.push({
        field: shown,
        rule: 'whitelist',
        message: `${shown} is not a field of ${target}`,
      });
    }
  }
  for (const field of fields) {
    request[field] = readField(input, field);
  }

  for (const { field, option, fromDefaults } of FALLBACK_FIELDS) {
    if (!fields.includes(field) || !isEmptyValue(request[field])) continue;
    const fallback = fromDefaults(defaults);
    if (isEmptyValue(fallback)) {
      errors.push({
        field,
        rule: 'isNotEmpty',
        message: `${field} is required: the request has none and ${option} is not configured`,
      });
    } else {
      request[field] = fallback;
    }
  }
  if (fields.includes('walletType') && isEmptyValue(request.walletType)) {
    request.walletType = defaults.walletType;
  }

  for (const error of validateSync(request, {
    forbidUnknownValues: true,
    validationError: { target: false, value: false },
  })) {
    for (const [rule, message] of Object.entries(error.constraints ?? {})) {
      errors.push({ field: error.property, rule, message });
    }
  }
  if (errors.length > 0) throw new PaymentsValidationError(target, errors);
  return request as TRequest;
}

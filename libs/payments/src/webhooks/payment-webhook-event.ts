import { PaymentsFieldError, PaymentsValidationError } from '../errors';
import { fromWebhookBody, isJsonObject, WEBHOOK_WIRE_KEYS } from '../wire';

/** Event names of the contract's webhook. */
export const PAYMENT_WEBHOOK_EVENTS = [
  'payment.completed',
  'payment.failed',
  'payout.completed',
  'payout.failed',
] as const;

export type PaymentWebhookEventName = (typeof PAYMENT_WEBHOOK_EVENTS)[number];

/** A webhook delivery, camelCase, with the body as received in `_raw` (unknown keys included). */
export interface PaymentWebhookEvent {
  event: PaymentWebhookEventName;
  transactionReference: string;
  /** `SUCCESS` or `FAILED`; any string is passed through. */
  status: string;
  success?: boolean;
  amount?: number;
  currency?: string;
  message?: string;
  channel?: string;
  occurredAt?: string;
  _raw: Record<string, unknown>;
}

const MAX_REFERENCE_LENGTH = 128;
const OPTIONAL_TYPES = {
  success: 'boolean',
  amount: 'number',
  currency: 'string',
  message: 'string',
  channel: 'string',
  occurredAt: 'string',
} as const;

/**
 * Parses a webhook body into a {@link PaymentWebhookEvent}.
 * @throws PaymentsValidationError naming every malformed field (by its wire key).
 */
export function parsePaymentWebhook(body: unknown): PaymentWebhookEvent {
  const target = 'PaymentWebhookEvent';
  if (!isJsonObject(body)) {
    throw new PaymentsValidationError(target, [
      { field: 'body', rule: 'isObject', message: 'the webhook body must be a JSON object' },
    ]);
  }
  const event = fromWebhookBody(body);
  const errors: PaymentsFieldError[] = [];
  const reference = event.transactionReference;
  if (
    typeof reference !== 'string' ||
    reference === '' ||
    reference.length > MAX_REFERENCE_LENGTH
  ) {
    errors.push({
      field: WEBHOOK_WIRE_KEYS.transactionReference,
      rule: 'isNotEmpty',
      message: `transaction_reference must be a string of 1 to ${MAX_REFERENCE_LENGTH} characters`,
    });
  }
  if (typeof event.status !== 'string' || event.status === '') {
    errors.push({
      field: 'status',
      rule: 'isNotEmpty',
      message: 'status must be a non-empty string',
    });
  }
  if (!PAYMENT_WEBHOOK_EVENTS.includes(event.event as PaymentWebhookEventName)) {
    errors.push({
      field: 'event',
      rule: 'isIn',
      message: `event must be one of ${PAYMENT_WEBHOOK_EVENTS.join(', ')}`,
    });
  }
  for (const [field, type] of Object.entries(OPTIONAL_TYPES)) {
    if (event[field] !== undefined && event[field] !== null && typeof event[field] !== type) {
      const wireKey = WEBHOOK_WIRE_KEYS[field as keyof typeof OPTIONAL_TYPES];
      errors.push({
        field: wireKey,
        rule: `is${type[0].toUpperCase()}${type.slice(1)}`,
        message: `${wireKey} must be a ${type}`,
      });
    }
  }
  if (errors.length > 0) throw new PaymentsValidationError(target, errors);
  return { ...event, _raw: body } as unknown as PaymentWebhookEvent;
}

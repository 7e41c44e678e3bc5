import { PaymentsError } from '../errors';

/**
 * Why the status look-up contradicts an event:
 * - `unknown-reference`: the service has no transaction with this reference;
 * - `reference-mismatch`: the record's `code` is another reference;
 * - `outcome-mismatch`: a succeeded event whose record is not `success`, or the other way round;
 * - `amount-mismatch`: the event's amount is not the record's.
 */
export type PaymentWebhookContradiction =
  'unknown-reference' | 'reference-mismatch' | 'outcome-mismatch' | 'amount-mismatch';

/**
 * The service's record contradicts the webhook event: it is forged, garbled or premature. No
 * handler ran. The webhook route answers 409.
 */
export class PaymentWebhookContradictedError extends PaymentsError {
  override readonly name = 'PaymentWebhookContradictedError';

  constructor(
    /** Reference of the refused event. */
    readonly transactionReference: string,
    /** What contradicted it. */
    readonly reason: PaymentWebhookContradiction,
    detail: string,
  ) {
    super(`The service's record contradicts the webhook event: ${detail}`);
  }
}

/**
 * The event could not be confirmed because the status look-up failed (network, 5xx, credentials).
 * No handler ran. The webhook route answers 503 so that the service delivers it again later.
 */
export class PaymentWebhookConfirmationError extends PaymentsError {
  override readonly name = 'PaymentWebhookConfirmationError';

  constructor(
    /** Reference of the event that could not be confirmed. */
    readonly transactionReference: string,
    cause: unknown,
  ) {
    super('The webhook event could not be confirmed with the service', { cause });
  }
}

/**
 * A copy of an event arrived while its first delivery was being handled, and that delivery
 * failed. No handler ran for the copy. The webhook route answers 503: the service should deliver
 * it again, and the next delivery runs the handlers.
 */
export class PaymentWebhookConcurrentFailureError extends PaymentsError {
  override readonly name = 'PaymentWebhookConcurrentFailureError';

  constructor(
    /** Reference of the event. */
    readonly transactionReference: string,
  ) {
    super('A concurrent delivery of the same webhook event failed; deliver it again');
  }
}

import { PaymentsError } from '../errors';

/**
 * Why the status look-up contradicts an event:
 * - `unknown-reference`: the service has no transaction with this reference;
 * - `reference-mismatch`: the record's `code` is another reference;
 * - `outcome-mismatch`: the record is final with the other outcome (a succeeded event whose record
 *   failed, or the other way round);
 * - `amount-mismatch`: the event's amount is not the record's.
 */
export type PaymentWebhookContradiction =
  | 'unknown-reference'
  | 'reference-mismatch'
  | 'outcome-mismatch'
  | 'amount-mismatch'
  /** The event disagrees with the payments journal's entry it points at (docs/journal.md). */
  | 'journal-mismatch'
  /**
   * The event matches no journal entry and the app said all its calls go through the journal
   * (`unjournaledEvents: 'refuse'`): refused without a look-up.
   */
  | 'not-journaled';

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
 * The service's record of the event's transaction is not final yet (`pending`, `processing`, no
 * status...) and stayed so through the re-checks of `pendingRecheckDelaysMs`: the service may post
 * its callback before its own record has settled. No handler ran. The webhook route answers 503 so
 * that the service delivers it again; the handlers run once the record agrees.
 */
export class PaymentWebhookNotFinalError extends PaymentsError {
  override readonly name = 'PaymentWebhookNotFinalError';

  constructor(
    /** Reference of the event. */
    readonly transactionReference: string,
  ) {
    super("The service's record of the webhook event is not final yet; deliver it again later");
  }
}

/**
 * The event names, by `malipo_key` only, a journaled call that is being sent now: its answer, with
 * the call's reference, is not known yet, so the event cannot be checked against it (the key comes
 * from a URL anyone can write). No handler ran. The webhook route answers 503 so that the service
 * delivers it again once the answer is in; `reconcile()` settles the call if it never does.
 */
export class PaymentWebhookCallInFlightError extends PaymentsError {
  override readonly name = 'PaymentWebhookCallInFlightError';

  constructor(
    /** Reference of the event. */
    readonly transactionReference: string,
  ) {
    super('The call the webhook event names is being sent now; deliver it again later');
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

/**
 * Another delivery of the same event holds its claim in the store (another instance is running
 * its handlers, or crashed while doing so and its lease has not ended). No handler ran. The
 * webhook route answers 503: the next delivery finds the event processed (200), or takes the
 * claim over once the lease has ended.
 */
export class PaymentWebhookBusyError extends PaymentsError {
  override readonly name = 'PaymentWebhookBusyError';

  constructor(
    /** Reference of the event. */
    readonly transactionReference: string,
  ) {
    super('Another delivery of this webhook event is being processed; deliver it again later');
  }
}

/**
 * The webhook store failed (Redis unreachable, a command timed out...) before the handlers could
 * run, or while releasing a failed delivery. The webhook route answers 503: the service delivers
 * the event again, and nothing was marked processed.
 */
export class PaymentWebhookStoreError extends PaymentsError {
  override readonly name = 'PaymentWebhookStoreError';

  constructor(
    /** Reference of the event. */
    readonly transactionReference: string,
    /** What the store was doing: `claim`, `recordReference`... */
    readonly operation: string,
    cause: unknown,
  ) {
    super(`The webhook store failed (${operation}); deliver the event again`, { cause });
  }
}

/**
 * The status look-up budget (`lookupBudget`, or `foreignLookupBudget` for events that match no
 * journal entry) is spent: the event was not looked up and no handler ran. The webhook route
 * answers 503 so that the service delivers it again; the delivery cost nothing at the service.
 */
export class PaymentWebhookBudgetError extends PaymentsError {
  override readonly name = 'PaymentWebhookBudgetError';

  constructor(
    /** Reference of the event. */
    readonly transactionReference: string,
    /** Which budget was spent: `main` (`lookupBudget`) or `foreign` (`foreignLookupBudget`). */
    readonly budget: 'main' | 'foreign',
  ) {
    super('The webhook look-up budget is spent; deliver the event again later');
  }
}

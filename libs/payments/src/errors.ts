import type { PaymentsJournalEntry } from './journal/payments-journal.interfaces';

/** One rejected field of a request or of the module options. */
export interface PaymentsFieldError {
  /** Field name as the caller wrote it, e.g. `amount` or `apiPassword`. */
  readonly field: string;
  /** The failed rule, e.g. `min`, `isKenyanPhoneNumber`, `isNotEmpty`, `whitelist`. */
  readonly rule: string;
  /** Human-readable message. Never contains the rejected value. */
  readonly message: string;
}

/** Base class of every error this library throws: `catch (e) { if (e instanceof PaymentsError) ... }`. */
export abstract class PaymentsError extends Error {}

/**
 * `work`, rejecting only with the library's typed errors: one of them passes as it is, anything
 * else (a store's or engine's own error) becomes `typed(error)`, which keeps it as its `cause`.
 * @internal The reconciler and the payout runs answer through it.
 */
export async function withTypedFailure<T>(
  work: () => Promise<T>,
  typed: (cause: unknown) => PaymentsError,
): Promise<T> {
  try {
    return await work();
  } catch (error) {
    if (error instanceof PaymentsError) throw error;
    throw typed(error);
  }
}

/**
 * A request (or the module options) broke a rule of the interface document. Raised before
 * anything is sent; never retried.
 */
export class PaymentsValidationError extends PaymentsError {
  override readonly name = 'PaymentsValidationError';
  /** Always false: nothing was sent. */
  readonly mayHaveExecuted = false;

  constructor(
    /**
     * What was validated: a request class name, a call's options (`MpesaPayoutRequest call
     * options`), or `PaymentsModuleOptions`.
     */
    readonly target: string,
    /** Every failed field with its rule. */
    readonly errors: readonly PaymentsFieldError[],
  ) {
    super(`Invalid ${target}: ${errors.map((e) => e.message).join('; ')}`);
  }
}

/**
 * What went wrong, in this library's words (docs/errors.md lists what each means and what to do):
 * - `SERVICE_ERROR`: the service refused the request (HTTP 4xx/5xx, or 2xx with `success: false`);
 * - `AUTHENTICATION_FAILED`: HTTP 401, the credentials were refused;
 * - `INVALID_RESPONSE`: a 2xx answer that is not the contract's (not JSON, mistyped fields);
 * - `MISSING_FIELD`: a 2xx answer without a field the document requires (card `checkoutUrl`);
 * - `RESPONSE_INCOMPLETE`: the answer's headers arrived, its body did not;
 * - `NETWORK_ERROR`: no answer (connection refused or reset, DNS, TLS...); `cause.code` says which;
 * - `TIMEOUT`: no complete answer within `timeout`;
 * - `CLIENT_CLOSED`: the client was closing, so the call was not (or not wholly) made;
 * - `UNEXPECTED`: anything else.
 *
 * With a journal ({@link PaymentsJournalError}, nothing sent by this call):
 * - `IN_DOUBT`: an earlier call under this key may have executed and its outcome is not known;
 * - `IN_PROGRESS`: a call under this key is being sent now (here or by another instance), or its
 *   process died mid-send and its deadline has not passed;
 * - `ALREADY_FAILED`: the call under this key failed at the service: a new attempt needs a new key;
 * - `ALREADY_REFUSED`: the key was held without a send (a payout-run takeover settled refused, a
 *   cancelled run's item), or a payout run's key whose refusal stands: nothing goes out under it
 *   again unless the caller passes `{ resend: true }`;
 * - `JOURNAL_UNAVAILABLE`: the journal could not be written, so the call was not sent.
 */
export type PaymentsErrorCode =
  | 'SERVICE_ERROR'
  | 'AUTHENTICATION_FAILED'
  | 'INVALID_RESPONSE'
  | 'MISSING_FIELD'
  | 'RESPONSE_INCOMPLETE'
  | 'NETWORK_ERROR'
  | 'TIMEOUT'
  | 'CLIENT_CLOSED'
  | 'UNEXPECTED'
  | 'IN_DOUBT'
  | 'IN_PROGRESS'
  | 'ALREADY_FAILED'
  | 'ALREADY_REFUSED'
  | 'JOURNAL_UNAVAILABLE';

/** What a {@link ServiceAPIError} knows about the failed call. */
export interface ServiceAPIErrorDetails {
  readonly operation: string;
  readonly idempotencyKey: string;
  readonly attempts: number;
  readonly code: PaymentsErrorCode;
  readonly mayHaveExecuted: boolean;
  readonly status?: number;
  readonly serviceStatus?: number;
  readonly serviceCode?: string;
  readonly serviceMessage?: string;
  readonly body?: unknown;
  readonly headers?: Readonly<Record<string, string>>;
  readonly retryAfterMs?: number;
  readonly cause?: Error;
}

/**
 * The API error of the interface document (section 7): the service refused the call, answered
 * something unusable, or could not be reached after every retry. `mayHaveExecuted` says whether
 * money may have moved.
 */
export class ServiceAPIError extends PaymentsError {
  override readonly name: string = 'ServiceAPIError';
  /** Operation that failed, e.g. `payouts.mpesa`. */
  readonly operation: string;
  /** This library's code for what went wrong. */
  readonly code: PaymentsErrorCode;
  /**
   * True when the request may have reached the service and been executed (a timeout or reset
   * after it was sent, a 5xx, an unusable 2xx). Confirm with the webhook (matched by
   * `idempotencyKey`) or `transactions.status` before paying again; retry only with the same
   * `idempotencyKey`. False when the service certainly did not execute it.
   */
  readonly mayHaveExecuted: boolean;
  /** HTTP status of the last answer; absent when none arrived. */
  readonly status?: number;
  /** The numeric `status` of the service's error body (it may differ from the HTTP status). */
  readonly serviceStatus?: number;
  /** A `code` from the service's error body, when it sent one. */
  readonly serviceCode?: string;
  /** The service's `message`, e.g. `number (…) is not valid kenyan number`. */
  readonly serviceMessage?: string;
  /** The last answer's body: parsed JSON, or its text. Credentials redacted. */
  readonly body?: unknown;
  /** Response headers of the last answer (lower-case; cookies and credentials left out). */
  readonly headers?: Readonly<Record<string, string>>;
  /** The last answer's `Retry-After` in ms (e.g. on a 429 or 503): wait that long before retrying. */
  readonly retryAfterMs?: number;
  /** Attempts made, retries included. */
  readonly attempts: number;
  /** The `Idempotency-Key` of every attempt (also `malipo_key` on the callback URL). */
  readonly idempotencyKey: string;

  constructor(message: string, details: ServiceAPIErrorDetails) {
    super(message, details.cause ? { cause: details.cause } : undefined);
    this.operation = details.operation;
    this.idempotencyKey = details.idempotencyKey;
    this.attempts = details.attempts;
    this.code = details.code;
    this.mayHaveExecuted = details.mayHaveExecuted;
    if (details.status !== undefined) this.status = details.status;
    if (details.serviceStatus !== undefined) this.serviceStatus = details.serviceStatus;
    if (details.serviceCode !== undefined) this.serviceCode = details.serviceCode;
    if (details.serviceMessage !== undefined) this.serviceMessage = details.serviceMessage;
    if (details.body !== undefined) this.body = details.body;
    if (details.headers !== undefined) this.headers = details.headers;
    if (details.retryAfterMs !== undefined) this.retryAfterMs = details.retryAfterMs;
  }

  /** A plain view for structured loggers. */
  toJSON(): Record<string, unknown> {
    return {
      name: this.name,
      message: this.message,
      operation: this.operation,
      code: this.code,
      mayHaveExecuted: this.mayHaveExecuted,
      status: this.status,
      serviceStatus: this.serviceStatus,
      serviceCode: this.serviceCode,
      attempts: this.attempts,
      idempotencyKey: this.idempotencyKey,
      retryAfterMs: this.retryAfterMs,
      body: this.body,
    };
  }
}

/** The service refused the API credentials (HTTP 401). Never retried. */
export class AuthenticationError extends ServiceAPIError {
  override readonly name: string = 'AuthenticationError';
}

/** Codes of a {@link PaymentsJournalError}. */
export type PaymentsJournalErrorCode = Extract<
  PaymentsErrorCode,
  'IN_DOUBT' | 'IN_PROGRESS' | 'ALREADY_FAILED' | 'ALREADY_REFUSED' | 'JOURNAL_UNAVAILABLE'
>;

/**
 * The journal stopped a call before it was sent (docs/journal.md): `code` says why, `entry` is
 * what the journal holds of the key (absent for `JOURNAL_UNAVAILABLE`). A `ServiceAPIError`, so
 * code that already reads `mayHaveExecuted` stays right: it is true for `IN_DOUBT` and
 * `IN_PROGRESS` (the earlier call under the key may move money), false otherwise.
 */
export class PaymentsJournalError extends ServiceAPIError {
  override readonly name: string = 'PaymentsJournalError';
  override readonly code: PaymentsJournalErrorCode;
  /** The journal's entry of the key, as it was when the call was stopped. */
  readonly entry?: PaymentsJournalEntry;

  constructor(
    message: string,
    details: Omit<ServiceAPIErrorDetails, 'code' | 'attempts'> & {
      code: PaymentsJournalErrorCode;
      entry?: PaymentsJournalEntry;
    },
  ) {
    super(message, { ...details, attempts: 0 });
    this.code = details.code;
    if (details.entry !== undefined) this.entry = details.entry;
  }

  override toJSON(): Record<string, unknown> {
    return { ...super.toJSON(), entry: this.entry };
  }
}

/**
 * Why `PaymentsReconciler` changed nothing:
 * - `REFUSED`: the resolution is refused (no such entry, final already, being sent, another
 *   reference, a record of the service that disagrees, an entry that kept changing);
 * - `LOOKUP_FAILED`: the service's record of the reference could not be read: try again;
 * - `STORE_FAILED`: the journal's store failed (its error is the `cause`): try again;
 * - `NO_JOURNAL`: the client has no `journal` option.
 */
export type PaymentsReconcilerErrorCode =
  'REFUSED' | 'LOOKUP_FAILED' | 'STORE_FAILED' | 'NO_JOURNAL';

/**
 * `PaymentsReconciler` could not do what was asked, and changed nothing: `code` says why, and
 * whether trying again may help; `message` says it in words.
 */
export class PaymentsReconcilerError extends PaymentsError {
  override readonly name = 'PaymentsReconcilerError';
  readonly code: PaymentsReconcilerErrorCode;
  /** The entry it was about, when one. */
  readonly idempotencyKey?: string;

  constructor(
    message: string,
    details: { code: PaymentsReconcilerErrorCode; idempotencyKey?: string; cause?: unknown },
  ) {
    super(message, details.cause === undefined ? undefined : { cause: details.cause });
    this.code = details.code;
    if (details.idempotencyKey !== undefined) this.idempotencyKey = details.idempotencyKey;
  }
}

/**
 * What a log line says of a failure: its class, and a `ServiceAPIError`'s code and HTTP status
 * (`ServiceAPIError RATE_LIMITED, HTTP 429`); never its message, which may quote the service.
 * @internal
 */
export function failureNamed(error: unknown): string {
  if (!(error instanceof Error)) return 'error';
  if (!(error instanceof ServiceAPIError)) return error.name;
  return `${error.name} ${error.code}${error.status === undefined ? '' : `, HTTP ${error.status}`}`;
}

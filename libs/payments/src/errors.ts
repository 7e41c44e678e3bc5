/** One rejected field of a request or of the module options. */
export interface PaymentsFieldError {
  /** Field name as the caller wrote it, e.g. `amount` or `apiPassword`. */
  readonly field: string;
  /** The failed rule, e.g. `min`, `isKenyanPhoneNumber`, `isNotEmpty`, `whitelist`. */
  readonly rule: string;
  /** Human-readable message. Never contains the rejected value. */
  readonly message: string;
}

/**
 * A request (or the module options) broke a rule of the interface document. Raised before
 * anything is sent; never retried.
 */
export class PaymentsValidationError extends Error {
  override readonly name = 'PaymentsValidationError';

  constructor(
    /** What was validated: a request class name, or `PaymentsModuleOptions`. */
    readonly target: string,
    /** Every failed field with its rule. */
    readonly errors: readonly PaymentsFieldError[],
  ) {
    super(`Invalid ${target}: ${errors.map((e) => e.message).join('; ')}`);
  }
}

/** What a {@link ServiceAPIError} knows about the failed call. */
export interface ServiceAPIErrorDetails {
  readonly operation: string;
  readonly idempotencyKey: string;
  readonly attempts: number;
  readonly status?: number;
  readonly code?: string;
  readonly body?: unknown;
  readonly cause?: Error;
}

/**
 * The API error of the interface document (section 7): the service answered with an error,
 * answered something unusable, or could not be reached after every retry.
 */
export class ServiceAPIError extends Error {
  override readonly name: string = 'ServiceAPIError';
  /** Operation that failed, e.g. `payouts.mpesa`. */
  readonly operation: string;
  /** HTTP status of the last response; absent when no response arrived (network failure, timeout). */
  readonly status?: number;
  /** The service's error `code` from the body, or the network error code (`ECONNRESET`, `ETIMEDOUT`...). */
  readonly code?: string;
  /** The last response body: parsed JSON, or the text when it was not JSON. */
  readonly body?: unknown;
  /** Attempts made, retries included. */
  readonly attempts: number;
  /** The `Idempotency-Key` sent on every attempt: retry the call with it to stay idempotent. */
  readonly idempotencyKey: string;

  constructor(message: string, details: ServiceAPIErrorDetails) {
    super(message, details.cause ? { cause: details.cause } : undefined);
    this.operation = details.operation;
    this.idempotencyKey = details.idempotencyKey;
    this.attempts = details.attempts;
    if (details.status !== undefined) this.status = details.status;
    if (details.code !== undefined) this.code = details.code;
    if (details.body !== undefined) this.body = details.body;
  }

  /** A plain view for structured loggers. */
  toJSON(): Record<string, unknown> {
    return {
      name: this.name,
      message: this.message,
      operation: this.operation,
      status: this.status,
      code: this.code,
      attempts: this.attempts,
      idempotencyKey: this.idempotencyKey,
      body: this.body,
    };
  }
}

/** The service refused the API credentials (HTTP 401). Never retried. */
export class AuthenticationError extends ServiceAPIError {
  override readonly name: string = 'AuthenticationError';
}

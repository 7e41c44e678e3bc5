import { Catch, HttpStatus, Logger } from '@nestjs/common';
import type { ArgumentsHost, ExceptionFilter } from '@nestjs/common';
import {
  AuthenticationError,
  PaymentsJournalError,
  PaymentsReconcilerError,
  PaymentsValidationError,
  ServiceAPIError,
} from './errors';
import type { PaymentsReconcilerErrorCode } from './errors';
import { replyWith } from './http-reply';
import { PAYMENTS_LOGGER_CONTEXT } from './payments.constants';

/** The JSON body the filter answers with. */
export interface PaymentsErrorResponse {
  statusCode: number;
  error: string;
  message: string;
  /** Validation: every rejected field with its rule. */
  errors?: PaymentsValidationError['errors'];
  operation?: string;
  /** The library's code (`SERVICE_ERROR`, `TIMEOUT`...). */
  code?: string;
  /** The call may have gone through: check its outcome before paying again. */
  mayHaveExecuted?: boolean;
  /** Retry with this key (also the `malipo_key` of the webhook) to stay idempotent. */
  idempotencyKey?: string;
  retryAfterMs?: number;
}

/** The HTTP answer of each {@link PaymentsReconcilerError} code. */
const RECONCILER_ANSWERS: Readonly<Record<PaymentsReconcilerErrorCode, readonly [number, string]>> =
  {
    REFUSED: [HttpStatus.CONFLICT, 'Conflict'],
    LOOKUP_FAILED: [HttpStatus.BAD_GATEWAY, 'Bad Gateway'],
    STORE_FAILED: [HttpStatus.SERVICE_UNAVAILABLE, 'Service Unavailable'],
    NO_JOURNAL: [HttpStatus.INTERNAL_SERVER_ERROR, 'Internal Server Error'],
  };

/**
 * Turns the library's errors into HTTP answers for your app's clients: a
 * `PaymentsValidationError` is a 400 naming the fields; a `ServiceAPIError` (including
 * `AuthenticationError`) is a 502 with a safe message, the library's `code`, and, when the call
 * may have executed, `mayHaveExecuted` and the `idempotencyKey` to retry with; a
 * `PaymentsJournalError` is a 409 (`IN_DOUBT`, `IN_PROGRESS`, `ALREADY_FAILED`, `ALREADY_REFUSED`)
 * or a 503 (`JOURNAL_UNAVAILABLE`); a `PaymentsReconcilerError` a 409 (`REFUSED`), 502
 * (`LOOKUP_FAILED`), 503 (`STORE_FAILED`) or 500 (`NO_JOURNAL`). Bodies never carry the service's
 * answer, a store's error, a stack or a credential. Use it with
 * `app.useGlobalFilters(new PaymentsExceptionFilter())` or `@UseFilters(PaymentsExceptionFilter)`.
 */
@Catch(PaymentsValidationError, ServiceAPIError, PaymentsReconcilerError)
export class PaymentsExceptionFilter implements ExceptionFilter {
  private readonly logger = new Logger(PAYMENTS_LOGGER_CONTEXT);

  catch(
    error: PaymentsValidationError | ServiceAPIError | PaymentsReconcilerError,
    host: ArgumentsHost,
  ): void {
    replyWith(host, this.toResponse(error));
  }

  /** The answer for `error` (exposed for apps that build their own reply). */
  toResponse(
    error: PaymentsValidationError | ServiceAPIError | PaymentsReconcilerError,
  ): PaymentsErrorResponse {
    if (error instanceof PaymentsReconcilerError) return this.reconcilerResponse(error);
    if (error instanceof PaymentsValidationError) {
      return {
        statusCode: HttpStatus.BAD_REQUEST,
        error: 'Bad Request',
        message: error.message,
        errors: error.errors,
      };
    }
    if (error instanceof PaymentsJournalError) return this.journalResponse(error);
    this.logger.warn(
      `${error.name} in ${error.operation}: HTTP ${error.status ?? 'none'}, code ${error.code}, ${error.attempts} attempt(s)${error.mayHaveExecuted ? ', may have executed' : ''}`,
    );
    const message =
      error instanceof AuthenticationError
        ? 'The payment provider refused our credentials'
        : error.mayHaveExecuted
          ? `The payment provider did not confirm ${error.operation}: it may have been executed; check its outcome before retrying, and retry only with the same idempotencyKey`
          : `The payment provider could not complete ${error.operation}`;
    return {
      statusCode: HttpStatus.BAD_GATEWAY,
      error: 'Bad Gateway',
      message,
      operation: error.operation,
      code: error.code,
      mayHaveExecuted: error.mayHaveExecuted,
      ...(error.mayHaveExecuted ? { idempotencyKey: error.idempotencyKey } : {}),
      ...(error.retryAfterMs === undefined ? {} : { retryAfterMs: error.retryAfterMs }),
    };
  }

  /**
   * The reconciler changed nothing: 409 for a refused resolution, 502 for a look-up that failed,
   * 503 for a store that failed, 500 without a journal. The store's error stays in the log.
   */
  private reconcilerResponse(error: PaymentsReconcilerError): PaymentsErrorResponse {
    const [statusCode, name] = RECONCILER_ANSWERS[error.code];
    this.logger.warn(`${error.name}: code ${error.code}`);
    return {
      statusCode,
      error: name,
      message: error.message,
      code: error.code,
      ...(error.idempotencyKey === undefined ? {} : { idempotencyKey: error.idempotencyKey }),
    };
  }

  /**
   * A call the journal stopped before sending: 409 when the key's earlier call decides (in doubt,
   * in progress, failed, refused for good), 503 when the journal could not be written. No entry in
   * the body: it names the account and the fingerprints, which are not the app's clients' business.
   */
  private journalResponse(error: PaymentsJournalError): PaymentsErrorResponse {
    const unavailable = error.code === 'JOURNAL_UNAVAILABLE';
    this.logger.warn(`${error.name} in ${error.operation}: code ${error.code}`);
    return {
      statusCode: unavailable ? HttpStatus.SERVICE_UNAVAILABLE : HttpStatus.CONFLICT,
      error: unavailable ? 'Service Unavailable' : 'Conflict',
      message: error.message,
      operation: error.operation,
      code: error.code,
      mayHaveExecuted: error.mayHaveExecuted,
      idempotencyKey: error.idempotencyKey,
    };
  }
}

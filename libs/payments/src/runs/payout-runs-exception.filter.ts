import { Catch, HttpStatus, Logger } from '@nestjs/common';
import type { ArgumentsHost, ExceptionFilter } from '@nestjs/common';
import { PAYMENTS_LOGGER_CONTEXT } from '../payments.constants';
import { replyWith } from '../http-reply';
import {
  PayoutRunConflictError,
  PayoutRunCreationError,
  PayoutRunNotFoundError,
  PayoutRunRefusedError,
  PayoutRunStateError,
  PayoutRunStoreError,
} from './payout-run.errors';
import type {
  PayoutRunBalanceShortfall,
  PayoutRunItemProblem,
  PayoutRunState,
} from './payout-run.interfaces';

/** The errors of `PayoutRunsService` that {@link PayoutRunsExceptionFilter} answers. */
export type PayoutRunError =
  | PayoutRunRefusedError
  | PayoutRunConflictError
  | PayoutRunNotFoundError
  | PayoutRunStateError
  | PayoutRunCreationError
  | PayoutRunStoreError;

/** The JSON body {@link PayoutRunsExceptionFilter} answers with. */
export interface PayoutRunErrorResponse {
  statusCode: number;
  error: string;
  message: string;
  runId?: string;
  /** Whether some of the run's payouts may have gone out: false means nothing was sent. */
  mayHaveExecuted?: boolean;
  /** Refused: every broken rule of every item (`itemId`, `field`, `rule`, `message`). */
  problems?: readonly PayoutRunItemProblem[];
  /** Refused: the balance shortfall per currency (the run's total and the balance). */
  shortfalls?: readonly PayoutRunBalanceShortfall[];
  /** The run's state, when it did not allow the action. */
  state?: PayoutRunState;
}

/**
 * Turns the errors of `PayoutRunsService` into HTTP answers for your app's clients: a refused run
 * is a 400 with its `problems` and `shortfalls` (the message and the shortfalls carry the balance:
 * use it on APIs for the people who run payrolls), a `runId` that holds other items or a run
 * whose state does not allow the action a 409, an unknown run a 404, and a creation, read or
 * change whose store failed a 503 with `runId` and `mayHaveExecuted` (create again with that
 * `runId`; read the run before changing it again). Bodies never carry a store's error. Use it
 * beside `PaymentsExceptionFilter`:
 * `app.useGlobalFilters(new PaymentsExceptionFilter(), new PayoutRunsExceptionFilter())`.
 */
@Catch(
  PayoutRunRefusedError,
  PayoutRunConflictError,
  PayoutRunNotFoundError,
  PayoutRunStateError,
  PayoutRunCreationError,
  PayoutRunStoreError,
)
export class PayoutRunsExceptionFilter implements ExceptionFilter {
  private readonly logger = new Logger(PAYMENTS_LOGGER_CONTEXT);

  catch(error: PayoutRunError, host: ArgumentsHost): void {
    replyWith(host, this.toResponse(error));
  }

  /** The answer for `error` (exposed for apps that build their own reply). */
  toResponse(error: PayoutRunError): PayoutRunErrorResponse {
    const { message } = error;
    if (error instanceof PayoutRunRefusedError) {
      const { problems, shortfalls } = error;
      const status = { statusCode: HttpStatus.BAD_REQUEST, error: 'Bad Request' };
      return { ...status, message, mayHaveExecuted: false, problems, shortfalls };
    }
    const { runId } = error;
    if (error instanceof PayoutRunConflictError) {
      const status = { statusCode: HttpStatus.CONFLICT, error: 'Conflict' };
      return { ...status, message, runId, mayHaveExecuted: false };
    }
    if (error instanceof PayoutRunNotFoundError) {
      return { statusCode: HttpStatus.NOT_FOUND, error: 'Not Found', message, runId };
    }
    if (error instanceof PayoutRunStateError) {
      const status = { statusCode: HttpStatus.CONFLICT, error: 'Conflict' };
      return { ...status, message, runId, state: error.state };
    }
    if (error instanceof PayoutRunStoreError) {
      this.logger.warn(`${error.name} for payout run ${runId} (${error.action})`);
      const status = { statusCode: HttpStatus.SERVICE_UNAVAILABLE, error: 'Service Unavailable' };
      return { ...status, message, runId, mayHaveExecuted: error.mayHaveExecuted };
    }
    this.logger.warn(
      `${error.name} for payout run ${runId}: ${error.mayHaveExecuted ? 'may be paying' : 'not started'}`,
    );
    const status = { statusCode: HttpStatus.SERVICE_UNAVAILABLE, error: 'Service Unavailable' };
    return { ...status, message, runId, mayHaveExecuted: error.mayHaveExecuted };
  }
}

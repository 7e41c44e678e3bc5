import { ArgumentsHost, Catch, ExceptionFilter, HttpStatus, Logger } from '@nestjs/common';
import type { Response } from 'express';
import { AuthenticationError, PaymentsValidationError, ServiceAPIError } from '@malipo/nestjs';

/**
 * Maps the library's errors to HTTP: bad input is the client's 400; anything the provider did is
 * our 502. Bodies carry no stack, no provider body and never a credential.
 */
@Catch(PaymentsValidationError, ServiceAPIError)
export class PaymentsExceptionFilter implements ExceptionFilter {
  private readonly logger = new Logger(PaymentsExceptionFilter.name);

  catch(error: PaymentsValidationError | ServiceAPIError, host: ArgumentsHost): void {
    const response = host.switchToHttp().getResponse<Response>();
    if (error instanceof PaymentsValidationError) {
      response.status(HttpStatus.BAD_REQUEST).json({
        statusCode: HttpStatus.BAD_REQUEST,
        error: 'Bad Request',
        message: error.message,
        errors: error.errors,
      });
      return;
    }
    this.logger.warn(
      `${error.name} in ${error.operation}: status ${error.status ?? 'none'}, code ${error.code}, ${error.attempts} attempt(s)${error.mayHaveExecuted ? ', may have executed' : ''}`,
    );
    const message =
      error instanceof AuthenticationError
        ? 'The payment provider rejected our credentials'
        : `The payment provider could not complete ${error.operation}`;
    response.status(HttpStatus.BAD_GATEWAY).json({
      statusCode: HttpStatus.BAD_GATEWAY,
      error: 'Bad Gateway',
      message,
      operation: error.operation,
      providerStatus: error.status,
      // The provider's own code when it sent one, else the library's (NETWORK_ERROR, TIMEOUT...).
      code: error instanceof AuthenticationError ? undefined : (error.serviceCode ?? error.code),
      // True when the call may have gone through anyway: the order settles by webhook, so the
      // client must not simply start another one.
      mayHaveExecuted: error.mayHaveExecuted || undefined,
    });
  }
}

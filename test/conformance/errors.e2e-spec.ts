/**
 * The real error example under HTTP 200 and under HTTP 400 (docs/wire-contract.md, "Errors on
 * the wire"): a refusal, never retried, certainly not executed.
 */
import { ServiceAPIError } from '@malipo/nestjs';
import { EXAMPLE_CALLS, fixture, rejectionOf, useConformanceServer } from './conformance-kit';

const SERVICE_MESSAGE = 'number (7458969711) is not valid kenyan number';

describe('conformance: the error example', () => {
  const conformance = useConformanceServer();

  it('is the recorded example', () => {
    expect(fixture('collections/error-response.json')).toEqual({
      status: 400,
      success: false,
      message: SERVICE_MESSAGE,
    });
  });

  describe.each([200, 400])('under HTTP %i', (httpStatus) => {
    it.each(EXAMPLE_CALLS)(
      '$operation rejects with a ServiceAPIError, sent once and never retried',
      async ({ operation, call }) => {
        conformance.server.answerWith('collections/error-response.json', httpStatus);
        const error = await rejectionOf(call(conformance.client({ maxRetries: 2 })));

        expect(error).toBeInstanceOf(ServiceAPIError);
        const refusal = error as ServiceAPIError;
        expect(refusal.message).toContain(SERVICE_MESSAGE);
        expect({
          operation: refusal.operation,
          code: refusal.code,
          status: refusal.status,
          serviceStatus: refusal.serviceStatus,
          serviceMessage: refusal.serviceMessage,
          mayHaveExecuted: refusal.mayHaveExecuted,
          attempts: refusal.attempts,
        }).toEqual({
          operation,
          code: 'SERVICE_ERROR',
          status: httpStatus,
          serviceStatus: 400,
          serviceMessage: SERVICE_MESSAGE,
          mayHaveExecuted: false,
          attempts: 1,
        });
        expect(conformance.server.requests).toHaveLength(1);
      },
    );
  });
});

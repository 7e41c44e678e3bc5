import { ArgumentsHost, Catch, ExceptionFilter, HttpException, Logger } from '@nestjs/common';
import { errorBody, requestPath, SandboxHttpError, SandboxRequest, sendJson } from './http-io';
import { RequestLogService } from './request-log.service';
import { isPostPath, normalizeApiPath } from './sandbox-operations';

/**
 * Every error as the real JSON error body, including those Nest raises before a handler
 * runs: unknown paths (404) and bodies the JSON parser refused (400).
 */
@Catch()
export class SandboxExceptionFilter implements ExceptionFilter {
  private readonly logger = new Logger('Sandbox');

  constructor(private readonly requestLog: RequestLogService) {}

  catch(exception: unknown, host: ArgumentsHost): void {
    const http = host.switchToHttp();
    const req = http.getRequest<SandboxRequest>();
    const res = http.getResponse<Parameters<typeof sendJson>[0]>();

    if (exception instanceof SandboxHttpError) {
      sendJson(res, exception.getStatus(), exception.getResponse());
      return;
    }
    if (!(exception instanceof HttpException)) {
      this.logger.error(
        exception instanceof Error ? (exception.stack ?? exception.message) : exception,
      );
      sendJson(res, 500, errorBody(500, 'Internal sandbox error'));
      return;
    }

    const status = exception.getStatus();
    const path = normalizeApiPath(requestPath(req));
    // The API handler never throws, so on an API path this is a body the parser refused. It
    // still hit the API and belongs in the request log.
    if (req.method === 'POST' && isPostPath(path) && status !== 404) {
      this.requestLog.record('POST', path, headerString(req.headers['idempotency-key']));
    }
    const message =
      status === 400 ? `Malformed request body: ${exception.message}` : exception.message;
    sendJson(res, status, errorBody(status, message));
  }
}

function headerString(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value.join(', ') : value;
}

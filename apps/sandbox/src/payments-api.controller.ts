import { Controller, Post, Req, Res } from '@nestjs/common';
import { isAuthorized } from './basic-auth';
import { FaultAction, FaultsService } from './faults.service';
import {
  ApiReply,
  errorReply,
  headerValue,
  requestPath,
  SandboxRequest,
  SandboxResponse,
  send,
  sendJson,
} from './http-io';
import { IdempotencyService, requestFingerprint } from './idempotency.service';
import { PaymentsApiService } from './payments-api.service';
import { RequestLogService } from './request-log.service';
import { SandboxConfig } from './sandbox.config';
import { API_PATHS, ApiPath, normalizeApiPath } from './sandbox-operations';

const MAX_IDEMPOTENCY_KEY_LENGTH = 255;

/**
 * The six operations on their four paths. The order of the layers is the point: log, then
 * faults (the network fails before anything else), then authentication, idempotency and the
 * operation itself.
 */
@Controller()
export class PaymentsApiController {
  constructor(
    private readonly api: PaymentsApiService,
    private readonly faults: FaultsService,
    private readonly idempotency: IdempotencyService,
    private readonly requestLog: RequestLogService,
    private readonly config: SandboxConfig,
  ) {}

  @Post([...API_PATHS])
  async handle(@Req() req: SandboxRequest, @Res() res: SandboxResponse): Promise<void> {
    // The router matched one of API_PATHS, ignoring case and a trailing slash.
    const path = normalizeApiPath(requestPath(req)) as ApiPath;
    const idempotencyKey = headerValue(req, 'idempotency-key');
    const entry = this.requestLog.record(req.method ?? 'POST', path, idempotencyKey);

    const fault = this.faults.take(path);
    if (fault) entry.fault = fault.description;
    if (fault?.delayMs) await sleep(fault.delayMs);
    if (fault?.action && !fault.afterExecute) return applyFault(res, fault.action);

    const reply = this.answer(req, path, idempotencyKey);
    // afterExecute: the work is done (and stored under the key), only the answer is lost.
    if (fault?.action) return applyFault(res, fault.action);
    sendJson(res, reply.status, reply.body, reply.headers);
  }

  private answer(req: SandboxRequest, path: ApiPath, idempotencyKey?: string): ApiReply {
    if (!isAuthorized(headerValue(req, 'authorization'), this.config)) {
      return {
        ...errorReply(401, 'UNAUTHORIZED', 'Invalid or missing API credentials'),
        headers: { 'www-authenticate': 'Basic realm="payments-sandbox"' },
      };
    }
    if (idempotencyKey === undefined) return this.api.execute(path, req.body, undefined);
    if (idempotencyKey.trim() === '' || idempotencyKey.length > MAX_IDEMPOTENCY_KEY_LENGTH) {
      return errorReply(
        400,
        'VALIDATION_ERROR',
        `Idempotency-Key must be 1 to ${MAX_IDEMPOTENCY_KEY_LENGTH} characters`,
      );
    }

    // Lookup, execution and storing run in one synchronous stretch, so two concurrent requests
    // with one key cannot both execute.
    const fingerprint = requestFingerprint(path, req.body);
    const stored = this.idempotency.lookup(idempotencyKey, fingerprint);
    if (stored.kind === 'mismatch') {
      return errorReply(
        409,
        'IDEMPOTENCY_KEY_REUSED',
        'Idempotency-Key was already used with a different request',
      );
    }
    if (stored.kind === 'replay') {
      return {
        ...stored.reply,
        headers: { ...stored.reply.headers, 'idempotent-replayed': 'true' },
      };
    }
    const reply = this.api.execute(path, req.body, idempotencyKey);
    this.idempotency.remember(idempotencyKey, fingerprint, reply);
    return reply;
  }
}

function applyFault(res: SandboxResponse, action: FaultAction): void {
  if (action.kind === 'reset') {
    res.socket?.destroy();
    return;
  }
  if (typeof action.body === 'string') {
    send(res, action.status, action.body, {
      'content-type': action.contentType ?? 'text/html; charset=utf-8',
    });
    return;
  }
  sendJson(
    res,
    action.status,
    action.body,
    action.contentType ? { 'content-type': action.contentType } : {},
  );
}

/** Unref'd: a delayed request must not keep a closed sandbox's process alive. */
function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms).unref());
}

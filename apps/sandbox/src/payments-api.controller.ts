import { Controller, Get, Param, Post, Req, Res } from '@nestjs/common';
import { authenticate } from './basic-auth';
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
import { LookupsService } from './lookups.service';
import { PaymentsApiService } from './payments-api.service';
import { RateLimitService } from './rate-limit.service';
import { RequestLogService } from './request-log.service';
import { SandboxAccount, SandboxConfig } from './sandbox.config';
import { apiRouteOf, LOOKUPS, normalizeApiPath, POST_PATHS, PostPath } from './sandbox-operations';

const MAX_IDEMPOTENCY_KEY_LENGTH = 255;

/**
 * The API: the money operations on their five POST paths and the three GET look-ups. The order
 * of the layers is the point: log, then the rate limit (the gateway turns a request away before
 * it goes anywhere), then faults (the network fails before anything else), then authentication,
 * idempotency and the operation itself.
 */
@Controller()
export class PaymentsApiController {
  constructor(
    private readonly api: PaymentsApiService,
    private readonly lookups: LookupsService,
    private readonly faults: FaultsService,
    private readonly idempotency: IdempotencyService,
    private readonly requestLog: RequestLogService,
    private readonly config: SandboxConfig,
    private readonly rateLimit: RateLimitService,
  ) {}

  @Post([...POST_PATHS])
  async handle(@Req() req: SandboxRequest, @Res() res: SandboxResponse): Promise<void> {
    // The router matched one of POST_PATHS, ignoring case and a trailing slash.
    const path = normalizeApiPath(requestPath(req)) as PostPath;
    const idempotencyKey = headerValue(req, 'idempotency-key');
    await this.serve(req, res, path, idempotencyKey, (account) =>
      this.answerPost(req, path, idempotencyKey, account),
    );
  }

  @Get(LOOKUPS['networks.discover'].route)
  async networks(@Req() req: SandboxRequest, @Res() res: SandboxResponse): Promise<void> {
    const query = new URL(req.originalUrl ?? req.url ?? '/', 'http://sandbox.invalid').searchParams;
    await this.serve(req, res, requestPath(req), undefined, () => this.lookups.networks(query));
  }

  @Get(LOOKUPS['transactions.status'].route)
  async status(
    @Param('reference') reference: string,
    @Req() req: SandboxRequest,
    @Res() res: SandboxResponse,
  ): Promise<void> {
    await this.serve(req, res, requestPath(req), undefined, (account) =>
      this.lookups.status(reference, account),
    );
  }

  @Get(LOOKUPS['balances.all'].route)
  async balances(
    @Param('username') username: string,
    @Req() req: SandboxRequest,
    @Res() res: SandboxResponse,
  ): Promise<void> {
    await this.serve(req, res, requestPath(req), undefined, () => this.lookups.balances(username));
  }

  /** The layers every API request goes through; `answer` runs for an authenticated account. */
  private async serve(
    req: SandboxRequest,
    res: SandboxResponse,
    path: string,
    idempotencyKey: string | undefined,
    answer: (account: SandboxAccount) => ApiReply,
  ): Promise<void> {
    const logPath = path.length > 1 ? path.replace(/\/+$/, '') : path;
    const entry = this.requestLog.record(req.method ?? 'GET', logPath, idempotencyKey);

    const limited = this.rateLimit.take();
    if (limited) {
      entry.fault = 'rate limit 429';
      const { status, body } = errorReply(429, 'Too many requests: rate limit exceeded');
      sendJson(res, status, body, { 'retry-after': String(limited.retryAfterSeconds) });
      return;
    }
    const fault = this.faults.take(apiRouteOf(logPath) ?? logPath);
    if (fault) entry.fault = fault.description;
    if (fault?.delayMs) await sleep(fault.delayMs);
    if (fault?.action && !fault.afterExecute) return applyFault(res, fault.action);

    const account = authenticate(headerValue(req, 'authorization'), this.config.accounts);
    const reply: ApiReply = account
      ? answer(account)
      : {
          ...errorReply(401, 'Invalid or missing API credentials'),
          headers: { 'www-authenticate': 'Basic realm="payments-sandbox"' },
        };
    // afterExecute: the work is done (and stored under the key), only the answer is lost.
    if (fault?.action) return applyFault(res, fault.action);
    sendJson(res, reply.status, reply.body, reply.headers);
  }

  private answerPost(
    req: SandboxRequest,
    path: PostPath,
    idempotencyKey: string | undefined,
    account: SandboxAccount,
  ): ApiReply {
    if (idempotencyKey === undefined) return this.api.execute(path, req.body, undefined, account);
    if (idempotencyKey.trim() === '' || idempotencyKey.length > MAX_IDEMPOTENCY_KEY_LENGTH) {
      return errorReply(
        400,
        `Idempotency-Key must be 1 to ${MAX_IDEMPOTENCY_KEY_LENGTH} characters`,
      );
    }

    // Lookup, execution and storing run in one synchronous stretch, so two concurrent requests
    // with one key cannot both execute. Keys are per account.
    const scopedKey = `${account.username}\u0000${idempotencyKey}`;
    const fingerprint = requestFingerprint(path, req.body);
    const stored = this.idempotency.lookup(scopedKey, fingerprint);
    if (stored.kind === 'mismatch') {
      return errorReply(409, 'Idempotency-Key was already used with a different request');
    }
    if (stored.kind === 'replay') {
      return {
        ...stored.reply,
        headers: { ...stored.reply.headers, 'idempotent-replayed': 'true' },
      };
    }
    const reply = this.api.execute(path, req.body, idempotencyKey, account);
    this.idempotency.remember(scopedKey, fingerprint, reply);
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

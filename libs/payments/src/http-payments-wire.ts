import * as http from 'node:http';
import * as https from 'node:https';
import { TLSSocket } from 'node:tls';
import { HttpService } from '@nestjs/axios';
import { Inject, Injectable, Logger } from '@nestjs/common';
import axios, { AxiosError } from 'axios';
import type {
  AxiosInstance,
  AxiosRequestConfig,
  AxiosResponse,
  InternalAxiosRequestConfig,
} from 'axios';
import axiosRetry from 'axios-retry';
import { ServiceAPIError } from './errors';
import {
  PAYMENTS_HTTP_SERVICE,
  PAYMENTS_LOGGER_CONTEXT,
  PAYMENTS_RESOLVED_OPTIONS,
} from './payments.constants';
import type { ResolvedPaymentsOptions } from './payments-options';
import { PaymentsWire } from './payments-wire';
import type { AttemptTracing, CallTracing, WireAnswer, WireCall } from './payments-wire';
import { basicAuthorization, credentialsRedactor } from './secret-redactor';
import type { SecretRedactor } from './secret-redactor';
import { LIBRARY_NAME, LIBRARY_VERSION } from './version';
import { printsAsNameOnly } from './secret-holders';

/** First retry waits this long; each next one twice as long (section 8: 200, 400, 800 ms...). */
const RETRY_BASE_DELAY_MS = 200;
/** Largest response body read, so a broken proxy cannot exhaust memory. */
const MAX_RESPONSE_BYTES = 10 * 1024 * 1024;

/** Wait before retry number `retryNumber` (1-based). */
export function retryDelay(retryNumber: number): number {
  return RETRY_BASE_DELAY_MS * 2 ** (retryNumber - 1);
}

/** `code` of the error that ends an attempt at its deadline. */
const DEADLINE_CODE = 'ETIMEDOUT';
/** `code` of the error that ends an https attempt a proxy answered itself instead of tunnelling. */
const NOT_TUNNELLED_CODE = 'EPROXYTUNNEL';

/** `code` of the error that ends an attempt answered `101 Switching Protocols`. */
const SWITCHED_PROTOCOLS_CODE = 'EPROTOCOLSWITCH';

/** The attempt's deadline timer, kept on its request so that one shared listener clears it. */
const DEADLINE_TIMER = Symbol('malipo.deadline');

type DeadlinedRequest = http.ClientRequest & { [DEADLINE_TIMER]?: NodeJS.Timeout };

// Listeners shared by every attempt (`this` is the request): an attempt allocates no closure.
function clearDeadline(this: DeadlinedRequest): void {
  clearTimeout(this[DEADLINE_TIMER]);
}

function refuseUntunnelled(this: http.ClientRequest, socket: unknown): void {
  if (socket instanceof TLSSocket) return;
  this.destroy(
    Object.assign(new Error('the proxy answered instead of opening a tunnel to the service'), {
      code: NOT_TUNNELLED_CODE,
    }),
  );
}

/**
 * An unasked-for `101 Switching Protocols`: without an `upgrade` listener Node closes the socket
 * and the request reports nothing, so the call would never settle. It ends the attempt instead,
 * its request wholly sent. Reported by hand: once upgraded, a request's `destroy(error)` emits no
 * `error`.
 */
function refuseSwitchedProtocols(
  this: http.ClientRequest,
  response: http.IncomingMessage,
  socket: { destroy(): void },
): void {
  socket.destroy();
  this.emit(
    'error',
    Object.assign(
      new Error(`the server switched protocols (HTTP ${response.statusCode}) instead of answering`),
      { code: SWITCHED_PROTOCOLS_CODE },
    ),
  );
  this.destroy();
}

function expire(request: http.ClientRequest, timeout: number): void {
  const error = Object.assign(new Error(`no complete response within ${timeout} ms`), {
    code: DEADLINE_CODE,
  });
  // A request still waiting for its socket (a proxy tunnel being opened by an agent that
  // may never call back) reports nothing when destroyed until a socket comes: report now.
  const waitingForSocket = !request.socket;
  request.destroy(error);
  if (waitingForSocket) request.emit('error', error);
}

/**
 * The Node transport with a wall-clock deadline per attempt: axios's own `timeout` becomes a
 * socket idle timeout once headers arrive, so a server dripping its body could hold a call for
 * ever. One timer per attempt, cleared when the request closes.
 *
 * An https attempt is only answered over TLS: through a proxy (HTTPS_PROXY or the `proxy`
 * option), axios's tunnelling agent plays a proxy's non-200 answer to CONNECT back as the
 * service's answer, so a proxy could otherwise forge a payout's success.
 *
 * A class, not an object literal: axios deep-copies a plain object of the config on every
 * request, and passes an instance by reference.
 */
export class DeadlineTransport {
  constructor(private readonly timeout: number) {}

  request(
    options: http.RequestOptions,
    onResponse: (res: http.IncomingMessage) => void,
  ): http.ClientRequest {
    const secure = options.protocol === 'https:';
    const request = (secure ? https : http).request(options, onResponse);
    // Registered before the tunnelling agent's own listener, which replays the proxy's bytes.
    if (secure) request.once('socket', refuseUntunnelled);
    // A request is upgraded once at most: `on` with the shared function allocates nothing per call.
    request.on('upgrade', refuseSwitchedProtocols);
    armDeadline(request, this.timeout);
    return request;
  }
}

/** Ends `request` with an ETIMEDOUT error unless it closes within `timeout` ms. @internal */
export function armDeadline(request: http.ClientRequest, timeout: number): void {
  (request as DeadlinedRequest)[DEADLINE_TIMER] = setTimeout(expire, timeout, request, timeout);
  // A request closes once: `on` does what `once` would, without its wrapper.
  request.on('close', clearDeadline);
}

/**
 * The wait an answer's `Retry-After` asks for (ms): delay-seconds (digits only) or an HTTP-date
 * (RFC 9110, section 10.2.3), else 0. `1e3`, `0x10` or `Infinity` are no delay a server may
 * send; read as numbers, they would stop the retries and reach the error as a wait of hours.
 */
function retryAfterMs(error: AxiosError): number {
  const header: unknown = error.response?.headers['retry-after'];
  if (typeof header !== 'string') return 0;
  const value = header.trim();
  if (/^\d+$/.test(value)) return Number(value) * 1000;
  // An HTTP-date names its day and month; `Date.parse` alone also reads bare numbers as years.
  const date = /[a-z]/i.test(value) ? Date.parse(value) : Number.NaN;
  return Number.isNaN(date) ? 0 : Math.max(0, date - Date.now());
}

/** The longest `Retry-After` (ms) an error reports: a day; a longer one is reported as a day. */
const MAX_REPORTED_RETRY_AFTER_MS = 86_400_000;

/**
 * The network error codes of a request that got no answer in time, as axios reports them:
 * ECONNABORTED (legacy) or ETIMEDOUT (transitional.clarifyTimeoutError).
 * @internal
 */
export const TIMEOUT_CODES: ReadonlySet<string> = new Set(['ECONNABORTED', 'ETIMEDOUT']);

function isTimeoutError(error: AxiosError): boolean {
  return !error.response && error.code !== undefined && TIMEOUT_CODES.has(error.code);
}

/**
 * Status of a response whose headers arrived but whose body did not (a timeout, a reset or the
 * connection closed while reading it).
 */
function partialResponseStatus(error: AxiosError): number | undefined {
  if (error.code === NOT_TUNNELLED_CODE) return undefined;
  const request = error.request as
    { res?: { statusCode?: number; complete?: boolean } } | undefined;
  // axios also puts the response on the error of a body cut short (the connection closed
  // mid-body), without its text. A cut 2xx is incomplete: its body was the answer. An error
  // status says enough without its body (a 503 is retried, a 401 refused), and stays the answer.
  if (error.response) {
    const { status } = error.response;
    const cut = request?.res?.complete === false && isSuccessStatus(status);
    return cut ? status : undefined;
  }
  return request?.res?.statusCode;
}

/**
 * Whether a failed attempt's request was wholly written to the socket: only then can the service
 * have executed it. Connection refused, DNS and TLS failures and connect timeouts fail before.
 */
function requestWasSent(error: AxiosError): boolean {
  const request = error.request as { writableFinished?: boolean; socket?: unknown } | undefined;
  if (request?.writableFinished !== true) return false;
  // Over TLS the request is finished once the TLS socket holds it, before the handshake: one
  // that failed (a protocol or cipher the server refuses) sent nothing. Only a handshake known
  // not to have completed counts; anything else may have been sent.
  return !(request.socket instanceof TLSSocket && !handshakeCompleted(request.socket));
}

/** False only for a TLS socket whose handshake never completed (Node's own flag). */
function handshakeCompleted(socket: TLSSocket): boolean {
  return (socket as TLSSocket & { _secureEstablished?: boolean })._secureEstablished !== false;
}

/** Whether `status` is a 2xx. @internal */
export function isSuccessStatus(status: number): boolean {
  return status >= 200 && status <= 299;
}

/** HTTP 409 Conflict: see {@link errorStatusMayHaveExecuted}. */
const CONFLICT = 409;

/**
 * Whether the service may have executed a request it answered with this status: a 4xx is its
 * refusal; a 5xx may come from a proxy after it executed, a 3xx (never followed) may stand for a
 * call done elsewhere ("303 See Other"), a 2xx that reaches here was cut short or unreadable, and
 * a 409 is how an API that keeps idempotency keys answers a key whose call is in progress or
 * done: a retry of a call that timed out gets it while the first one pays.
 * @internal
 */
export function errorStatusMayHaveExecuted(status: number): boolean {
  return status < 400 || status > 499 || status === CONFLICT;
}

/**
 * Whether the service may have executed a failed attempt: its answer says so
 * ({@link errorStatusMayHaveExecuted}), or the request was wholly written before the failure (a
 * timeout, a reset, a body cut short).
 */
function attemptMayHaveExecuted(error: AxiosError): boolean {
  if (error.code === AxiosError.ERR_CANCELED) return false;
  if (error.response) return errorStatusMayHaveExecuted(error.response.status);
  return partialResponseStatus(error) !== undefined || requestWasSent(error);
}

/**
 * How many of something are in flight, and a promise that resolves once none is: what `close()`
 * waits for. A count rather than a set, so that each call pays for no registration. Here, in a
 * file every call runs anyway, rather than in one of its own (docs/architecture.md, the walk of one
 * call).
 * @internal
 */
export class InFlightCount {
  private count = 0;
  private drain: { promise: Promise<void>; resolve: () => void } | undefined;

  started(): void {
    this.count += 1;
  }

  ended(): void {
    this.count -= 1;
    if (this.count === 0 && this.drain) {
      this.drain.resolve();
      this.drain = undefined;
    }
  }

  /** Resolves once none is in flight. */
  drained(): Promise<void> {
    if (this.count === 0) return Promise.resolve();
    if (!this.drain) {
      let resolve!: () => void;
      const promise = new Promise<void>((done) => (resolve = done));
      this.drain = { promise, resolve };
    }
    return this.drain.promise;
  }
}

/**
 * The calls of one wire, as `close()` needs them: a count rather than a set of every call, so
 * that a call pays for no registration; only a call waiting for a retry is held by name.
 */
class WireCalls {
  /** True once the client is closing: no retry may start. */
  closing = false;
  /** Calls between a failed attempt and their next one: `close()` cuts their wait short. */
  readonly waitingForRetry = new Set<PaymentsCall>();
  private readonly unsettled = new InFlightCount();

  started(): void {
    this.unsettled.started();
  }

  settled(call: PaymentsCall): void {
    this.waitingForRetry.delete(call);
    this.unsettled.ended();
  }

  /** Resolves once no call is unsettled. */
  drained(): Promise<void> {
    return this.unsettled.drained();
  }
}

/**
 * State of one logical call, handed to the HTTP layer in the request config. A class, so axios
 * passes the same object to every retry instead of copying it like a plain object.
 */
class PaymentsCall {
  /** Made at the first retry: a call that succeeds first time pays for no abort signal. */
  private controller: AbortController | undefined;
  attemptsStarted = 0;
  /** The trace of the attempt on the wire, when the call is traced. */
  attemptTrace: AttemptTracing | undefined;
  /**
   * True once a failed attempt may have been executed: a later attempt failing before it was
   * sent, or the client closing, does not undo that.
   */
  anAttemptMayHaveExecuted = false;
  /** True once a retry was stopped because it could not end before {@link sendUntil}. */
  stoppedAtSendDeadline = false;

  constructor(
    readonly calls: WireCalls,
    /** Whether a failure after the request was sent may be retried (a POST with `retryAmbiguous`). */
    readonly retryAmbiguous: boolean,
    /** The call's trace (OpenTelemetry installed), parent of one span per attempt. */
    readonly trace?: CallTracing,
    /** {@link WireCall.sendUntil}. */
    readonly sendUntil?: number,
  ) {}

  /** The signal of the retries (axios-retry also listens to it during its backoff wait). */
  get signal(): AbortSignal {
    this.controller ??= new AbortController();
    return this.controller.signal;
  }

  /** Cancels the pending or starting retry; a first attempt has no signal and is never cut. */
  abort(): void {
    this.controller?.abort();
  }
}

/** Request config carrying the call state. */
type PaymentsRequestConfig = AxiosRequestConfig & { paymentsCall?: PaymentsCall };

function callOf(config: AxiosRequestConfig | undefined): PaymentsCall | undefined {
  return (config as PaymentsRequestConfig | undefined)?.paymentsCall;
}

/** 1-based number of the attempt a request config belongs to. */
function attemptOf(config: InternalAxiosRequestConfig | undefined): number {
  return (config?.['axios-retry']?.retryCount ?? 0) + 1;
}

/**
 * Section 7/8: 5xx, network failures and timeouts are transient, POST included; any other status is
 * final. Once response headers have arrived the service has answered: a failure while reading the
 * body is not retried, since a 2xx may mean the payment was made. With `retryAmbiguous` off, only
 * failures before the request was sent are retried.
 */
function isRetryable(
  error: AxiosError,
  call: PaymentsCall | undefined,
  maxRetryAfterMs: number,
): boolean {
  if (error.code === AxiosError.ERR_CANCELED || partialResponseStatus(error) !== undefined) {
    return false;
  }
  // The service asked for a longer pause than a caller should wait inside one call.
  if (retryAfterMs(error) > maxRetryAfterMs) return false;
  const ambiguous = error.response
    ? error.response.status >= 500 && error.response.status <= 599
    : requestWasSent(error);
  if (error.response && !ambiguous) return false;
  return !ambiguous || (call?.retryAmbiguous ?? true);
}

/** Records a failed attempt on its call: whether it may have executed, and the end of its span. */
function attemptFailed(error: AxiosError, call: PaymentsCall | undefined): void {
  if (!call) return;
  if (attemptMayHaveExecuted(error)) call.anAttemptMayHaveExecuted = true;
  const status = error.response?.status;
  call.attemptTrace?.end(
    status === undefined
      ? { errorType: error.code ?? 'Error' }
      : { statusCode: status, errorType: String(status) },
  );
  call.attemptTrace = undefined;
}

function describeData(data: unknown, redactor: SecretRedactor): string {
  if (typeof data === 'string') return redactor.display(data);
  if (data === undefined) return '';
  return JSON.stringify(redactor.value(data));
}

/** Debug lines of section 6: method and URL, request body, status line, response data, per attempt. */
function attachDebugLogging(
  instance: AxiosInstance,
  redactor: SecretRedactor,
  maxAttempts: number,
): void {
  const logger = new Logger(PAYMENTS_LOGGER_CONTEXT);
  // Logging must never change a call's outcome.
  const log = (line: () => string) => {
    try {
      logger.log(redactor.text(line()));
    } catch {
      // A logger that throws loses the line, not the payment.
    }
  };
  const tag = (config: InternalAxiosRequestConfig | undefined) =>
    `[${String(config?.headers?.['Idempotency-Key'] ?? '-')} attempt ${attemptOf(config)}/${maxAttempts}]`;

  instance.interceptors.request.use(
    (config) => {
      log(
        () => `${tag(config)} ${config.method?.toUpperCase() ?? 'POST'} ${instance.getUri(config)}`,
      );
      log(() => `${tag(config)} request body ${describeData(config.data, redactor)}`);
      return config;
    },
    undefined,
    { synchronous: true },
  );
  instance.interceptors.response.use(
    (response: AxiosResponse) => {
      log(() =>
        `${tag(response.config)} response HTTP ${response.status} ${response.statusText ?? ''}`.trimEnd(),
      );
      log(() => `${tag(response.config)} response data ${describeData(response.data, redactor)}`);
      return response;
    },
    (error: Error) => {
      if (error instanceof AxiosError) {
        const { response } = error;
        if (response) {
          log(() =>
            `${tag(error.config)} response HTTP ${response.status} ${response.statusText ?? ''}`.trimEnd(),
          );
          log(() => `${tag(error.config)} response data ${describeData(response.data, redactor)}`);
        } else {
          log(() => `${tag(error.config)} no response: ${error.code ?? 'ERROR'} ${error.message}`);
        }
      }
      return Promise.reject(error);
    },
  );
}

/**
 * The module's own `HttpService`: a private axios instance with Basic auth, per-attempt timeout,
 * and retries. Nothing is installed on the global axios or on an app's own `HttpService`.
 */
export function createPaymentsHttpService(options: ResolvedPaymentsOptions): HttpService {
  const instance = axios.create({
    baseURL: options.baseUrl,
    // No axios `timeout`: the transport's deadline covers the whole attempt, connect included,
    // and a second timer per attempt would only repeat it.
    headers: {
      Authorization: basicAuthorization(options.apiUsername, options.apiPassword),
      'Content-Type': 'application/json',
      Accept: 'application/json',
      'User-Agent': `${LIBRARY_NAME}/${LIBRARY_VERSION} node/${process.version}`,
    },
    // The body is parsed by the operation runner, so a 2xx that is not JSON is an error, not a string.
    responseType: 'text',
    transformResponse: [(data: unknown) => data],
    // A payment API does not redirect; following one would resend the credentials.
    maxRedirects: 0,
    transport: new DeadlineTransport(options.timeout),
    // An environment proxy (HTTP_PROXY) would receive a plain-http request, Basic header
    // included, in clear; https targets may still tunnel through one (CONNECT). An explicit
    // `proxy` option is the team's own choice.
    proxy: options.proxy ?? (new URL(options.baseUrl).protocol === 'http:' ? false : undefined),
    maxContentLength: MAX_RESPONSE_BYTES,
    httpAgent: new http.Agent({ keepAlive: true }),
    httpsAgent: new https.Agent({ keepAlive: true }),
  });
  // A password a team put in `baseUrl` (a query key) is kept out of spans, as out of logs.
  const redactor = credentialsRedactor(options);
  // Registered before axios-retry so that its response hook sees every attempt, not only the last.
  if (options.debug) attachDebugLogging(instance, redactor, options.maxRetries + 1);
  // Synchronous, as are all request hooks of this instance: axios then runs them in line instead
  // of chaining a promise per hook.
  instance.interceptors.request.use(
    (config) => {
      const call = callOf(config);
      if (call) {
        call.calls.waitingForRetry.delete(call);
        // A retry whose wait ended after close() began must not go out; nor any attempt that
        // would end after its journal entry's deadline (the process was held up): the call may
        // count as in doubt by then, and be sent again by a person.
        const closing = call.calls.closing && call.attemptsStarted > 0;
        if (!closing && call.sendUntil !== undefined) {
          call.stoppedAtSendDeadline = Date.now() + options.timeout > call.sendUntil;
        }
        // Cancelled by a signal of its own: aborting the call's signal here would wake
        // axios-retry's wait listener, which sends the attempt a second time.
        if (closing || call.stoppedAtSendDeadline) config.signal = AbortSignal.abort();
        call.attemptsStarted += 1;
        call.attemptTrace = call.trace?.attempt(
          (config.method ?? 'post').toUpperCase(),
          redactor.text(instance.getUri(config)),
          call.attemptsStarted,
        );
      }
      return config;
    },
    undefined,
    { synchronous: true },
  );
  // axios-retry asks `retryCondition` about a failed attempt while retries remain, and calls
  // `onMaxRetryTimesExceeded` once they are spent: between them every failed attempt is recorded
  // once, with no response hook of ours (a promise per call). `send` ends a successful attempt.
  const { requestInterceptorId } = axiosRetry(instance, {
    retries: options.maxRetries,
    retryCondition: (error) => {
      const call = callOf(error.config);
      attemptFailed(error, call);
      return !call?.calls.closing && isRetryable(error, call, options.maxRetryAfterMs);
    },
    onMaxRetryTimesExceeded: (error) => attemptFailed(error, callOf(error.config)),
    onRetry: (_retryCount, _error, config) => {
      const call = callOf(config);
      if (!call) return;
      call.calls.waitingForRetry.add(call);
      // axios-retry reads the signal after this hook, to cut its wait short on close().
      config.signal = call.signal;
    },
    // The longer of the backoff and the service's Retry-After (capped by the retry condition).
    retryDelay: (retryNumber, error) => Math.max(retryDelay(retryNumber), retryAfterMs(error)),
    // Each attempt gets the full timeout (section 8), not a share of one budget.
    shouldResetTimeout: true,
  });
  // axios-retry's request hook copies its options onto every attempt's config (three objects
  // and a clock read) and, not being synchronous, would make axios chain a promise per hook.
  // With `shouldResetTimeout` and no `validateResponse` it sets nothing that its error hook does
  // not set from the same options at the first failure; that state then travels with the config
  // from retry to retry. The retry specs (operation-runner.spec.ts) hold it to that.
  instance.interceptors.request.eject(requestInterceptorId);
  const service = new HttpService(instance);
  // Its axios instance holds the Basic token (and a proxy's password) among its defaults.
  printsAsNameOnly(service, 'HttpService of @malipo/nestjs');
  return service;
}

/** How long `close()` waits beyond `timeout` for calls on the wire before it cuts them. */
const CLOSE_GRACE_MS = 1_000;

/** Response headers never copied onto an error. */
const UNSAFE_HEADERS = new Set(['set-cookie', 'authorization', 'proxy-authorization', 'cookie']);

/** What the caller should know when a call may have executed. */
export const MAY_HAVE_EXECUTED =
  'the request may have been executed: check its outcome (webhook or transactions.status) before retrying, and retry only with the same idempotencyKey';

/**
 * The error of a call whose next attempt could not end before its journal deadline
 * ({@link WireCall.sendUntil}): not sent. `mayHaveExecuted` speaks of its earlier attempts.
 */
function sendDeadlineError(
  operationName: string,
  idempotencyKey: string,
  attempts: number,
  mayHaveExecuted: boolean,
): ServiceAPIError {
  const sent =
    attempts === 0
      ? 'was not sent'
      : `was not sent again after ${attempts} attempt${attempts === 1 ? '' : 's'}`;
  return new ServiceAPIError(
    `${operationName} ${sent}: an attempt could not end before the call's journal deadline, after which it counts as in doubt (the process was held up)${mayHaveExecuted ? `; ${MAY_HAVE_EXECUTED}` : ''}`,
    { operation: operationName, idempotencyKey, attempts, code: 'TIMEOUT', mayHaveExecuted },
  );
}

/**
 * The error of a call refused or cut short because the client is closing. `mayHaveExecuted`
 * when an earlier attempt of the call may have been executed (a 5xx or a timeout before the
 * retry that closing cancelled).
 */
export function clientClosedError(
  operationName: string,
  idempotencyKey: string,
  attempts: number,
  mayHaveExecuted = false,
): ServiceAPIError {
  return new ServiceAPIError(
    `${operationName} was not completed: the payments client is shutting down (retry later with the same idempotencyKey)${mayHaveExecuted ? `; ${MAY_HAVE_EXECUTED}` : ''}`,
    {
      operation: operationName,
      idempotencyKey,
      attempts,
      code: 'CLIENT_CLOSED',
      mayHaveExecuted,
    },
  );
}

/**
 * The error of a call that got no answer: a timeout, or a network failure (`networkCode`, such as
 * `ECONNRESET`). `cause` must hold nothing secret (the wire's is redacted).
 * @internal
 */
export function transportError(
  operationName: string,
  idempotencyKey: string,
  attempts: number,
  failure: {
    timedOut: boolean;
    networkCode: string;
    timeoutMs: number | undefined;
    mayHaveExecuted: boolean;
    cause: Error;
  },
): ServiceAPIError {
  const { timedOut, networkCode, timeoutMs, mayHaveExecuted } = failure;
  const tried = `after ${attempts} attempt${attempts === 1 ? '' : 's'}`;
  const reason = timedOut
    ? `no response within ${timeoutMs ?? 'the timeout'}${timeoutMs === undefined ? '' : ' ms'}`
    : `network error ${networkCode}`;
  return new ServiceAPIError(
    `${operationName} failed ${tried}: ${reason}${mayHaveExecuted ? `; ${MAY_HAVE_EXECUTED}` : ' (the request was not sent)'}`,
    {
      operation: operationName,
      idempotencyKey,
      attempts,
      code: timedOut ? 'TIMEOUT' : 'NETWORK_ERROR',
      mayHaveExecuted,
      cause: failure.cause,
    },
  );
}

/**
 * The HTTP wire: the module's axios instance with its retries, the state of calls in flight,
 * `close()`, and the translation of every axios failure into a `ServiceAPIError`.
 */
@Injectable()
export class HttpPaymentsWire extends PaymentsWire {
  private readonly redactor: SecretRedactor;
  private readonly calls = new WireCalls();

  constructor(
    @Inject(PAYMENTS_HTTP_SERVICE) private readonly http: HttpService,
    @Inject(PAYMENTS_RESOLVED_OPTIONS) private readonly options: ResolvedPaymentsOptions,
  ) {
    super();
    this.redactor = credentialsRedactor(options);
  }

  get closing(): boolean {
    return this.calls.closing;
  }

  /** @internal */
  send(wireCall: WireCall): Promise<WireAnswer> {
    const { operation, request, idempotencyKey } = wireCall;
    if (this.calls.closing) return Promise.reject(clientClosedError(operation, idempotencyKey, 0));
    const isPost = request.method === 'POST';
    const call = new PaymentsCall(
      this.calls,
      !isPost || (wireCall.retryAmbiguous ?? this.options.retryAmbiguous),
      wireCall.trace,
      wireCall.sendUntil,
    );
    const config: PaymentsRequestConfig = {
      method: request.method,
      url: request.url,
      data: request.body,
      // Only a POST changes anything; a GET is safe to repeat and carries no key.
      headers: isPost ? { 'Idempotency-Key': idempotencyKey } : undefined,
      paymentsCall: call,
    };
    // The promise API of the module's HttpService instance: its Observable wrapper would add a
    // CancelToken and a subscription per call, and nothing here unsubscribes. One `then` settles
    // the call and forgets it, so a call costs one promise beyond axios's own.
    this.calls.started();
    return this.http.axiosRef.request<string>(config).then(
      (response): WireAnswer => {
        this.calls.settled(call);
        call.attemptTrace?.end({ statusCode: response.status });
        return {
          status: response.status,
          text: typeof response.data === 'string' ? response.data : '',
          attempts: attemptOf(response.config),
          ...(isPost && call.anAttemptMayHaveExecuted
            ? { earlierAttemptMayHaveExecuted: true }
            : {}),
        };
      },
      (error: unknown) => {
        this.calls.settled(call);
        const failure = this.toFailure(wireCall, call, error);
        if (failure instanceof ServiceAPIError) throw failure;
        return failure;
      },
    );
  }

  /**
   * New calls reject with `CLIENT_CLOSED`, calls waiting for a retry reject at once the same way,
   * attempts on the wire finish but are not retried. Resolves when every call has settled and the
   * keep-alive sockets are closed.
   */
  async close(): Promise<void> {
    if (!this.calls.closing) {
      this.calls.closing = true;
      for (const call of this.calls.waitingForRetry) call.abort();
    }
    const settled = this.calls.drained();
    // Every attempt ends by its deadline; the grace only covers the last bytes and the timers.
    let graceTimer: NodeJS.Timeout | undefined;
    const grace = new Promise<void>((resolve) => {
      graceTimer = setTimeout(resolve, this.options.timeout + CLOSE_GRACE_MS);
      graceTimer.unref();
    });
    await Promise.race([settled, grace]);
    clearTimeout(graceTimer);
    const { httpAgent, httpsAgent } = this.http.axiosRef.defaults as {
      httpAgent?: http.Agent;
      httpsAgent?: https.Agent;
    };
    // Destroying the agents also ends any attempt still on a socket.
    httpAgent?.destroy();
    httpsAgent?.destroy();
  }

  /**
   * Turns whatever the HTTP layer threw into a ServiceAPIError that carries no credentials, or,
   * for an error status with its body, into the answer.
   */
  private toFailure(
    wireCall: WireCall,
    call: PaymentsCall,
    error: unknown,
  ): ServiceAPIError | WireAnswer {
    const { operation, idempotencyKey } = wireCall;
    const isPost = wireCall.request.method === 'POST';
    // Set by every failed attempt, this one included (its hook runs before this).
    const earlier = isPost && call.anAttemptMayHaveExecuted;
    const ambiguousNote = isPost ? `; ${MAY_HAVE_EXECUTED}` : '';
    if (!(error instanceof AxiosError)) {
      const reason = this.redactor.text(error instanceof Error ? error.message : String(error));
      return new ServiceAPIError(`${operation}: unexpected failure: ${reason}${ambiguousNote}`, {
        operation,
        idempotencyKey,
        attempts: 1,
        code: 'UNEXPECTED',
        mayHaveExecuted: isPost,
        cause: new Error(reason),
      });
    }
    if (error.code === AxiosError.ERR_CANCELED) {
      // close() or the send deadline aborted it: the cancelled attempt never left, so it is not
      // counted.
      const attempts = attemptOf(error.config) - 1;
      return call.stoppedAtSendDeadline
        ? sendDeadlineError(operation, idempotencyKey, attempts, earlier)
        : clientClosedError(operation, idempotencyKey, attempts, earlier);
    }
    const attempts = attemptOf(error.config);
    const tried = `after ${attempts} attempt${attempts === 1 ? '' : 's'}`;
    const partialStatus = partialResponseStatus(error);
    if (this.calls.closing && (!error.response || partialStatus !== undefined)) {
      // Cut short by the deadline or the sockets' end while the client shuts down.
      const mayHaveExecuted =
        earlier || (isPost && (partialStatus !== undefined || requestWasSent(error)));
      return new ServiceAPIError(
        `${operation} was cut short by the payments client shutting down ${tried}${mayHaveExecuted ? `; ${MAY_HAVE_EXECUTED}` : ' (the request was not sent)'}`,
        {
          operation,
          idempotencyKey,
          attempts,
          ...(partialStatus === undefined ? {} : { status: partialStatus }),
          code: 'CLIENT_CLOSED',
          mayHaveExecuted,
        },
      );
    }
    if (partialStatus !== undefined) {
      return new ServiceAPIError(
        `${operation} failed ${tried}: HTTP ${partialStatus} arrived but its body did not complete (${error.code ?? 'error'})${ambiguousNote}`,
        {
          operation,
          idempotencyKey,
          attempts,
          status: partialStatus,
          code: 'RESPONSE_INCOMPLETE',
          mayHaveExecuted: isPost,
        },
      );
    }
    if (!error.response) {
      const timedOut = isTimeoutError(error);
      const networkCode = timedOut ? 'ETIMEDOUT' : (error.code ?? 'ERR_NETWORK');
      return transportError(operation, idempotencyKey, attempts, {
        timedOut,
        networkCode,
        timeoutMs: this.options.timeout,
        mayHaveExecuted: earlier || (isPost && requestWasSent(error)),
        cause: Object.assign(new Error(this.redactor.text(error.message)), { code: networkCode }),
      });
    }
    // An answer with a body: not a transport failure, the runner reads it.
    const waitMs = retryAfterMs(error);
    return {
      status: error.response.status,
      text: typeof error.response.data === 'string' ? error.response.data : '',
      attempts,
      headers: this.sanitisedHeaders(error.response.headers),
      // Beyond a day, the wait (`1e26` ms, Infinity, the year 9999) is reported as a day: still
      // the longest back-off (payout runs pause for their longest), never a figure an API client
      // could not use.
      ...(waitMs > 0 ? { retryAfterMs: Math.min(waitMs, MAX_REPORTED_RETRY_AFTER_MS) } : {}),
      ...(earlier ? { earlierAttemptMayHaveExecuted: true } : {}),
    };
  }

  /** Headers safe to put on an error: no cookies or credentials, secrets redacted. */
  private sanitisedHeaders(headers: unknown): Record<string, string> {
    const safe: Record<string, string> = {};
    if (typeof headers !== 'object' || headers === null) return safe;
    for (const [name, value] of Object.entries(headers)) {
      const key = name.toLowerCase();
      if (UNSAFE_HEADERS.has(key) || value === undefined || value === null) continue;
      // The name as well: a server can echo a secret as a header's name (`x-debug-<password>`).
      safe[this.redactor.text(key)] = this.redactor.text(
        Array.isArray(value) ? value.join(', ') : String(value),
      );
    }
    return safe;
  }
}

printsAsNameOnly(HttpPaymentsWire.prototype, 'HttpPaymentsWire');

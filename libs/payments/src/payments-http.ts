import * as http from 'node:http';
import * as https from 'node:https';
import { HttpService } from '@nestjs/axios';
import { Logger } from '@nestjs/common';
import axios, {
  AxiosError,
  AxiosInstance,
  AxiosRequestConfig,
  AxiosResponse,
  InternalAxiosRequestConfig,
} from 'axios';
import axiosRetry, { isNetworkError } from 'axios-retry';
import { PAYMENTS_LOGGER_CONTEXT } from './payments.constants';
import type { ResolvedPaymentsOptions } from './payments-options';
import { basicAuthorization, SecretRedactor } from './secret-redactor';
import { LIBRARY_NAME, LIBRARY_VERSION } from './version';

/** First retry waits this long; each next one twice as long (section 8: 200, 400, 800 ms...). */
export const RETRY_BASE_DELAY_MS = 200;
/** Largest response body read, so a broken proxy cannot exhaust memory. */
const MAX_RESPONSE_BYTES = 10 * 1024 * 1024;

/** Wait before retry number `retryNumber` (1-based). */
export function retryDelay(retryNumber: number): number {
  return RETRY_BASE_DELAY_MS * 2 ** (retryNumber - 1);
}

/** Timeouts as axios reports them: ECONNABORTED (legacy) or ETIMEDOUT (transitional.clarifyTimeoutError). */
export function isTimeoutError(error: AxiosError): boolean {
  return !error.response && (error.code === 'ECONNABORTED' || error.code === 'ETIMEDOUT');
}

/**
 * Status of a response whose headers arrived but whose body did not (a timeout or reset while
 * reading it). axios reports such a failure without `response`.
 */
export function partialResponseStatus(error: AxiosError): number | undefined {
  if (error.response) return undefined;
  const request = error.request as { res?: { statusCode?: number } } | undefined;
  return request?.res?.statusCode;
}

/**
 * Section 7/8: 5xx, network failures and timeouts are transient, POST included; any other status is
 * final. axios-retry's default would skip POST on 5xx and every timeout, so it is not used.
 * Once response headers have arrived the service has answered: a failure while reading the body
 * is not retried, since a 2xx may mean the payment was made.
 */
export function isTransientFailure(error: AxiosError): boolean {
  if (error.response) return error.response.status >= 500 && error.response.status <= 599;
  if (error.code === AxiosError.ERR_CANCELED) return false;
  if (partialResponseStatus(error) !== undefined) return false;
  return isTimeoutError(error) || isNetworkError(error);
}

/**
 * State of one logical call, handed to the HTTP layer in the request config. A class, so axios
 * passes the same object to every retry instead of copying it like a plain object.
 */
export class PaymentsCall {
  /** Made at the first retry: a call that succeeds first time pays for no abort signal. */
  private controller: AbortController | undefined;
  /** Between a failed attempt and the next one (the backoff wait). */
  waitingForRetry = false;
  attemptsStarted = 0;
  settled: Promise<unknown> | undefined;

  constructor(
    /** True once the client is closing: no retry may start. */
    readonly stopping: () => boolean,
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
export type PaymentsRequestConfig = AxiosRequestConfig & { paymentsCall?: PaymentsCall };

function callOf(config: AxiosRequestConfig | undefined): PaymentsCall | undefined {
  return (config as PaymentsRequestConfig | undefined)?.paymentsCall;
}

/** 1-based number of the attempt a request config belongs to. */
export function attemptOf(config: InternalAxiosRequestConfig | undefined): number {
  return (config?.['axios-retry']?.retryCount ?? 0) + 1;
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
  const log = (line: string) => logger.log(redactor.text(line));
  const tag = (config: InternalAxiosRequestConfig | undefined) =>
    `[${String(config?.headers?.['Idempotency-Key'] ?? '-')} attempt ${attemptOf(config)}/${maxAttempts}]`;

  instance.interceptors.request.use((config) => {
    log(`${tag(config)} ${config.method?.toUpperCase() ?? 'POST'} ${instance.getUri(config)}`);
    log(`${tag(config)} request body ${describeData(config.data, redactor)}`);
    return config;
  });
  instance.interceptors.response.use(
    (response: AxiosResponse) => {
      log(
        `${tag(response.config)} response HTTP ${response.status} ${response.statusText ?? ''}`.trimEnd(),
      );
      log(`${tag(response.config)} response data ${describeData(response.data, redactor)}`);
      return response;
    },
    (error: Error) => {
      if (error instanceof AxiosError) {
        if (error.response) {
          log(
            `${tag(error.config)} response HTTP ${error.response.status} ${error.response.statusText ?? ''}`.trimEnd(),
          );
          log(`${tag(error.config)} response data ${describeData(error.response.data, redactor)}`);
        } else {
          log(`${tag(error.config)} no response: ${error.code ?? 'ERROR'} ${error.message}`);
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
    timeout: options.timeout,
    headers: {
      Authorization: basicAuthorization(options.apiUsername, options.apiPassword),
      'Content-Type': 'application/json',
      Accept: 'application/json',
      'User-Agent': `${LIBRARY_NAME}/${LIBRARY_VERSION} node/${process.version}`,
    },
    // The body is parsed by the transport, so a 2xx that is not JSON is an error, not a string.
    responseType: 'text',
    transformResponse: [(data: unknown) => data],
    // A payment API does not redirect; following one would resend the credentials.
    maxRedirects: 0,
    maxContentLength: MAX_RESPONSE_BYTES,
    httpAgent: new http.Agent({ keepAlive: true }),
    httpsAgent: new https.Agent({ keepAlive: true }),
  });
  // Registered before axios-retry so that its response hook sees every attempt, not only the last.
  if (options.debug) {
    attachDebugLogging(
      instance,
      new SecretRedactor(options.apiUsername, options.apiPassword),
      options.maxRetries + 1,
    );
  }
  instance.interceptors.request.use((config) => {
    const call = callOf(config);
    if (call) {
      call.waitingForRetry = false;
      // A retry whose wait ended after close() began must not go out.
      if (call.stopping() && call.attemptsStarted > 0) call.abort();
      call.attemptsStarted += 1;
    }
    return config;
  });
  axiosRetry(instance, {
    retries: options.maxRetries,
    retryCondition: (error) => !callOf(error.config)?.stopping() && isTransientFailure(error),
    onRetry: (_retryCount, _error, config) => {
      const call = callOf(config);
      if (!call) return;
      call.waitingForRetry = true;
      // axios-retry reads the signal after this hook, to cut its wait short on close().
      config.signal = call.signal;
    },
    retryDelay,
    // Each attempt gets the full timeout (section 8), not a share of one budget.
    shouldResetTimeout: true,
  });
  return new HttpService(instance);
}

import type { Agent } from 'node:http';
import { HttpService } from '@nestjs/axios';
import { BeforeApplicationShutdown, Inject, Injectable } from '@nestjs/common';
import { AxiosError, AxiosResponse } from 'axios';
import { AuthenticationError, ServiceAPIError } from './errors';
import type { PaymentsOperation } from './operations';
import {
  attemptOf,
  isTimeoutError,
  PaymentsCall,
  PaymentsRequestConfig,
  partialResponseStatus,
} from './payments-http';
import { PAYMENTS_HTTP_SERVICE, PAYMENTS_RESOLVED_OPTIONS } from './payments.constants';
import { ResolvedPaymentsOptions, toDefaults } from './payments-options';
import type { PaymentsCallOptions, PaymentsDefaults } from './payments-options.interface';
import { prepareRequest, resolveIdempotencyKey } from './request-validation';
import { SecretRedactor } from './secret-redactor';
import { fromWireBody, isJsonObject, JsonObject, RESPONSE_FIELD_TYPES, toWireBody } from './wire';

/** `code` of the error a call gets when the client is closing or closed. */
export const CLIENT_CLOSED = 'CLIENT_CLOSED';

/** The error of a call refused or cut short because the client is closing. */
export function clientClosedError(
  operationName: string,
  idempotencyKey: string,
  attempts: number,
): ServiceAPIError {
  return new ServiceAPIError(
    `${operationName} was not completed: the payments client is shutting down (retry later with the same idempotencyKey)`,
    { operation: operationName, idempotencyKey, attempts, code: CLIENT_CLOSED },
  );
}

/** Required response fields (rule 4.2.3) that are absent or empty in `record`. */
export function missingRequiredFields(
  operation: Pick<PaymentsOperation<object, unknown>, 'requiredResponseFields'>,
  record: Record<string, unknown>,
): string[] {
  return operation.requiredResponseFields.filter(
    (field) => record[field] === undefined || record[field] === null || record[field] === '',
  );
}

/** What the caller should know when an answer could not be used. */
const MAY_HAVE_EXECUTED =
  'the request may have been executed: check its status, or retry with the same idempotencyKey';

/**
 * Runs one operation: validation, wire mapping, the HTTP call with retries, response mapping and
 * error translation. Shared by {@link CollectionsService} and {@link PayoutsService}.
 * @internal
 */
@Injectable()
export class PaymentsTransport implements BeforeApplicationShutdown {
  readonly defaults: PaymentsDefaults;
  private readonly redactor: SecretRedactor;
  private readonly inflight = new Set<PaymentsCall>();
  private closing = false;
  private readonly isClosing = () => this.closing;

  constructor(
    @Inject(PAYMENTS_HTTP_SERVICE) private readonly http: HttpService,
    @Inject(PAYMENTS_RESOLVED_OPTIONS) private readonly options: ResolvedPaymentsOptions,
  ) {
    this.defaults = toDefaults(options);
    this.redactor = new SecretRedactor(options.apiUsername, options.apiPassword);
  }

  /** Validates `request`, sends it once (plus retries) and maps the response. Always settles. */
  async execute<TRequest extends object, TResponse>(
    operation: PaymentsOperation<TRequest, TResponse>,
    request: TRequest,
    callOptions?: PaymentsCallOptions,
  ): Promise<TResponse> {
    const prepared = prepareRequest(operation, request, this.defaults);
    const idempotencyKey = resolveIdempotencyKey(operation.requestClass.name, callOptions);
    if (this.closing) throw clientClosedError(operation.name, idempotencyKey, 0);
    const body = toWireBody(prepared, operation.requestFields, operation.channel);

    const call = new PaymentsCall(this.isClosing);
    const settled = this.send(operation, body, idempotencyKey, call);
    call.settled = settled;
    this.inflight.add(call);
    try {
      return await settled;
    } finally {
      this.inflight.delete(call);
    }
  }

  /**
   * Stops the client: new calls reject with `code: 'CLIENT_CLOSED'`, calls waiting for a retry
   * reject at once the same way, attempts on the wire finish but are not retried. Resolves when
   * every call has settled and the keep-alive sockets are closed.
   */
  async close(): Promise<void> {
    if (!this.closing) {
      this.closing = true;
      for (const call of this.inflight) if (call.waitingForRetry) call.abort();
    }
    await Promise.allSettled([...this.inflight].map((call) => call.settled ?? Promise.resolve()));
    const { httpAgent, httpsAgent } = this.http.axiosRef.defaults as {
      httpAgent?: Agent;
      httpsAgent?: Agent;
    };
    httpAgent?.destroy();
    httpsAgent?.destroy();
  }

  /** Nest lifecycle: runs before the HTTP server stops, so in-flight calls can still answer. */
  beforeApplicationShutdown(): Promise<void> {
    return this.close();
  }

  private async send<TRequest extends object, TResponse>(
    operation: PaymentsOperation<TRequest, TResponse>,
    body: JsonObject,
    idempotencyKey: string,
    call: PaymentsCall,
  ): Promise<TResponse> {
    const config: PaymentsRequestConfig = {
      headers: { 'Idempotency-Key': idempotencyKey },
      paymentsCall: call,
    };
    let response: AxiosResponse<string>;
    try {
      // The promise API of the module's HttpService instance: its Observable wrapper would add a
      // CancelToken and a subscription per call, and nothing here unsubscribes.
      response = await this.http.axiosRef.post<string>(operation.path, body, config);
    } catch (error: unknown) {
      throw this.toServiceError(operation.name, idempotencyKey, error);
    }
    return this.toResponse(operation, idempotencyKey, response);
  }

  private toResponse<TRequest extends object, TResponse>(
    operation: PaymentsOperation<TRequest, TResponse>,
    idempotencyKey: string,
    response: AxiosResponse<string>,
  ): TResponse {
    const text = typeof response.data === 'string' ? response.data : '';
    // Parsed first, then redacted, so escaped forms of a secret are caught as well.
    const body = this.redactor.json(text);
    const fail = (message: string, code: string) =>
      new ServiceAPIError(`${operation.name}: ${message}; ${MAY_HAVE_EXECUTED}`, {
        operation: operation.name,
        idempotencyKey,
        attempts: attemptOf(response.config),
        status: response.status,
        code,
        body: body ?? this.redactor.text(text),
      });
    if (!isJsonObject(body)) {
      throw fail(
        `HTTP ${response.status} with a body that is not a JSON object`,
        'INVALID_RESPONSE',
      );
    }
    const record = fromWireBody(body, operation.responseFields);
    const invalid = new Set<string>();
    if (typeof record.success !== 'boolean') invalid.add('success');
    if (record.success === true && typeof record.transactionReference !== 'string') {
      invalid.add('transactionReference');
    }
    for (const field of operation.responseFields) {
      const type = RESPONSE_FIELD_TYPES[field];
      const value = record[field];
      if (type && value !== undefined && value !== null && typeof value !== type)
        invalid.add(field);
    }
    if (invalid.size > 0) {
      throw fail(
        `the response has a missing or mistyped ${[...invalid].join(', ')}`,
        'INVALID_RESPONSE',
      );
    }
    const missing = missingRequiredFields(operation, record);
    if (missing.length > 0) {
      throw fail(`the response has no ${missing.join(', ')}`, 'MISSING_FIELD');
    }
    return record as TResponse;
  }

  /** Turns whatever the HTTP layer threw into a ServiceAPIError that carries no credentials. */
  private toServiceError(
    operationName: string,
    idempotencyKey: string,
    error: unknown,
  ): ServiceAPIError {
    if (!(error instanceof AxiosError)) {
      const reason = this.redactor.text(error instanceof Error ? error.message : String(error));
      return new ServiceAPIError(
        `${operationName}: unexpected failure: ${reason}; ${MAY_HAVE_EXECUTED}`,
        {
          operation: operationName,
          idempotencyKey,
          attempts: 1,
          cause: new Error(reason),
        },
      );
    }
    if (error.code === AxiosError.ERR_CANCELED) {
      // Only close() aborts: the cancelled attempt never left, so it is not counted.
      return clientClosedError(operationName, idempotencyKey, attemptOf(error.config) - 1);
    }
    const attempts = attemptOf(error.config);
    const tried = `after ${attempts} attempt${attempts === 1 ? '' : 's'}`;
    const partialStatus = partialResponseStatus(error);
    if (partialStatus !== undefined) {
      return new ServiceAPIError(
        `${operationName} failed ${tried}: HTTP ${partialStatus} arrived but its body did not complete (${error.code ?? 'error'}); ${MAY_HAVE_EXECUTED}`,
        {
          operation: operationName,
          idempotencyKey,
          attempts,
          status: partialStatus,
          code: 'RESPONSE_INCOMPLETE',
        },
      );
    }
    if (!error.response) {
      const code = isTimeoutError(error) ? 'ETIMEDOUT' : (error.code ?? 'ERR_NETWORK');
      const reason = isTimeoutError(error)
        ? `no response within ${this.options.timeout} ms`
        : `network error ${code}`;
      const cause = Object.assign(new Error(this.redactor.text(error.message)), { code });
      return new ServiceAPIError(`${operationName} failed ${tried}: ${reason}`, {
        operation: operationName,
        idempotencyKey,
        attempts,
        code,
        cause,
      });
    }
    const status = error.response.status;
    const text = typeof error.response.data === 'string' ? error.response.data : '';
    const parsed = this.redactor.json(text);
    const body: unknown = parsed ?? (text === '' ? undefined : this.redactor.text(text));
    const serviceMessage =
      isJsonObject(parsed) && typeof parsed.message === 'string' ? parsed.message : undefined;
    const serviceCode =
      isJsonObject(parsed) && (typeof parsed.code === 'string' || typeof parsed.code === 'number')
        ? String(parsed.code)
        : undefined;
    const ErrorClass = status === 401 ? AuthenticationError : ServiceAPIError;
    return new ErrorClass(
      `${operationName} failed with HTTP ${status} ${tried}${serviceMessage ? `: ${serviceMessage}` : ''}`,
      { operation: operationName, idempotencyKey, attempts, status, code: serviceCode, body },
    );
  }
}

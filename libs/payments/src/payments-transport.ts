import { randomUUID } from 'node:crypto';
import { HttpService } from '@nestjs/axios';
import { Inject, Injectable } from '@nestjs/common';
import { AxiosError, AxiosResponse } from 'axios';
import { firstValueFrom } from 'rxjs';
import { AuthenticationError, PaymentsValidationError, ServiceAPIError } from './errors';
import type { PaymentsOperation } from './operations';
import { attemptOf, isTimeoutError } from './payments-http';
import { PAYMENTS_HTTP_SERVICE, PAYMENTS_RESOLVED_OPTIONS } from './payments.constants';
import { ResolvedPaymentsOptions, toDefaults } from './payments-options';
import type { PaymentsCallOptions, PaymentsDefaults } from './payments-options.interface';
import { prepareRequest } from './request-validation';
import { SecretRedactor } from './secret-redactor';
import { fromWireBody, isJsonObject, toWireBody } from './wire';

/** Printable ASCII without spaces, as a header value must be; long enough for any UUID or order id. */
const IDEMPOTENCY_KEY_PATTERN = /^[\x21-\x7e]{1,255}$/;

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

/**
 * Runs one operation: validation, wire mapping, the HTTP call with retries, response mapping and
 * error translation. Shared by {@link CollectionsService} and {@link PayoutsService}.
 * @internal
 */
@Injectable()
export class PaymentsTransport {
  readonly defaults: PaymentsDefaults;
  private readonly redactor: SecretRedactor;

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
    const idempotencyKey = this.idempotencyKeyFor(operation.requestClass.name, callOptions);
    const body = toWireBody(prepared, operation.requestFields, operation.channel);
    let response: AxiosResponse<string>;
    try {
      response = await firstValueFrom(
        this.http.post<string>(operation.path, body, {
          headers: { 'Idempotency-Key': idempotencyKey },
        }),
      );
    } catch (error: unknown) {
      throw this.toServiceError(operation.name, idempotencyKey, error);
    }
    return this.toResponse(operation, idempotencyKey, response);
  }

  private idempotencyKeyFor(target: string, callOptions: PaymentsCallOptions | undefined): string {
    const key = callOptions?.idempotencyKey;
    if (key === undefined) return randomUUID();
    if (typeof key !== 'string' || !IDEMPOTENCY_KEY_PATTERN.test(key)) {
      throw new PaymentsValidationError(target, [
        {
          field: 'idempotencyKey',
          rule: 'isIdempotencyKey',
          message: 'idempotencyKey must be 1 to 255 printable ASCII characters without spaces',
        },
      ]);
    }
    return key;
  }

  private toResponse<TRequest extends object, TResponse>(
    operation: PaymentsOperation<TRequest, TResponse>,
    idempotencyKey: string,
    response: AxiosResponse<string>,
  ): TResponse {
    const text = this.redactor.text(typeof response.data === 'string' ? response.data : '');
    const body = parseJson(text);
    const fail = (message: string, code: string) =>
      new ServiceAPIError(`${operation.name}: ${message}`, {
        operation: operation.name,
        idempotencyKey,
        attempts: attemptOf(response.config),
        status: response.status,
        code,
        body: body ?? text,
      });
    if (!isJsonObject(body)) {
      throw fail(
        `HTTP ${response.status} with a body that is not a JSON object`,
        'INVALID_RESPONSE',
      );
    }
    const record = fromWireBody(body, operation.responseFields);
    const missing = operation.requiredResponseFields.filter(
      (field) => record[field] === undefined || record[field] === null || record[field] === '',
    );
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
      const reason = error instanceof Error ? error.message : String(error);
      return new ServiceAPIError(
        `${operationName}: unexpected failure: ${this.redactor.text(reason)}`,
        {
          operation: operationName,
          idempotencyKey,
          attempts: 1,
          cause: new Error(this.redactor.text(reason)),
        },
      );
    }
    const attempts = attemptOf(error.config);
    const tried = `after ${attempts} attempt${attempts === 1 ? '' : 's'}`;
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
    const text =
      typeof error.response.data === 'string' ? this.redactor.text(error.response.data) : '';
    const parsed = parseJson(text);
    const body: unknown = parsed ?? (text === '' ? undefined : text);
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

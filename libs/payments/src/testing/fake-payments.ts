import { Inject, Injectable } from '@nestjs/common';
import { ServiceAPIError } from '../errors';
import type { PaymentsOperation, PaymentsOperationName } from '../operations';
import type {
  PaymentsCallOptions,
  PaymentsDefaults,
  WalletType,
} from '../payments-options.interface';
import { clientClosedError, missingRequiredFields } from '../payments-transport';
import { prepareRequest, resolveIdempotencyKey } from '../request-validation';
import { fromWireBody, JsonObject, toWireBody } from '../wire';

/** Options of {@link PaymentsTestingModule}: the defaults the real module would resolve. */
export interface PaymentsTestingOptions {
  defaultUsername?: string;
  defaultCallbackUrl?: string;
  walletType?: WalletType;
  isGlobal?: boolean;
  /** Stand in for the registration of this name (`@InjectPayouts(name)`...). */
  name?: string;
}

export const PAYMENTS_TESTING_OPTIONS = Symbol('PAYMENTS_TESTING_OPTIONS');

/** A call the fakes received, after validation and defaults, as it would have gone on the wire. */
export interface RecordedPaymentsCall {
  readonly operation: PaymentsOperationName;
  /** The validated request, with the username, callbackUrl and walletType defaults applied. */
  readonly request: Record<string, unknown>;
  /** The JSON body the real client would have sent. */
  readonly body: JsonObject;
  readonly idempotencyKey: string;
}

type Scripted = { response: Record<string, unknown> } | { error: Error };

/** The wire body of a canned success, so responses go through the real mapping. */
function cannedBody(
  operation: PaymentsOperationName,
  reference: string,
  request: Record<string, unknown>,
): JsonObject {
  const common = { success: true, message: 'Accepted (fake)', transaction_reference: reference };
  if (operation.startsWith('payouts.')) {
    const channel = operation === 'payouts.mpesa' ? 'MOBILE_MONEY_KE' : 'FAKE';
    return { ...common, status: 'QUEUED', channel, amount: request.amount };
  }
  const paymentMethod =
    { 'collections.mpesa': 'MOBILE_MONEY_KE', 'collections.card': 'card' }[operation as string] ??
    'MOBILE_MONEY';
  return {
    ...common,
    status: 'PENDING',
    tracking_id: `TRK-${reference}`,
    reference,
    result: null,
    payment_method: paymentMethod,
    ...(operation === 'collections.card'
      ? { checkout_url: `https://checkout.fake.invalid/${reference}` }
      : {}),
  };
}

/**
 * The in-memory stand-in for the HTTP transport, provided by {@link PaymentsTestingModule}.
 * The real `CollectionsService`/`PayoutsService` run on top of it, so signatures, validation,
 * defaults and response mapping are those of production; nothing is sent. Program answers with
 * `respondWith`/`failWith`, read what was called from `calls`.
 */
@Injectable()
export class FakePayments {
  readonly defaults: PaymentsDefaults;
  /** Every accepted call, oldest first. Rejected (invalid) requests are not recorded. */
  readonly calls: RecordedPaymentsCall[] = [];
  private readonly once = new Map<PaymentsOperationName, Scripted[]>();
  private readonly always = new Map<PaymentsOperationName, Scripted>();
  private sequence = 0;
  private closed = false;

  constructor(@Inject(PAYMENTS_TESTING_OPTIONS) options: PaymentsTestingOptions) {
    this.defaults = Object.freeze({
      username: options.defaultUsername || undefined,
      callbackUrl: options.defaultCallbackUrl || undefined,
      walletType: options.walletType ?? 'local',
    });
  }

  /** Every later call of `operation` answers with the canned success overlaid with `response`. */
  respondWith(operation: PaymentsOperationName, response: Record<string, unknown>): this {
    this.always.set(operation, { response });
    return this;
  }

  /** The next call of `operation` answers with this response; queued before `respondWith`. */
  respondOnceWith(operation: PaymentsOperationName, response: Record<string, unknown>): this {
    return this.queue(operation, { response });
  }

  /** Every later call of `operation` rejects with `error`. */
  failWith(operation: PaymentsOperationName, error: Error): this {
    this.always.set(operation, { error });
    return this;
  }

  /** The next call of `operation` rejects with `error`. */
  failOnceWith(operation: PaymentsOperationName, error: Error): this {
    return this.queue(operation, { error });
  }

  /** The recorded calls of one operation. */
  callsOf(operation: PaymentsOperationName): RecordedPaymentsCall[] {
    return this.calls.filter((call) => call.operation === operation);
  }

  /** Forgets calls and programmed answers. */
  reset(): void {
    this.calls.length = 0;
    this.once.clear();
    this.always.clear();
    this.closed = false;
  }

  /** Same contract as the real transport: validates, records, answers. */
  async execute<TRequest extends object, TResponse>(
    operation: PaymentsOperation<TRequest, TResponse>,
    request: TRequest,
    callOptions?: PaymentsCallOptions,
  ): Promise<TResponse> {
    const prepared = prepareRequest(operation, request, this.defaults) as Record<string, unknown>;
    const idempotencyKey = resolveIdempotencyKey(operation.requestClass.name, callOptions);
    if (this.closed) throw clientClosedError(operation.name, idempotencyKey, 0);
    this.calls.push({
      operation: operation.name,
      request: { ...prepared },
      body: toWireBody(prepared, operation.requestFields, operation.channel),
      idempotencyKey,
    });
    const scripted = this.once.get(operation.name)?.shift() ?? this.always.get(operation.name);
    await Promise.resolve();
    if (scripted && 'error' in scripted) throw scripted.error;

    const reference = `FAKE-${++this.sequence}`;
    const body = cannedBody(operation.name, reference, prepared);
    const response = { ...fromWireBody(body, operation.responseFields), ...scripted?.response };
    const missing = missingRequiredFields(operation, response);
    if (missing.length > 0) {
      throw new ServiceAPIError(`${operation.name}: the response has no ${missing.join(', ')}`, {
        operation: operation.name,
        idempotencyKey,
        attempts: 1,
        status: 200,
        code: 'MISSING_FIELD',
        body,
      });
    }
    return response as TResponse;
  }

  /** Like the real client: later calls reject with `code: 'CLIENT_CLOSED'`. */
  close(): Promise<void> {
    this.closed = true;
    return Promise.resolve();
  }

  private queue(operation: PaymentsOperationName, scripted: Scripted): this {
    const queue = this.once.get(operation) ?? [];
    queue.push(scripted);
    this.once.set(operation, queue);
    return this;
  }
}

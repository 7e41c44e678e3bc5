import { randomBytes } from 'node:crypto';
import { Inject, Injectable, Optional } from '@nestjs/common';
import type { PaymentsOperationName } from '../operations';
import { PaymentsError } from '../errors';
import {
  clientClosedError,
  isSuccessStatus,
  TIMEOUT_CODES,
  transportError,
} from '../http-payments-wire';
import { IdempotencyKeyRegistry, requestFingerprint } from '../idempotency-keys';
import type { WalletType } from '../payments-options.interface';
import { PaymentsWire } from '../payments-wire';
import type { WireAnswer, WireCall } from '../payments-wire';
import { readServiceError, transactionReferenceOf } from '../wire';
import type { JsonObject } from '../wire';
import type { PaymentsJournalStore } from '../journal/payments-journal.interfaces';

/** Options of {@link PaymentsTestingModule}: the defaults the real module would resolve. */
export interface PaymentsTestingOptions {
  defaultUsername?: string;
  defaultCallbackUrl?: string;
  walletType?: WalletType;
  /** Append `malipo_key` to callback URLs, as the real module does by default. Default true. */
  correlateCallbacks?: boolean;
  isGlobal?: boolean;
  /**
   * Stand in for the registration of this name (`@InjectPayouts(name)`...); its fake is
   * `getFakePaymentsToken(name)`.
   */
  name?: string;
  /**
   * A payments journal store, as `PaymentsModule`'s `journal` option: replays, `IN_DOUBT`, the
   * reconciler and payout runs then work over the fake (its `settle()` gives the look-ups'
   * outcomes).
   */
  journal?: PaymentsJournalStore;
}

export const PAYMENTS_TESTING_OPTIONS = Symbol('PAYMENTS_TESTING_OPTIONS');

/** A call as the real client would have sent it: validated, defaults applied, encoded. */
export interface RecordedPaymentsCall {
  readonly operation: PaymentsOperationName;
  readonly method: 'GET' | 'POST';
  /** Path and query, relative to the base URL. */
  readonly url: string;
  /** The JSON body (POST), exactly as it would have gone on the wire. */
  readonly body?: Record<string, unknown>;
  readonly idempotencyKey: string;
}

/** How a programmed answer comes back: its HTTP status (default: 200, or a refusal's own `status`). */
export interface FakeAnswerOptions {
  httpStatus?: number;
}

type Scripted = { body: JsonObject; httpStatus?: number } | { error: Error };

/** What the fake remembers of an accepted call, for its status look-up. */
interface FakeTransaction {
  readonly amount: unknown;
  readonly currency: unknown;
  readonly type: string;
  readonly channel: string;
  readonly phoneNumber: string;
  /** Milliseconds since the epoch. */
  readonly createdAt: number;
  status: string;
  settledAt?: number;
}

/** A tag of this process and a sequence across every fake in it: references never repeat. */
const REFERENCE_TAG = randomBytes(3).toString('hex').toUpperCase();
let referenceSequence = 0;

function nextFakeReference(suffix: string): string {
  referenceSequence += 1;
  return `FAKE${REFERENCE_TAG}${String(referenceSequence).padStart(8, '0')}${suffix}`;
}

const REFERENCE_SUFFIX: Partial<Record<PaymentsOperationName, 'eR' | 'eW' | 'eS'>> = {
  'collections.mpesa': 'eR',
  'collections.card': 'eR',
  'collections.panAfrican': 'eR',
  'payouts.mpesa': 'eW',
  'payouts.panAfrican': 'eW',
  'payouts.merchant': 'eW',
  'transfers.send': 'eS',
};
const TRANSACTION_TYPE = { eR: 'receipt', eW: 'withdrawal', eS: 'transfer' } as const;

/** The answers' `message`, as the real service words it per operation. */
const SUCCESS_MESSAGE: Partial<Record<PaymentsOperationName, string>> = {
  'collections.mpesa': 'Processed successfully',
  'collections.card': 'Payment request sent successfully',
  'collections.panAfrican': 'processing',
};

/** The status record's `transaction_details.channel` (a pan-African call's follows its account). */
const DETAILS_CHANNEL: Partial<Record<PaymentsOperationName, string>> = {
  'collections.mpesa': 'mobile',
  'collections.card': 'card',
  'payouts.mpesa': 'mobile',
  'payouts.merchant': 'bank',
  'transfers.send': 'p2p',
};

/** The service's answer to a key already used with another request. */
const KEY_REUSED_ANSWER: WireAnswer = {
  status: 409,
  text: JSON.stringify({
    status: 409,
    success: false,
    message: 'Idempotency-Key was already used with a different request',
  }),
  attempts: 1,
};

/** A refusal's body `status` (a number, or a gateway's text) as its HTTP status, when 400–599. */
function httpStatusOf(body: JsonObject): number | undefined {
  const { status } = readServiceError(body);
  return status !== undefined && Number.isInteger(status) && status >= 400 && status <= 599
    ? status
    : undefined;
}

/** Network errors of a connection that was never made: the request was not sent. */
const NOT_CONNECTED_CODES: ReadonlySet<string> = new Set([
  'ECONNREFUSED',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
]);

const FAKE_NETWORK = {
  updated_at: '0001-01-01T00:00:00Z',
  status: 'active',
  country: 'NG',
  min_amount: 100,
  max_amount: 5_000_000,
};

/** The fake's network discovery answer: one network of each kind, whatever the dial code. */
const FAKE_NETWORKS: JsonObject = {
  defaults: [],
  mobile: [
    {
      ...FAKE_NETWORK,
      id: 'fake-mobile-network',
      code: 'FAKEMOMO',
      account_number_type: 'phone',
      name: 'Fake Mobile Money',
      channel_ids: ['fake-mobile-channel'],
      selected_channel_id: 'fake-mobile-channel',
      country_account_number_type: 'NGPHONE',
    },
  ],
  banks: [
    {
      ...FAKE_NETWORK,
      id: 'fake-bank-network',
      code: '000001',
      account_number_type: 'bank',
      name: 'Fake Bank',
      channel_ids: ['fake-bank-channel'],
      selected_channel_id: 'fake-bank-channel',
      country_account_number_type: 'NGBANK',
    },
  ],
};

/**
 * The wire of {@link PaymentsTestingModule}: answers every call from memory with the real
 * service's answer shapes (docs/wire-contract.md), so the services above it run production's
 * validation, encoding, decoding, checks and errors. Program answers with `respondWith` (a wire
 * body overlay, snake_case) or `failWith`, and read what would have been sent from `calls`.
 * The status look-up knows the reference of every answer that accepted a call (`settle` changes
 * its outcome); a queued answer answers its own call, even under a key answered before.
 */
@Injectable()
export class FakePayments extends PaymentsWire {
  /** Every call that reached the wire, oldest first. Invalid requests never do. */
  readonly calls: RecordedPaymentsCall[] = [];
  private readonly once = new Map<PaymentsOperationName, Scripted[]>();
  private readonly always = new Map<PaymentsOperationName, Scripted>();
  private readonly transactions = new Map<string, FakeTransaction>();
  /** The first accepted answer per idempotency key, replayed as the service replays it. */
  private readonly answered = new Map<string, { request: string; answer: WireAnswer }>();
  private isClosed = false;

  constructor(
    @Inject(PAYMENTS_TESTING_OPTIONS) readonly options: PaymentsTestingOptions,
    /** The idempotency keys of the runner this fake serves, which `reset()` forgets. */
    @Optional()
    @Inject(IdempotencyKeyRegistry)
    private readonly idempotencyKeys?: IdempotencyKeyRegistry,
  ) {
    super();
  }

  get closing(): boolean {
    return this.isClosed;
  }

  /**
   * Every later call of `operation` answers the canned body overlaid with `body` (wire keys); a
   * `success: false` body is the answer by itself, under HTTP `status` when that is 400–599.
   */
  respondWith(
    operation: PaymentsOperationName,
    body: Record<string, unknown>,
    options: FakeAnswerOptions = {},
  ): this {
    this.always.set(operation, { body, ...options });
    return this;
  }

  /** The next call of `operation` answers this overlay; queued before `respondWith`. */
  respondOnceWith(
    operation: PaymentsOperationName,
    body: Record<string, unknown>,
    options: FakeAnswerOptions = {},
  ): this {
    return this.queue(operation, { body, ...options });
  }

  /**
   * Every later call of `operation` rejects with `error`: a `PaymentsError` as it is, anything else
   * as the network failure the real wire reports, with `error` as its cause: `TIMEOUT` for a `code`
   * of `ETIMEDOUT` or `ECONNABORTED`, else `NETWORK_ERROR`; `mayHaveExecuted` on a payment unless
   * the code says no connection was made (`ECONNREFUSED`, `ENOTFOUND`...).
   */
  failWith(operation: PaymentsOperationName, error: Error): this {
    this.always.set(operation, { error });
    return this;
  }

  /** The next call of `operation` rejects with `error`, as {@link failWith} says. */
  failOnceWith(operation: PaymentsOperationName, error: Error): this {
    return this.queue(operation, { error });
  }

  /** Sets the outcome the status look-up reports for `reference` (`success`, `failed`...). */
  settle(reference: string, status: string): this {
    const transaction = this.transactions.get(reference);
    if (transaction) {
      transaction.status = status;
      transaction.settledAt = Date.now();
    }
    return this;
  }

  /** The recorded calls of one operation. */
  callsOf(operation: PaymentsOperationName): RecordedPaymentsCall[] {
    return this.calls.filter((call) => call.operation === operation);
  }

  /**
   * Forgets calls, transactions and programmed answers, and reopens the client; the client also
   * forgets the idempotency keys it sent, so a test after `reset()` may reuse an earlier test's key
   * for another request.
   */
  reset(): void {
    this.idempotencyKeys?.clear();
    this.calls.length = 0;
    this.once.clear();
    this.always.clear();
    this.transactions.clear();
    this.answered.clear();
    this.isClosed = false;
  }

  /** Answers `call` as programmed: the services' runner calls it, never a test. @internal */
  send(call: WireCall): Promise<WireAnswer> {
    // Always through a promise, as the real wire settles: a scripted error rejects, never throws.
    return new Promise((resolve) => resolve(this.answer(call)));
  }

  private answer(call: WireCall): WireAnswer {
    if (this.isClosed) throw clientClosedError(call.operation, call.idempotencyKey, 0);
    const { method, url, body } = call.request;
    this.calls.push({
      operation: call.operation,
      method,
      url,
      ...(body ? { body } : {}),
      idempotencyKey: call.idempotencyKey,
    });
    // A queued answer is this call's; a programmed failure stands for the network, before the
    // service; otherwise a repeated key gets the service's replay (docs/wire-contract.md).
    const once = this.once.get(call.operation)?.shift();
    const always = this.always.get(call.operation);
    if (once && 'error' in once) throw this.failure(call, once.error);
    if (!once && always && 'error' in always) throw this.failure(call, always.error);
    const scripted = (once ?? always) as { body: JsonObject; httpStatus?: number } | undefined;
    const request = method === 'POST' ? requestFingerprint(call.operation, call.request) : '';
    const earlier = once || method !== 'POST' ? undefined : this.answered.get(call.idempotencyKey);
    if (earlier) return earlier.request === request ? earlier.answer : KEY_REUSED_ANSWER;
    const { answer, accepted } = this.answerOf(call, scripted);
    if (method === 'POST' && accepted && !this.answered.has(call.idempotencyKey)) {
      // The first accepted answer is kept, as the service keeps it.
      this.answered.set(call.idempotencyKey, { request, answer });
    }
    return answer;
  }

  private answerOf(
    call: WireCall,
    scripted: { body: JsonObject; httpStatus?: number } | undefined,
  ): { answer: WireAnswer; accepted: boolean } {
    // A programmed refusal is the answer by itself, as the service's refusals are: over the canned
    // success it would name a transaction, which only a call that may have executed does.
    if (scripted?.body.success === false) {
      const status = scripted.httpStatus ?? httpStatusOf(scripted.body) ?? 200;
      return {
        answer: { status, text: JSON.stringify(scripted.body), attempts: 1 },
        accepted: false,
      };
    }
    const { body: canned, transaction } = this.cannedBody(call);
    // A canned refusal keeps its HTTP status, as the real service's error answers do.
    const status =
      scripted?.httpStatus ?? (typeof canned.status === 'number' ? canned.status : 200);
    const answered = { ...canned, ...scripted?.body };
    const accepted = isSuccessStatus(status) && answered.success !== false;
    // Only an accepted call is a transaction, under the reference its answer gives (yours, when an
    // overlay sets one), for the status look-up and settle().
    const reference = transactionReferenceOf(answered);
    if (accepted && transaction && reference !== undefined) {
      this.transactions.set(reference, transaction);
    }
    return { answer: { status, text: JSON.stringify(answered), attempts: 1 }, accepted };
  }

  /** A programmed failure as the real wire would reject: always a `PaymentsError`. */
  private failure(call: WireCall, error: unknown): Error {
    if (error instanceof PaymentsError) return error;
    const code = (error as { code?: unknown } | null)?.code;
    const networkCode = typeof code === 'string' ? code : 'ERR_NETWORK';
    return transportError(call.operation, call.idempotencyKey, 1, {
      timedOut: TIMEOUT_CODES.has(networkCode),
      networkCode,
      timeoutMs: undefined,
      // A connection never made sent nothing; any other failure may have come after the body.
      mayHaveExecuted: call.request.method === 'POST' && !NOT_CONNECTED_CODES.has(networkCode),
      cause: error instanceof Error ? error : new Error(String(error)),
    });
  }

  /** Like the real client: later calls reject with `code: 'CLIENT_CLOSED'`. */
  close(): Promise<void> {
    this.isClosed = true;
    return Promise.resolve();
  }

  /** The real service's answer to `call`, in its wire shape (docs/wire-contract.md). */
  private cannedBody(call: WireCall): { body: JsonObject; transaction?: FakeTransaction } {
    const body = call.request.body ?? {};
    const suffix = REFERENCE_SUFFIX[call.operation];
    if (suffix) {
      const reference = nextFakeReference(suffix);
      const bank = call.operation === 'collections.panAfrican' && body.account_name === 'bank';
      const transaction: FakeTransaction = {
        amount: body.amount,
        currency: body.currency ?? 'KES',
        type: TRANSACTION_TYPE[suffix],
        channel:
          DETAILS_CHANNEL[call.operation] ?? (body.account_name === 'bank' ? 'bank' : 'mobile'),
        phoneNumber: typeof body.phone_number === 'string' ? body.phone_number : '',
        // A transfer between accounts settles at once, as the sandbox's does; the rest wait.
        status: suffix === 'eS' ? 'success' : 'pending',
        createdAt: Date.now(),
      };
      const message = SUCCESS_MESSAGE[call.operation] ?? 'Transaction request sent successfully';
      if (suffix === 'eW') {
        const payout = {
          success: true,
          correlator_id: reference,
          message,
          status: 'SUCCESS',
          channel: '',
          amount: 0,
        };
        return { body: payout, transaction };
      }
      const answer = {
        transaction_reference: reference,
        success: true,
        message,
        trackingId: '',
        reference: '',
        result: null,
      };
      if (suffix === 'eS') return { body: answer, transaction };
      const checkout =
        call.operation === 'collections.card' ||
        (call.operation === 'collections.panAfrican' && typeof body.redirect_url === 'string');
      const collection = {
        payment_method: 'mobile',
        status: 'SUCCESS',
        ...(checkout ? { checkout_url: `https://checkout.fake.invalid/${reference}` } : {}),
        ...(bank
          ? {
              bank_account: {
                name: 'Fake Bank',
                branch_code: '',
                account_number: `0${reference.slice(-10, -2)}`,
                account_name: 'Fake Collections',
                account_reference: reference,
              },
            }
          : {}),
        ...answer,
        // The real bank-transfer answer has no message.
        ...(bank ? { message: undefined } : {}),
      };
      return { body: collection, transaction };
    }
    switch (call.operation) {
      case 'transactions.status':
        return { body: this.statusBody(call) };
      case 'balances.all':
        return {
          body: {
            fiat_balance: { balance: 1_000_000, converted_balance: 7692.31, currency: 'KES' },
            onchain_balance: { balance: 10_000, converted_balance: 1_300_000, currency: 'USD' },
          },
        };
      default:
        return { body: FAKE_NETWORKS };
    }
  }

  private statusBody(call: WireCall): JsonObject {
    const reference = decodeURIComponent(call.request.url.split('/').pop() ?? '');
    const transaction = this.transactions.get(reference);
    if (!transaction) return { status: 404, success: false, message: 'transaction not found' };
    const processedAt = transaction.settledAt ?? transaction.createdAt;
    return {
      id: `fake-${reference}`,
      account_id: '',
      billing_currency: '',
      currency: transaction.currency,
      code: reference,
      conversion_rate: 0,
      amount: transaction.amount,
      billing_currency_amount: 0,
      balance: 0,
      type: transaction.type,
      transaction_details: {
        payer: '',
        merchant_id: '',
        phone_number: transaction.phoneNumber,
        processed_at: {
          seconds: Math.floor(processedAt / 1000),
          nanos: (processedAt % 1000) * 1_000_000,
        },
        reason: '',
        channel: transaction.channel,
        account_number: '',
        status: transaction.status,
        receiver: '',
        email_address: '',
      },
      transaction_category: 'fiat',
      user_id: '',
      request_metadata: null,
      created_at: new Date(transaction.createdAt).toISOString(),
    };
  }

  private queue(operation: PaymentsOperationName, scripted: Scripted): this {
    const queue = this.once.get(operation) ?? [];
    queue.push(scripted);
    this.once.set(operation, queue);
    return this;
  }
}

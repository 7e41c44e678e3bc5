import { Inject, Injectable, Optional } from '@nestjs/common';
import type { PaymentsOperationName } from '../operations';
import { clientClosedError } from '../http-payments-wire';
import { IdempotencyKeyRegistry } from '../idempotency-keys';
import type { WalletType } from '../payments-options.interface';
import { PaymentsWire } from '../payments-wire';
import type { WireAnswer, WireCall } from '../payments-wire';
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
  readonly body?: JsonObject;
  readonly idempotencyKey: string;
}

type Scripted = { body: JsonObject } | { error: Error };

/** What the fake remembers of an accepted call, for its status look-up. */
interface FakeTransaction {
  readonly amount: unknown;
  readonly currency: unknown;
  readonly type: string;
  status: string;
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

const FAKE_NETWORK = {
  updated_at: '0001-01-01T00:00:00Z',
  status: 'active',
  country: 'NG',
  min_amount: 100,
  max_amount: 5_000_000,
};

/**
 * The wire of {@link PaymentsTestingModule}: answers every call from memory with the real
 * service's answer shapes (docs/wire-contract.md), so the services above it run production's
 * validation, encoding, decoding, checks and errors. Program answers with `respondWith` (a wire
 * body overlay, snake_case) or `failWith`, and read what would have been sent from `calls`.
 * The status look-up knows every reference the fake handed out (`settle` changes its outcome).
 */
@Injectable()
export class FakePayments extends PaymentsWire {
  /** Every call that reached the wire, oldest first. Invalid requests never do. */
  readonly calls: RecordedPaymentsCall[] = [];
  private readonly once = new Map<PaymentsOperationName, Scripted[]>();
  private readonly always = new Map<PaymentsOperationName, Scripted>();
  private readonly transactions = new Map<string, FakeTransaction>();
  private sequence = 0;
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

  /** Every later call of `operation` answers the canned body overlaid with `body` (wire keys). */
  respondWith(operation: PaymentsOperationName, body: JsonObject): this {
    this.always.set(operation, { body });
    return this;
  }

  /** The next call of `operation` answers this overlay; queued before `respondWith`. */
  respondOnceWith(operation: PaymentsOperationName, body: JsonObject): this {
    return this.queue(operation, { body });
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

  /** Sets the outcome the status look-up reports for `reference` (`success`, `failed`...). */
  settle(reference: string, status: string): this {
    const transaction = this.transactions.get(reference);
    if (transaction) transaction.status = status;
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
    this.isClosed = false;
  }

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
    const scripted = this.once.get(call.operation)?.shift() ?? this.always.get(call.operation);
    if (scripted && 'error' in scripted) throw scripted.error;
    // A programmed refusal is the answer by itself, as the service's refusals are: over the canned
    // success it would name a transaction, which only a call that may have executed does.
    if (scripted?.body?.success === false) {
      return { status: 200, text: JSON.stringify(scripted.body), attempts: 1 };
    }
    const canned = this.cannedBody(call);
    // A canned refusal keeps its HTTP status, as the real service's error answers do.
    const status = typeof canned.status === 'number' ? canned.status : 200;
    return { status, text: JSON.stringify({ ...canned, ...scripted?.body }), attempts: 1 };
  }

  /** Like the real client: later calls reject with `code: 'CLIENT_CLOSED'`. */
  close(): Promise<void> {
    this.isClosed = true;
    return Promise.resolve();
  }

  /** The real service's answer to `call`, in its wire shape. */
  private cannedBody(call: WireCall): JsonObject {
    const body = call.request.body ?? {};
    const suffix = REFERENCE_SUFFIX[call.operation];
    if (suffix) {
      const reference = `FAKE${String(++this.sequence).padStart(8, '0')}${suffix}`;
      this.transactions.set(reference, {
        amount: body.amount,
        currency: body.currency ?? 'KES',
        type: TRANSACTION_TYPE[suffix],
        status: 'success',
      });
      if (suffix === 'eW') {
        const message = 'Transaction request sent successfully';
        return {
          success: true,
          correlator_id: reference,
          message,
          status: 'SUCCESS',
          channel: '',
          amount: 0,
        };
      }
      return {
        payment_method: 'mobile',
        status: 'SUCCESS',
        transaction_reference: reference,
        success: true,
        message: 'Processed successfully',
        trackingId: '',
        reference: '',
        result: null,
        ...(call.operation === 'collections.card'
          ? { checkout_url: `https://checkout.fake.invalid/${reference}` }
          : {}),
      };
    }
    switch (call.operation) {
      case 'transactions.status':
        return this.statusBody(call);
      case 'balances.all':
        return {
          fiat_balance: { balance: 1_000_000, converted_balance: 7692.31, currency: 'KES' },
          onchain_balance: { balance: 10_000, converted_balance: 1_300_000, currency: 'USD' },
        };
      default:
        return {
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
    }
  }

  private statusBody(call: WireCall): JsonObject {
    const reference = decodeURIComponent(call.request.url.split('/').pop() ?? '');
    const transaction = this.transactions.get(reference);
    if (!transaction) return { status: 404, success: false, message: 'transaction not found' };
    return {
      id: `fake-${reference}`,
      currency: transaction.currency,
      code: reference,
      amount: transaction.amount,
      type: transaction.type,
      transaction_details: { status: transaction.status, reason: 'fake', channel: 'mobile' },
      transaction_category: 'fiat',
      request_metadata: null,
      created_at: new Date(0).toISOString(),
    };
  }

  private queue(operation: PaymentsOperationName, scripted: Scripted): this {
    const queue = this.once.get(operation) ?? [];
    queue.push(scripted);
    this.once.set(operation, queue);
    return this;
  }
}

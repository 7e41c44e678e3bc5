import { BeforeApplicationShutdown, Inject, Injectable, Optional } from '@nestjs/common';
import {
  AuthenticationError,
  PaymentsError,
  PaymentsValidationError,
  ServiceAPIError,
} from './errors';
import { IdempotencyKeyRegistry, requestFingerprint } from './idempotency-keys';
import type { PaymentsOperation } from './operations';
import {
  DEFAULT_REGISTRATION_NAME,
  PAYMENTS_REGISTRATION_NAME,
  PAYMENTS_RESOLVED_OPTIONS,
} from './payments.constants';
import {
  clientClosedError,
  errorStatusMayHaveExecuted,
  InFlightCount,
  isSuccessStatus,
  MAY_HAVE_EXECUTED,
  retryDelay,
} from './http-payments-wire';
import {
  deriveFingerprintKey,
  deriveKey,
  derivePayeeKey,
  PaymentsJournal,
} from './journal/payments-journal';
import type { JournalIntent, UnsentSends } from './journal/payments-journal';
import type { PaymentsJournalEntry } from './journal/payments-journal.interfaces';
import { toDefaults } from './payments-options';
import type { ResolvedPaymentsOptions } from './payments-options';
import type { PaymentsCallOptions, PaymentsDefaults } from './payments-options.interface';
import { PaymentsWire } from './payments-wire';
import type { WireAnswer } from './payments-wire';
import {
  assertCallOptionNames,
  hasAtMostCodePoints,
  prepareRequest,
  readField,
  REQUEST_RULES,
  resolveIdempotencyKey,
} from './request-rules';
import { callTracing } from './payments-telemetry';
import type { CallTrace } from './payments-telemetry';
import { credentialsRedactor } from './secret-redactor';
import type { SecretRedactor } from './secret-redactor';
import {
  decodeResponse,
  encodeRequest,
  isJsonObject,
  namesTransaction,
  readServiceError,
  REQUEST_WIRE_KEYS,
} from './wire';
import type { EncodedRequest, JsonObject } from './wire';
import { printsAsNameOnly } from './secret-holders';

/**
 * Answers at least this long (in characters) keep their text rather than their parsed tree until
 * `_raw` is first read. The promise a call resolves was made when the call started and is in the
 * old generation by then: a parsed tree it points to survives every scavenge until a full
 * collection, so a large one would be copied and promoted for nothing (docs/performance.md).
 */
const RAW_PARSED_ON_READ_FROM = 16 * 1024;

/**
 * Replaces `record._raw` by an enumerable accessor that parses and redacts `text` on first read
 * and then becomes the plain data property it stands for.
 */
function parseRawOnRead(record: JsonObject, text: string, redactor: SecretRedactor): void {
  const settle = (value: unknown) =>
    Object.defineProperty(record, '_raw', {
      value,
      enumerable: true,
      writable: true,
      configurable: true,
    });
  Object.defineProperty(record, '_raw', {
    enumerable: true,
    configurable: true,
    get: () => {
      const raw = redactor.json(text);
      settle(raw);
      return raw;
    },
    set: settle,
  });
}

/**
 * A call option of the library's own callers, not of the public API: called once, when the call
 * goes to the wire (after the journal's write-ahead, before the first attempt). Payout runs pace
 * their requests by when they left (docs/payout-runs.md, "Pace").
 * @internal
 */
export const ON_WIRE = Symbol('malipo.onWire');

/**
 * A call option of payout runs: the earlier sends under the key that never went out, and where to
 * tell of this call's own (docs/payout-runs.md, "Run states").
 * @internal
 */
export const UNSENT_SENDS = Symbol('malipo.unsentSends');

/**
 * A call option of payout runs: a key the service refused for good (a 4xx but 401 and 429) is
 * not sent again as a retry, but stops with `ALREADY_REFUSED`. A run created again (its store lost
 * it) reports the item refused as the first run did, rather than pay what someone may have paid
 * in a new run since (docs/payout-runs.md, "The embedded engine and crashes").
 * @internal
 */
export const REFUSALS_STAND = Symbol('malipo.refusalsStand');

/** {@link PaymentsCallOptions} with the library's own {@link ON_WIRE}, {@link UNSENT_SENDS} and {@link REFUSALS_STAND}. @internal */
export interface InternalCallOptions extends PaymentsCallOptions {
  readonly [ON_WIRE]?: () => void;
  readonly [UNSENT_SENDS]?: UnsentSends;
  readonly [REFUSALS_STAND]?: boolean;
}

/**
 * The call options the caller set, read as a request's fields are ({@link readField}): a value
 * found on `Object.prototype` (polluted elsewhere in the app) is none, so that it cannot send an
 * in-doubt call again (`resend`) or give every call one key (`idempotencyKey`).
 */
function ownCallOptions(
  requestClassName: string,
  options: InternalCallOptions,
): InternalCallOptions {
  assertCallOptionNames(requestClassName, options);
  return {
    idempotencyKey: readField(options, 'idempotencyKey') as string | undefined,
    retryAmbiguous: readField(options, 'retryAmbiguous') as boolean | undefined,
    resend: readField(options, 'resend') as boolean | undefined,
    [ON_WIRE]: readField(options, ON_WIRE) as (() => void) | undefined,
    [UNSENT_SENDS]: readField(options, UNSENT_SENDS) as UnsentSends | undefined,
    [REFUSALS_STAND]: readField(options, REFUSALS_STAND) === true,
  };
}

/**
 * `malipo_key` lengthens the callback URL past the bound its field was checked against: the
 * service (and the sandbox) would refuse the call. Refused here, nothing sent.
 * @throws PaymentsValidationError (`callbackUrl`, `maxLength`).
 */
function assertCallbackUrlFits(
  operation: { readonly requestClass: { readonly name: string } },
  encoded: EncodedRequest,
): void {
  const url = encoded.body?.[REQUEST_WIRE_KEYS.callbackUrl];
  if (typeof url !== 'string' || hasAtMostCodePoints(url, REQUEST_RULES.maxUrlLength)) return;
  throw new PaymentsValidationError(operation.requestClass.name, [
    {
      field: 'callbackUrl',
      rule: 'maxLength',
      message: `callbackUrl must be at most ${REQUEST_RULES.maxUrlLength} characters with its malipo_key (the idempotency key) appended: shorten the URL or the key`,
    },
  ]);
}

/** Margin of a send's deadline over its timeouts and retry waits (ms). */
const SEND_BUDGET_MARGIN_MS = 5_000;

/** Ends the trace of a failed call; returns `error`, as it came, for the caller to throw. */
function failed(
  operation: { readonly method: string },
  trace: CallTrace | undefined,
  error: unknown,
): Error {
  trace?.end(
    error instanceof ServiceAPIError
      ? error
      : { code: 'UNEXPECTED', mayHaveExecuted: operation.method === 'POST' },
  );
  return error as Error;
}

/**
 * Runs one operation: validate → encode → `wire.send` → decode and check. Shared by every
 * service; operations differ only by their row in operations.ts.
 *
 * Not exported, yet not marked internal: the build strips what is (`stripInternal`), and
 * the services' constructors name this class in their declarations.
 */
@Injectable()
export class OperationRunner implements BeforeApplicationShutdown {
  readonly defaults: PaymentsDefaults;
  private readonly redactor: SecretRedactor;
  private readonly startTrace = callTracing();

  /** The caller-supplied keys sent by this runner: one registration, one client. */
  private readonly idempotencyKeys: IdempotencyKeyRegistry;

  /** The journal of money-moving calls, when the options have one (docs/journal.md). @internal */
  readonly journal: PaymentsJournal | undefined;
  /** Journaled calls not settled yet: `close()` waits for their last journal write. */
  private readonly journaling = new InFlightCount();
  /** One listener for every journaled call's end: a call pays for one derived promise. */
  private readonly journaledCallEnded = (): void => this.journaling.ended();
  /**
   * How long a send may take, retries and their waits included, plus a margin: a `started` entry
   * older than this was left by a process that died.
   */
  private readonly sendBudgetMs: number;

  /** What redacts this client's credentials, in every form (as in `_raw`). @internal */
  get credentialsRedactor(): SecretRedactor {
    return this.redactor;
  }

  constructor(
    private readonly wire: PaymentsWire,
    @Inject(PAYMENTS_RESOLVED_OPTIONS) private readonly options: ResolvedPaymentsOptions,
    // Given by the testing module, whose FakePayments.reset() clears it; else one per runner.
    @Optional() @Inject(IdempotencyKeyRegistry) idempotencyKeys?: IdempotencyKeyRegistry,
    @Optional() @Inject(PAYMENTS_REGISTRATION_NAME) registrationName?: string,
  ) {
    this.defaults = toDefaults(options);
    this.redactor = credentialsRedactor(options);
    this.idempotencyKeys = idempotencyKeys ?? new IdempotencyKeyRegistry();
    let budget = (options.maxRetries + 1) * options.timeout + SEND_BUDGET_MARGIN_MS;
    for (let retry = 1; retry <= options.maxRetries; retry += 1) {
      budget += Math.max(retryDelay(retry), options.maxRetryAfterMs);
    }
    this.sendBudgetMs = budget;
    this.journal =
      options.journal &&
      new PaymentsJournal(options.journal, {
        account: registrationName ?? DEFAULT_REGISTRATION_NAME,
        fingerprintKey: deriveFingerprintKey(this.keySecret()),
        payeeKey: derivePayeeKey(this.keySecret()),
      });
  }

  /**
   * A key for `purpose`, derived (HKDF) from the account's `journalFingerprintSecret`, else its
   * `apiPassword`: the same on every instance of the account, and unlike the journal's own key.
   * Payout runs derive their item keys with it (docs/payout-runs.md, "Exactly once per item").
   * @internal
   */
  deriveKey(purpose: string): Buffer {
    return deriveKey(this.keySecret(), 'malipo-payments', purpose);
  }

  /**
   * Whether the account's derived keys come from `apiPassword` (no `journalFingerprintSecret`): a
   * rotation of the password changes them.
   * @internal
   */
  keysFromPassword(): boolean {
    return this.options.journalFingerprintSecret === undefined;
  }

  /** What the account's derived keys come from: `journalFingerprintSecret`, else `apiPassword`. */
  private keySecret(): string {
    return this.options.journalFingerprintSecret ?? this.options.apiPassword;
  }

  /**
   * Validates `request`, sends it once (plus retries) and maps the response. Always settles. A
   * POST under a caller's `idempotencyKey` already sent with another request is refused unsent.
   * @internal
   */
  execute<TRequest extends object, TResponse>(
    operation: PaymentsOperation<TRequest, TResponse>,
    request: TRequest,
    givenOptions?: InternalCallOptions,
  ): Promise<TResponse> {
    // Not `async`: a call settles through the wire's promise and one `then`, with no generator
    // and no extra promise per call; what throws before sending still becomes a rejection.
    let prepared: TRequest;
    let idempotencyKey: string;
    let encoded: EncodedRequest;
    let callOptions: InternalCallOptions | undefined;
    try {
      callOptions =
        givenOptions == null
          ? undefined
          : ownCallOptions(operation.requestClass.name, givenOptions);
      prepared = prepareRequest(operation, request, this.defaults);
      idempotencyKey = resolveIdempotencyKey(operation.requestClass.name, callOptions);
      encoded = this.encode(operation, prepared, idempotencyKey);
      // A generated UUID is never reused, so only a caller's key is checked; a GET sends no key.
      // With a journal, the journal holds every POST's key and fingerprint, durably: it checks.
      if (
        callOptions?.idempotencyKey !== undefined &&
        operation.method === 'POST' &&
        this.journal === undefined
      ) {
        this.idempotencyKeys.remember(
          idempotencyKey,
          requestFingerprint(operation.name, encoded),
          operation.requestClass.name,
        );
      }
    } catch (error: unknown) {
      return Promise.reject(this.unpreparable(operation, error));
    }
    if (this.journal !== undefined && operation.method === 'POST') {
      // Refused as the wire would refuse it, before the journal: its store may be closed already.
      if (this.wire.closing) {
        return Promise.reject(clientClosedError(operation.name, idempotencyKey, 0));
      }
      const journaled = this.executeJournaled(
        this.journal,
        operation,
        prepared,
        encoded,
        idempotencyKey,
        callOptions,
      );
      this.journaling.started();
      void journaled.then(this.journaledCallEnded, this.journaledCallEnded);
      return journaled;
    }
    return this.send(operation, prepared, encoded, idempotencyKey, callOptions);
  }

  /**
   * A money-moving call with the journal: its intent written before it is sent, its end after;
   * a key the journal holds is answered or stopped by the rules of docs/journal.md.
   */
  private async executeJournaled<TRequest extends object, TResponse>(
    journal: PaymentsJournal,
    operation: PaymentsOperation<TRequest, TResponse>,
    prepared: TRequest,
    encoded: EncodedRequest,
    idempotencyKey: string,
    callOptions: InternalCallOptions | undefined,
  ): Promise<TResponse> {
    const decision = await journal.begin(
      this.journalIntent(operation, prepared, encoded, idempotencyKey, callOptions),
    );
    if (!decision.send) return this.replay(operation, prepared, decision.entry);
    const sendUntil = Date.parse(decision.written.deadlineAt);
    let response: TResponse;
    try {
      response = await this.send(
        operation,
        prepared,
        encoded,
        idempotencyKey,
        callOptions,
        sendUntil,
      );
    } catch (error) {
      await journal.failed(decision, error);
      throw error;
    }
    await journal.accepted(decision, response as JsonObject, prepared);
    return response;
  }

  /**
   * What rejects a call that could not be prepared, nothing sent: the library's own error as it
   * is; anything else (a getter of the caller's request that throws) as the validation error of
   * an unreadable request, so that every call rejects with a `PaymentsError`.
   */
  private unpreparable(
    operation: { readonly requestClass: { readonly name: string } },
    error: unknown,
  ): PaymentsError {
    if (error instanceof PaymentsError) return error;
    const reason = this.redactor.text(error instanceof Error ? error.message : String(error));
    return new PaymentsValidationError(operation.requestClass.name, [
      { field: 'request', rule: 'isReadable', message: `request could not be read: ${reason}` },
    ]);
  }

  /**
   * `request` as {@link execute} would send it under `idempotencyKey`, nothing sent: every rule,
   * the defaults, and the callback URL's room for `malipo_key` when a key is given. Payout runs
   * check each item so before a run starts (docs/payout-runs.md, "All or nothing").
   * @throws PaymentsValidationError for a request that breaks a rule.
   * @internal
   */
  prepare<TRequest extends object>(
    operation: PaymentsOperation<TRequest, unknown>,
    request: unknown,
    idempotencyKey: string | undefined,
  ): TRequest {
    try {
      const prepared = prepareRequest(operation, request, this.defaults);
      if (idempotencyKey !== undefined) this.encode(operation, prepared, idempotencyKey);
      return prepared;
    } catch (error: unknown) {
      throw this.unpreparable(operation, error);
    }
  }

  /** `prepared` as it goes on the wire under `idempotencyKey`. */
  private encode<TRequest extends object>(
    operation: PaymentsOperation<TRequest, unknown>,
    prepared: TRequest,
    idempotencyKey: string,
  ): EncodedRequest {
    const encoded = encodeRequest(operation, prepared, {
      idempotencyKey,
      correlate: this.options.correlateCallbacks,
    });
    if (this.options.correlateCallbacks) assertCallbackUrlFits(operation, encoded);
    return encoded;
  }

  /** What the journal writes of a call before it is sent. */
  private journalIntent<TRequest extends object>(
    operation: PaymentsOperation<TRequest, unknown>,
    prepared: TRequest,
    encoded: EncodedRequest,
    idempotencyKey: string,
    callOptions: InternalCallOptions | undefined,
  ): JournalIntent {
    // The amount as sent (`10.1 + 0.2` goes as 10.3), as the ledger and the webhook carry it.
    const sent: unknown = encoded.body?.[REQUEST_WIRE_KEYS.amount];
    const amount: unknown =
      typeof sent === 'number' ? sent : (prepared as { amount?: unknown }).amount;
    const currency: unknown = encoded.body?.[REQUEST_WIRE_KEYS.currency];
    const phoneNumber: unknown = (prepared as { phoneNumber?: unknown }).phoneNumber;
    const { accountNumber, businessAccount } = prepared as {
      accountNumber?: unknown;
      businessAccount?: unknown;
    };
    const payeeAccount: unknown = accountNumber ?? businessAccount;
    return {
      idempotencyKey,
      operation: operation.name,
      target: operation.requestClass.name,
      encoded,
      amount: typeof amount === 'number' ? amount : undefined,
      currency: typeof currency === 'string' ? currency : undefined,
      phoneNumber: typeof phoneNumber === 'string' ? phoneNumber : undefined,
      accountNumber: typeof payeeAccount === 'string' ? payeeAccount : undefined,
      budgetMs: this.sendBudgetMs,
      resend: callOptions?.resend === true,
      unsentSends: callOptions?.[UNSENT_SENDS],
      refusalsStand: callOptions?.[REFUSALS_STAND] === true,
    };
  }

  /**
   * Whether `entry` is of another request than `request` under its key (a payout run created again
   * with an edited item; docs/payout-runs.md, "Exactly once per item"): another fingerprint under
   * this journal's key, which other defaults (`correlateCallbacks`, a callback URL) also give; or,
   * fingerprinted with another key (a password rotated without `journalFingerprintSecret`),
   * another operation, amount or currency. False for a request that no longer passes the rules:
   * it cannot be told.
   * @internal
   */
  journalsAnotherRequest(
    operation: PaymentsOperation<object, unknown>,
    request: object,
    entry: PaymentsJournalEntry,
  ): boolean {
    if (this.journal === undefined) return false;
    let intent: JournalIntent;
    try {
      const prepared = prepareRequest(operation, request, this.defaults);
      const encoded = this.encode(operation, prepared, entry.idempotencyKey);
      intent = this.journalIntent(operation, prepared, encoded, entry.idempotencyKey, undefined);
    } catch {
      return false;
    }
    return this.journal.isOfAnotherRequest(entry, intent);
  }

  /**
   * Journals `request` under `idempotencyKey` as `state` with `reason`, sending nothing, unless
   * the key holds an entry already; resolves the entry the key holds afterwards. Payout runs hold
   * `in_doubt` the key of an item whose worker stopped before it journaled the send, and `refused`
   * that of an item cancelled before it was sent (docs/payout-runs.md).
   * @throws PaymentsValidationError for a request that breaks a rule; Error without a journal.
   * @internal
   */
  holdKey(
    operation: PaymentsOperation<object, unknown>,
    request: object,
    idempotencyKey: string,
    state: 'in_doubt' | 'refused',
    reason: string,
  ): Promise<PaymentsJournalEntry> {
    if (this.journal === undefined) return Promise.reject(new Error('No payments journal'));
    let intent: JournalIntent;
    try {
      // Prepared and encoded as `execute()` does, so the entry's fingerprint is the send's.
      const prepared = prepareRequest(operation, request, this.defaults);
      const encoded = this.encode(operation, prepared, idempotencyKey);
      intent = this.journalIntent(operation, prepared, encoded, idempotencyKey, undefined);
    } catch (error: unknown) {
      // eslint-disable-next-line @typescript-eslint/prefer-promise-reject-errors -- rethrown as it came
      return Promise.reject(error);
    }
    return this.journal.hold(intent, state, reason);
  }

  /** The answer of an earlier call under the key, from the journal: `replayed: true`, nothing sent. */
  private replay<TRequest extends object, TResponse>(
    operation: PaymentsOperation<TRequest, TResponse>,
    prepared: TRequest,
    entry: PaymentsJournalEntry,
  ): TResponse {
    // An entry settled by its webhook before any answer came has only its reference.
    const answer = entry.answer ?? {
      success: true,
      message: '',
      status: entry.settledStatus ?? entry.state,
      transaction_reference: entry.reference,
    };
    // A field the first answer had to carry is not asked of an answer the journal rebuilt.
    const decoding =
      operation.response.kind === 'acceptance'
        ? { ...operation.response, required: undefined }
        : operation.response;
    const decoded = decodeResponse({ ...answer }, decoding, prepared);
    if (!decoded.ok) {
      throw new ServiceAPIError(
        `${operation.name}: the journal's answer could not be read (${decoded.problem}); ${MAY_HAVE_EXECUTED}`,
        {
          operation: operation.name,
          idempotencyKey: entry.idempotencyKey,
          attempts: 0,
          code: 'UNEXPECTED',
          mayHaveExecuted: true,
        },
      );
    }
    decoded.record.replayed = true;
    return decoded.record as TResponse;
  }

  /** Sends an encoded call (with the wire's retries) and maps its answer. */
  private send<TRequest extends object, TResponse>(
    operation: PaymentsOperation<TRequest, TResponse>,
    prepared: TRequest,
    encoded: EncodedRequest,
    idempotencyKey: string,
    callOptions: InternalCallOptions | undefined,
    sendUntil?: number,
  ): Promise<TResponse> {
    const trace = this.startTrace?.(operation.name);
    callOptions?.[ON_WIRE]?.();
    // Both wires (HTTP and the testing fake) reject rather than throw, so no guard is needed here.
    return this.wire
      .send({
        operation: operation.name,
        request: encoded,
        idempotencyKey,
        retryAmbiguous: callOptions?.retryAmbiguous,
        trace,
        sendUntil,
      })
      .then(
        (answer) => {
          let response: TResponse;
          try {
            response = this.decodeSafely(operation, prepared, idempotencyKey, answer);
          } catch (error: unknown) {
            throw failed(operation, trace, error);
          }
          trace?.end();
          return response;
        },
        (error: unknown) => {
          throw failed(operation, trace, error);
        },
      );
  }

  /** `decode`, with anything unforeseen turned into a typed error. */
  private decodeSafely<TRequest extends object, TResponse>(
    operation: PaymentsOperation<TRequest, TResponse>,
    prepared: TRequest,
    idempotencyKey: string,
    answer: WireAnswer,
  ): TResponse {
    try {
      return this.decode(operation, prepared, idempotencyKey, answer);
    } catch (error: unknown) {
      if (error instanceof PaymentsError) throw error;
      // A bug of ours or an answer no check foresaw: still a typed error, never a bare one.
      const reason = this.redactor.text(error instanceof Error ? error.message : String(error));
      const isPost = operation.method === 'POST';
      throw new ServiceAPIError(
        `${operation.name}: the answer could not be read (${reason})${isPost ? `; ${MAY_HAVE_EXECUTED}` : ''}`,
        {
          operation: operation.name,
          idempotencyKey,
          attempts: answer.attempts,
          status: answer.status,
          code: 'UNEXPECTED',
          mayHaveExecuted: isPost,
          cause: new Error(reason),
        },
      );
    }
  }

  /**
   * Stops the client: new calls reject with `code: 'CLIENT_CLOSED'`, calls waiting for a retry
   * reject at once the same way, attempts on the wire finish but are not retried. Resolves when
   * every call has settled and the keep-alive sockets are closed.
   */
  async close(): Promise<void> {
    await this.wire.close();
    // The wire settled every call; their last journal writes follow, then the store may close.
    await this.journaling.drained();
    await this.journal?.close();
    await this.journal?.store.close?.();
  }

  /** Nest lifecycle: runs before the HTTP server stops, so in-flight calls can still answer. */
  beforeApplicationShutdown(): Promise<void> {
    return this.close();
  }

  private decode<TRequest extends object, TResponse>(
    operation: PaymentsOperation<TRequest, TResponse>,
    request: TRequest,
    idempotencyKey: string,
    answer: WireAnswer,
  ): TResponse {
    const isPost = operation.method === 'POST';
    // Parsed first, then redacted, so escaped forms of a secret (and forms in another case) are
    // caught as well.
    const body = this.redactor.json(answer.text);
    const succeeded = isSuccessStatus(answer.status);
    // The service's refusal comes under an error status, and sometimes under HTTP 200
    // (docs/wire-contract.md, "Errors on the wire").
    if (!succeeded || (isJsonObject(body) && body.success === false)) {
      throw this.refusal(
        {
          ...this.details(operation, idempotencyKey, answer, body),
          headers: answer.headers,
          retryAfterMs: answer.retryAfterMs,
        },
        body,
        isPost,
        answer.earlierAttemptMayHaveExecuted === true,
      );
    }
    const decoded = isJsonObject(body)
      ? decodeResponse(body, operation.response, request)
      : ({
          ok: false,
          code: 'INVALID_RESPONSE',
          problem: `HTTP ${answer.status} with a body that is not a JSON object`,
        } as const);
    if (decoded.ok) {
      if (answer.text.length >= RAW_PARSED_ON_READ_FROM) {
        parseRawOnRead(decoded.record, answer.text, this.redactor);
      }
      return decoded.record as TResponse;
    }
    // The error's details are built only for an unusable answer: the success path allocates none.
    throw new ServiceAPIError(
      `${operation.name}: ${decoded.problem}${isPost ? `; ${MAY_HAVE_EXECUTED}` : ''}`,
      {
        ...this.details(operation, idempotencyKey, answer, body),
        code: decoded.code,
        mayHaveExecuted: isPost,
      },
    );
  }

  /** What every error about an answer carries: the call, its attempts and the redacted body. */
  private details(
    operation: { readonly name: string },
    idempotencyKey: string,
    answer: WireAnswer,
    body: unknown,
  ) {
    return {
      operation: operation.name,
      idempotencyKey,
      attempts: answer.attempts,
      status: answer.status,
      body: body ?? (answer.text === '' ? undefined : this.redactor.text(answer.text)),
    };
  }

  /** The error of an answer that refuses the call: 401, another error status, or `success: false`. */
  private refusal(
    details: {
      operation: string;
      idempotencyKey: string;
      attempts: number;
      status: number;
      body: unknown;
      headers?: Readonly<Record<string, string>>;
      retryAfterMs?: number;
    },
    body: unknown,
    isPost: boolean,
    earlierMayHaveExecuted: boolean,
  ): ServiceAPIError {
    const { operation, status, attempts } = details;
    const service = readServiceError(body);
    // The service's refusal (a 4xx, or `success: false` under a 2xx) did not execute, unless an
    // earlier attempt (a 5xx, a timeout) may have; a 3xx, 409 or 5xx may come after it executed,
    // and so may any answer whose body says 409 or 5xx (the service's error, not a refusal of the
    // request), names a transaction (a refusal never does), or, under an error status, says the
    // call succeeded.
    const bodySaysMayHaveExecuted =
      service.status !== undefined &&
      service.status >= 400 &&
      service.status <= 599 &&
      errorStatusMayHaveExecuted(service.status);
    const statusSaysMayHaveExecuted = isSuccessStatus(status)
      ? bodySaysMayHaveExecuted || namesTransaction(body)
      : errorStatusMayHaveExecuted(status) ||
        bodySaysMayHaveExecuted ||
        namesTransaction(body) ||
        (isJsonObject(body) && body.success === true);
    const mayHaveExecuted = isPost && (statusSaysMayHaveExecuted || earlierMayHaveExecuted);
    const tried = `after ${attempts} attempt${attempts === 1 ? '' : 's'}`;
    const serviceStatus =
      service.status === undefined || service.status === status
        ? ''
        : ` (service status ${service.status})`;
    const ErrorClass = status === 401 ? AuthenticationError : ServiceAPIError;
    return new ErrorClass(
      `${operation} was refused with HTTP ${status}${serviceStatus} ${tried}${service.message ? `: ${service.message}` : ''}${mayHaveExecuted ? `; ${MAY_HAVE_EXECUTED}` : ''}`,
      {
        ...details,
        code: status === 401 ? 'AUTHENTICATION_FAILED' : 'SERVICE_ERROR',
        mayHaveExecuted,
        serviceStatus: service.status,
        serviceCode: service.code,
        serviceMessage: service.message,
      },
    );
  }
}

printsAsNameOnly(OperationRunner.prototype, 'OperationRunner');

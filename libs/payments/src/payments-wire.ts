import type { PaymentsOperationName } from './operation-names';
import type { EncodedRequest } from './wire';

/** A call as the wire sees it. */
export interface WireCall {
  readonly operation: PaymentsOperationName;
  readonly request: EncodedRequest;
  /** Sent as `Idempotency-Key` on every attempt of a POST. */
  readonly idempotencyKey: string;
  /** Per-call `retryAmbiguous`; absent uses the module option. */
  readonly retryAmbiguous?: boolean;
  /** The call's trace, when OpenTelemetry is installed: each attempt opens a span under it. */
  readonly trace?: CallTracing;
  /**
   * Milliseconds since the epoch: the journal entry's deadline, after which the call counts as in
   * doubt and a person may send it again (docs/journal.md). No retry starts unless its timeout
   * ends before it, however long the process was paused.
   */
  readonly sendUntil?: number;
}

/** What an attempt reports to its trace when it ends. */
export interface AttemptOutcome {
  /** HTTP status of the answer, when one arrived. */
  readonly statusCode?: number;
  /** `error.type`: the status code of an error answer, or a network error code. */
  readonly errorType?: string;
}

/** The trace of one attempt. */
export interface AttemptTracing {
  end(outcome: AttemptOutcome): void;
}

/** The trace of one call, as the wire sees it (no OpenTelemetry types, which are optional). */
export interface CallTracing {
  attempt(method: string, url: string, attempt: number): AttemptTracing;
}

/** The service's answer (any HTTP status): its status and body text, and the attempts it took. */
export interface WireAnswer {
  readonly status: number;
  readonly text: string;
  readonly attempts: number;
  /** Response headers of an error status, lower-case, without cookies or credentials. */
  readonly headers?: Readonly<Record<string, string>>;
  /** The answer's `Retry-After`, in ms from now. */
  readonly retryAfterMs?: number;
  /**
   * An earlier attempt of the call may have been executed (a 5xx, a timeout after sending): a
   * later refusal (a 4xx, `success: false`) then does not prove that nothing was executed.
   */
  readonly earlierAttemptMayHaveExecuted?: boolean;
}

/**
 * The seam between the operations and the network: sends one encoded call (with its retries) and
 * returns the last answer, or rejects with a `ServiceAPIError` when no whole answer came (network
 * failure, timeout, a body cut short, closing). The module provides the HTTP implementation; the testing module a fake with canned
 * answers, so validation, encoding, decoding and checks are production's in tests.
 */
export abstract class PaymentsWire {
  /** Sends `call`: the services' runner calls it, never an app. @internal */
  abstract send(call: WireCall): Promise<WireAnswer>;

  /** Stops sending: later calls reject with `CLIENT_CLOSED`; resolves when every call settled. */
  abstract close(): Promise<void>;

  /** True once `close()` was called. */
  abstract readonly closing: boolean;
}

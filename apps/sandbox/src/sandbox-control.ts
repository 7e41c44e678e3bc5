import type { QueuedFault, RandomFaults } from './faults.service';
import type { RateLimitSettings } from './rate-limit';
import type { Transaction, WebhookDelivery } from './ledger.service';
import type { RequestLogEntry } from './request-log.service';

/** One transaction of the sandbox's ledger, as `GET /__sandbox/transactions` answers it. */
export type SandboxTransaction = Transaction;
/** One webhook delivery attempt of a transaction: `{ attempt, at, status }` or `{ attempt, at, error }`. */
export type SandboxWebhookDelivery = WebhookDelivery;
/** One API request the sandbox received (`GET /__sandbox/requests`), with the fault that hit it. */
export type SandboxRequest = RequestLogEntry;
/** A queued fault as the sandbox keeps it: `remaining` requests to go, defaults filled in. */
export type SandboxQueuedFault = QueuedFault;
/** The random failure rate in force, defaults filled in. */
export type SandboxRandomFaultSettings = RandomFaults;

/**
 * A limit on API requests per second (`PUT /__sandbox/rate-limit`): above `requestsPerSecond`
 * in any one second, API requests are answered 429 with `Retry-After`, unexecuted.
 */
export type SandboxRateLimit = RateLimitSettings;

/** The default account's wallets (`GET /__sandbox/wallets`). */
export interface SandboxWallets {
  /** The local (KES) wallet. */
  local: number;
  /** The USD wallet. */
  USD: number;
  /** KES per USD, fixed (the `usdRate` option). */
  usdRate: number;
}

/** One account and its wallets (`GET /__sandbox/accounts`); the default account first. */
export interface SandboxAccountState {
  username: string;
  apiUsername: string;
  /** The `user_id` of its webhooks. */
  userId: string;
  local: number;
  USD: number;
}

/**
 * A fault for the next `count` API requests (`POST /__sandbox/faults`). Give `status`, `reset`
 * or `delayMs` (or `delayMs` with one of the other two).
 */
export interface SandboxFault {
  /** Number of requests it applies to. Default 1. */
  count?: number;
  /** Answer with this HTTP status (200 to 599) and `body` instead of the real answer. */
  status?: number;
  /**
   * The body sent with `status`. Default the service's error body
   * `{ status, success: false, message: "Injected fault" }`; a string is sent raw.
   */
  body?: unknown;
  /** For a string `body`. Default `text/html; charset=utf-8`. */
  contentType?: string;
  /** Destroy the connection without answering. */
  reset?: boolean;
  /** Wait this long first (at most 120,000 ms); alone, the request is then handled normally. */
  delayMs?: number;
  /** Execute the operation (ledger, idempotency), then answer with the fault: a lost response. */
  afterExecute?: boolean;
  /**
   * Only requests to this route: a POST path (`/api/v2/withdrawal`), `/v2/networks/grouped`,
   * `/api/v1/status/{reference}`, `/api/v1/accounts/{username}/all_balances`, or a concrete path
   * of one of them. Default: any API request.
   */
  path?: string;
}

/** A random failure rate for every API request (`POST /__sandbox/faults/random`). */
export interface SandboxRandomFaults {
  /** Probability from 0 to 1 that a request fails. */
  rate: number;
  /** The statuses picked from. Default `[500, 502, 503, 504]`. */
  statuses?: number[];
  /** Also reset connections. */
  reset?: boolean;
  /** Makes the sequence repeatable. */
  seed?: number;
}

/** The faults in force (`GET /__sandbox/faults`). */
export interface SandboxFaults {
  queued: SandboxQueuedFault[];
  random: SandboxRandomFaultSettings | null;
}

/** A control request: `method` defaults to POST with a `body`, GET without. */
export interface SandboxControlInit {
  method?: string;
  body?: unknown;
}

/** A non-2xx answer of the control API (for example an invalid fault, or an unknown reference). */
export class SandboxControlError extends Error {
  override readonly name = 'SandboxControlError';

  constructor(
    /** The HTTP status of the answer. */
    readonly status: number,
    /** The answer's body, parsed when it is JSON. */
    readonly body: unknown,
    message: string,
  ) {
    super(message);
  }
}

/**
 * A client of the sandbox's control API (`/__sandbox/...`): fault injection, the ledger, wallets,
 * the request log and reset. Callable for any control path (`control('transactions')`), with a
 * typed method for each route. Every call rejects with a {@link SandboxControlError} on a non-2xx
 * answer.
 */
export interface SandboxControl {
  /**
   * Calls `/__sandbox/<path>` and answers its parsed JSON (`undefined` for an empty body).
   * @example await sandbox.control('faults', { body: { status: 503, count: 2 } });
   */
  <T = unknown>(path: string, init?: SandboxControlInit): Promise<T>;
  /** Every transaction, oldest first. */
  transactions(): Promise<SandboxTransaction[]>;
  /** One transaction; rejects with status 404 when unknown. */
  transaction(reference: string): Promise<SandboxTransaction>;
  /** The default account's wallets and the USD rate. */
  wallets(): Promise<SandboxWallets>;
  /** Both accounts and their wallets, the default account first. */
  accounts(): Promise<SandboxAccountState[]>;
  /** Every API request received, oldest first: count a client's attempts and retries with it. */
  requests(): Promise<SandboxRequest[]>;
  /** The queued faults and the random failure rate in force. */
  faults(): Promise<SandboxFaults>;
  /** Queues a fault for the next `fault.count` API requests; answers it as queued. */
  injectFault(fault: SandboxFault): Promise<SandboxQueuedFault>;
  /** Fails a random share of API requests until {@link SandboxControl.clearFaults} or a reset. */
  randomFaults(settings: SandboxRandomFaults): Promise<SandboxRandomFaultSettings>;
  /** Clears the queued faults and the random failure rate. */
  clearFaults(): Promise<void>;
  /** The rate limit in force, or `null` when there is none. */
  rateLimit(): Promise<SandboxRateLimit | null>;
  /**
   * Answers API requests above `limit.requestsPerSecond` with 429 and `Retry-After` (starting a
   * fresh one-second window); answers the limit as set.
   */
  setRateLimit(limit: SandboxRateLimit): Promise<SandboxRateLimit>;
  /** Lifts the rate limit until the next `setRateLimit` (a reset restores the start option's). */
  clearRateLimit(): Promise<void>;
  /**
   * Clears the ledger, request log, faults and idempotency cache, puts both accounts' balances back
   * to the initial ones, puts the rate limit back to the `rateLimit` option's (none by default)
   * and cancels pending webhooks.
   */
  reset(): Promise<void>;
}

/**
 * A control client for a sandbox at `url` (no trailing slash), for example one started apart with
 * `npx malipo-sandbox`. `startSandbox()` answers one as `sandbox.control`.
 */
export function createSandboxControl(url: string): SandboxControl {
  const base = url.replace(/\/+$/, '');
  const call = async <T>(path: string, init: SandboxControlInit = {}): Promise<T> => {
    const method = init.method ?? (init.body === undefined ? 'GET' : 'POST');
    const response = await fetch(`${base}/__sandbox/${path.replace(/^\/+/, '')}`, {
      method,
      headers: init.body === undefined ? undefined : { 'content-type': 'application/json' },
      body: init.body === undefined ? undefined : JSON.stringify(init.body),
    });
    const text = await response.text();
    let body: unknown;
    try {
      body = text === '' ? undefined : JSON.parse(text);
    } catch {
      body = text;
    }
    if (!response.ok) {
      throw new SandboxControlError(
        response.status,
        body,
        `sandbox ${method} ${path}: HTTP ${response.status} ${text}`,
      );
    }
    return body as T;
  };
  return Object.assign(call, {
    transactions: () => call<SandboxTransaction[]>('transactions'),
    transaction: (reference: string) =>
      call<SandboxTransaction>(`transactions/${encodeURIComponent(reference)}`),
    wallets: () => call<SandboxWallets>('wallets'),
    accounts: () => call<SandboxAccountState[]>('accounts'),
    requests: () => call<SandboxRequest[]>('requests'),
    faults: () => call<SandboxFaults>('faults'),
    injectFault: async (fault: SandboxFault) =>
      (await call<{ fault: SandboxQueuedFault }>('faults', { method: 'POST', body: fault })).fault,
    randomFaults: async (settings: SandboxRandomFaults) =>
      (
        await call<{ random: SandboxRandomFaultSettings }>('faults/random', {
          method: 'POST',
          body: settings,
        })
      ).random,
    clearFaults: async () => {
      await call('faults', { method: 'DELETE' });
    },
    rateLimit: async () =>
      (await call<{ rateLimit: SandboxRateLimit | null }>('rate-limit')).rateLimit,
    setRateLimit: async (limit: SandboxRateLimit) =>
      (await call<{ rateLimit: SandboxRateLimit }>('rate-limit', { method: 'PUT', body: limit }))
        .rateLimit,
    clearRateLimit: async () => {
      await call('rate-limit', { method: 'DELETE' });
    },
    reset: async () => {
      await call('reset', { method: 'POST' });
    },
  });
}

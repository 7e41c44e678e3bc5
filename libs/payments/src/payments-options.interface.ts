import type { PaymentsJournalStore } from './journal/payments-journal.interfaces';

/** Wallet that funds a payout: local currency (for example KES) or USD. */
export type WalletType = 'local' | 'USD';

/** The wallet values the service accepts. */
export const WALLET_TYPES: readonly WalletType[] = ['local', 'USD'];

/**
 * Options of {@link PaymentsModule} and {@link createPaymentsClient}
 * (interface document, section 2.1).
 */
export interface PaymentsModuleOptions {
  /** API username for HTTP Basic authentication. Supply it from the environment. */
  apiUsername: string;
  /** API password for HTTP Basic authentication. Supply it from the environment; it is never logged. */
  apiPassword: string;
  /** Base URL of the service. Defaults to {@link DEFAULT_BASE_URL}, the production service. */
  baseUrl?: string | undefined;
  /** Timeout of each request attempt in milliseconds. Default 30000. */
  timeout?: number | undefined;
  /** Default wallet of payouts. Default `"local"`. */
  walletType?: WalletType | undefined;
  /** Webhook URL used when a request's `callbackUrl` is empty. */
  defaultCallbackUrl?: string | undefined;
  /** Account username used when a request's `username` is empty. */
  defaultUsername?: string | undefined;
  /** Log every request attempt and response through Nest's `Logger`. Not for production. Default false. */
  debug?: boolean | undefined;
  /** Retries of transient failures (5xx, network, timeout); 0 disables. Default 2. */
  maxRetries?: number | undefined;
  /**
   * Allow a plain `http://` baseUrl to a host that is not loopback. Off by default: the Basic
   * credentials would cross the network in clear. Loopback (`localhost`, `127.0.0.0/8`, `[::1]`) is always allowed.
   */
  allowInsecureHttp?: boolean | undefined;
  /**
   * Append each call's idempotency key to its `callback_url` as the query parameter `malipo_key`,
   * so the webhook can be matched to the call even when the call's answer was lost. Default true.
   */
  correlateCallbacks?: boolean | undefined;
  /**
   * Retry a POST whose failure is ambiguous (a timeout or reset after the request was sent, a
   * 5xx): the interface document's rule, so default true. Set false for payouts while the
   * service's honouring of `Idempotency-Key` is unconfirmed: only failures before the request was
   * sent are then retried. Overridable per call.
   */
  retryAmbiguous?: boolean | undefined;
  /**
   * Longest `Retry-After` (ms) a retry waits for; a 5xx asking for longer is not retried and
   * its error carries `retryAfterMs`. Default 5000.
   */
  maxRetryAfterMs?: number | undefined;
  /**
   * An explicit HTTP proxy (axios's `proxy` config). Environment proxies (`HTTP_PROXY`) are never
   * used for a plain-http `baseUrl`, since they would see the Basic credentials in clear; an
   * https `baseUrl` may tunnel through them (CONNECT).
   */
  proxy?: PaymentsProxyOptions | undefined;
  /**
   * The payments journal (docs/journal.md): every collection, payout and transfer is written to it
   * before it is sent and as it ends, a repeated key is answered from it, and `PaymentsReconciler`
   * lists and settles what is in doubt. `new InMemoryPaymentsJournal()` for one process (lost on
   * restart), `new RedisPaymentsJournal({ url })` from `@malipo/nestjs/redis` for several
   * instances and crashes, or your own store. Off by default. The client closes the store (its
   * `close()`) when it closes, after its calls have settled.
   */
  journal?: PaymentsJournalStore | undefined;
  /**
   * Key of the journal's request fingerprints (at least 16 characters). Default: derived from
   * `apiPassword`, so every instance of the account agrees; set it to keep fingerprints across a
   * password rotation (after a rotation without it, a key in flight is refused as reused).
   */
  journalFingerprintSecret?: string | undefined;
}

/** An explicit proxy for {@link PaymentsModuleOptions.proxy}. */
export interface PaymentsProxyOptions {
  host: string;
  port: number;
  protocol?: 'http' | 'https';
  auth?: { username: string; password: string };
}

/** The client defaults of section 2.2, as exposed by the services and the client. */
export interface PaymentsDefaults {
  /** From `defaultUsername`. */
  readonly username: string | undefined;
  /** From `defaultCallbackUrl`. */
  readonly callbackUrl: string | undefined;
  /** From `walletType`. */
  readonly walletType: WalletType;
}

/** Per-call options accepted by every operation. */
export interface PaymentsCallOptions {
  /**
   * Idempotency key sent as the `Idempotency-Key` header on every attempt of this call.
   * Default: a new UUID v4 per call. Pass your own (for example your order id) to make
   * a call safe to repeat across process restarts.
   */
  idempotencyKey?: string;
  /** Overrides the module's `retryAmbiguous` for this call (POSTs only; GETs are always retried). */
  retryAmbiguous?: boolean;
  /**
   * With a journal, send the call again although its key's earlier call is `in_doubt` (it may
   * have executed). Only when you know the earlier call did not execute (the service has no
   * record of it): otherwise the money may move twice.
   */
  resend?: boolean;
}

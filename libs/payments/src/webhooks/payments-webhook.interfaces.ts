import type { PaymentsWebhookStore } from './payments-webhook.store';

/** Options of {@link PaymentsWebhookModule} (`forRoot`, or the factory of `forRootAsync`). */
export interface PaymentsWebhookModuleOptions {
  /**
   * Confirm every event with the service's status look-up (`TransactionsService.status`) before a
   * handler runs. Default `true`. The service does not sign its callbacks, so without this anyone
   * who learns the webhook URL can post a fake success. Turning it off logs a warning at boot
   * unless `verify` is set.
   */
  confirm?: boolean;
  /**
   * Name of the `PaymentsModule` registration whose `TransactionsService` confirms events (its
   * `name` extra). Default: the unnamed registration. `PaymentsModule` need not be global nor
   * imported by this module: it is looked up in the whole app at boot, and a name that matches no
   * registration fails the boot (also with `confirm: false`). Whatever it names, a delivery is
   * redacted of the credentials of every registration in the app.
   */
  account?: string;
  /**
   * Claims, remembers processed events and journals the references of each idempotency key.
   * Default: an {@link InMemoryPaymentsWebhookStore} per registration (process-local, bounded).
   * Several instances behind a load balancer need a shared one: `RedisPaymentsWebhookStore` from
   * `@malipo/nestjs/redis`.
   *
   * Who closes it on shutdown: the module closes a store only when the module created it, by
   * calling its `onModuleDestroy()`, else its `close()`, if it has one:
   * - no `store`: the module's default store (nothing to close);
   * - `forRootAsync`: a store the options factory created (`useFactory: (config) => ({ store: new
   *   RedisPaymentsWebhookStore(...) })`) is the module's. A store that is a provider of your app
   *   (injected into the factory) is not: Nest runs its hooks as for any provider;
   * - `forRoot({ store })`: the store existed before the module, so it is yours: close it
   *   yourself, or register it as a provider so that Nest does.
   */
  store?: PaymentsWebhookStore;
  /**
   * How long (ms) a delivery holds its claim on an event while the handlers run. Default 30 000.
   * Keep it above your slowest handler: once it ends, another delivery may run the handlers too.
   * An instance that crashes mid-handler delays the event by at most this: the next delivery
   * after it takes the claim over.
   */
  leaseMs?: number;
  /**
   * Waits (ms) before each re-check of a record that is not final yet (`pending`, `processing`, no
   * status...): the service may post its callback before its own record has settled. Default
   * `[250, 500, 1000, 1250]` (up to 3 s). A record still not final after the last re-check is
   * answered 503, so the service delivers again; `[]` answers 503 at once. Non-negative integers,
   * checked at boot. Keep the sum well below the time the sender waits for an answer.
   */
  pendingRecheckDelaysMs?: readonly number[];
  /**
   * With the payments journal in the app: how long (ms) a delivery that names by `malipo_key` a
   * call being sent (its answer, with the reference, not in yet) waits for that answer before it
   * is answered 503. Default 3 000; 0 answers 503 at once. Such an event is then handled in the
   * same delivery, as it is without the journal, rather than left to the service's next one.
   * At most 5 deliveries of one call wait at once; more are answered 503 at once. Non-negative
   * integer, checked at boot; keep it, with `pendingRecheckDelaysMs`, below the time
   * the sender waits for an answer.
   */
  inFlightHoldMs?: number;
  /**
   * What confirmation may spend at the service: a token bucket of status look-ups (default 10 a
   * second, bursts of 50). A delivery that finds it empty is answered 503 without a look-up (the
   * service delivers it again), so a flood of forged deliveries cannot spend the account's request
   * quota. Shared by every instance when the store offers it (`RedisPaymentsWebhookStore`), else
   * per instance. With the payments journal in the app, only events that match a journal entry
   * draw from it.
   */
  lookupBudget?: PaymentsWebhookLookupBudget;
  /**
   * With the payments journal in the app: the budget of events that match no journal entry (calls
   * made by another system on the same account). Default 1 a second, bursts of 5: they never
   * starve the app's own events.
   */
  foreignLookupBudget?: PaymentsWebhookLookupBudget;
  /**
   * With the payments journal in the app: what to do with an event that matches no journal entry
   * (neither its `malipo_key` nor its reference). `'confirm'` (default) looks it up within
   * `foreignLookupBudget`; `'refuse'` answers 409 without a look-up, for an app whose every call
   * goes through the journal.
   */
  unjournaledEvents?: 'confirm' | 'refuse';
  /**
   * How long (ms) a reference the service said it does not know is answered 409 without another
   * look-up. A reference the payments journal holds is never remembered so. Default 30 000; 0
   * looks every delivery up.
   */
  unknownReferenceTtlMs?: number;
  /**
   * Decides whether a delivery is genuine before anything else (shared secret header, IP
   * allow-list, signature...): false answers 401 and runs nothing. It adds to `confirm`, it does not
   * replace it unless `confirm` is off. `verifyPaymentsSignature({ secrets })` checks the
   * `X-Payd-Connect-Signature` of signed deliveries.
   */
  verify?: (delivery: PaymentWebhookDelivery) => boolean | Promise<boolean>;
}

/** Registration options beside the module options: they shape the route, so they cannot be async. */
export interface PaymentsWebhookModuleExtras {
  /** Route of the callback (the path of your `callbackUrl`). Default `webhooks/payments`. */
  path?: string;
}

/** What `verify` sees of a delivery. */
export interface PaymentWebhookDelivery {
  headers: Record<string, string | string[] | undefined>;
  /** The parsed JSON body. */
  body: unknown;
  /**
   * The body's bytes as received: set when the app was created with `rawBody: true`
   * (`NestFactory.create(AppModule, { rawBody: true })`), which a signature check needs.
   */
  rawBody?: Buffer;
  ip?: string;
  /** The request URL: path and query. */
  url?: string;
}

/** A token bucket of status look-ups: refilled at `perSecond`, holding at most `burst`. */
export interface PaymentsWebhookLookupBudget {
  /** Look-ups a second, on average. */
  perSecond?: number;
  /** Look-ups at once after a quiet spell (a positive integer). */
  burst?: number;
}

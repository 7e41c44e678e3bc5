import {
  Inject,
  Injectable,
  Logger,
  type OnModuleDestroy,
  type OnModuleInit,
} from '@nestjs/common';
import type { TransactionStatus } from '../dto/lookups';
import { PaymentsValidationError } from '../errors';
import { PAYMENTS_WEBHOOK_OPTIONS, PAYMENTS_WEBHOOK_STORE } from '../payments.constants';
import { libraryCounter } from '../payments-telemetry';
import { isUnknownTransaction, recordOutcome } from '../transaction-outcome';
import {
  DEFAULT_FOREIGN_LOOKUP_BUDGET,
  DEFAULT_LOOKUP_BUDGET,
  DEFAULT_UNKNOWN_REFERENCE_TTL_MS,
  PAYMENTS_WEBHOOK_LOGGER_CONTEXT,
} from './payments-webhook.constants';
import { PaymentWebhookBudgetError, PaymentWebhookStoreError } from './payments-webhook.errors';
import type {
  PaymentsWebhookLookupBudget,
  PaymentsWebhookModuleOptions,
} from './payments-webhook.interfaces';
import type { PaymentsWebhookStore } from './payments-webhook.store';
import type { PaymentsWebhookStoreHost } from './payments-webhook.store-host';
import { moduleOptionError } from '../known-options';

/**
 * Which budget a look-up is drawn from: `known` (an event of a journal entry, reference and all:
 * looked up at once, outside the budgets), `main`, or `foreign` (calls made elsewhere).
 */
export type LookupBudgetName = 'known' | 'main' | 'foreign';

/** The budgets that are token buckets. */
type BucketName = Exclude<LookupBudgetName, 'known'>;

/** What a look-up found: the record, or that the service knows no such transaction. */
export type LookupResult =
  | { readonly found: true; readonly record: TransactionStatus }
  /** `remembered`: answered from memory, without asking the service now. */
  | { readonly found: false; readonly remembered: boolean };

/**
 * Whether the look-up's failure means the service knows no transaction with this reference. Any
 * other failure says nothing about the reference: the event may be genuine, so it is not refused
 * as unknown but answered 503, for the service to deliver it again.
 */
function isUnknownReference(error: unknown): boolean {
  // The reference is not even a valid path segment: no transaction can have it.
  return error instanceof PaymentsValidationError || isUnknownTransaction(error);
}

/** References remembered, unknown or final, per registration: bounded against a flood of new ones. */
const REMEMBERED_REFERENCES = 10_000;

/** A final record does not change: kept this long, past any re-delivery of its event. */
const FINAL_RECORD_TTL_MS = 24 * 60 * 60 * 1000;

/**
 * Deliveries that name a journal entry by its key alone (its reference not known yet) are looked
 * up from the main budget this many times per key and window; past it, from the foreign one: the
 * key is in a URL anyone may see, and one key must not drain the budget of the others.
 */
const KEY_ONLY_LOOKUPS = 5;
const KEY_ONLY_WINDOW_MS = 10 * 60 * 1000;

/** At most one warning a minute while the budget refuses deliveries. */
const WARNING_INTERVAL_MS = 60_000;

/** A token bucket in this process: `burst` tokens at most, refilled at `perSecond`. */
export class TokenBucket {
  private tokens: number;
  private at: number;

  constructor(
    private readonly perSecond: number,
    private readonly burst: number,
    private readonly now: () => number = () => performance.now(),
  ) {
    this.tokens = burst;
    this.at = now();
  }

  /** Takes one token; false when none is left. */
  take(): boolean {
    const now = this.now();
    this.tokens = Math.min(this.burst, this.tokens + ((now - this.at) * this.perSecond) / 1000);
    this.at = now;
    if (this.tokens < 1) return false;
    this.tokens -= 1;
    return true;
  }
}

/** A map that forgets its oldest key past `capacity` and each key after its time. */
class ExpiringMap<V> {
  private readonly entries = new Map<string, { value: V; until: number }>();

  constructor(private readonly capacity: number) {}

  get(key: string, now: number): V | undefined {
    const entry = this.entries.get(key);
    if (entry === undefined) return undefined;
    if (entry.until > now) return entry.value;
    this.entries.delete(key);
    return undefined;
  }

  set(key: string, value: V, until: number): void {
    this.entries.delete(key);
    this.entries.set(key, { value, until });
    if (this.entries.size > this.capacity) {
      this.entries.delete(this.entries.keys().next().value as string);
    }
  }
}

/** A budget's option checked at boot, defaults filled in. */
function readBudget(
  name: string,
  value: PaymentsWebhookLookupBudget | undefined,
  defaults: Required<PaymentsWebhookLookupBudget>,
): Required<PaymentsWebhookLookupBudget> {
  const budget = { ...defaults, ...value };
  if (!(Number.isFinite(budget.perSecond) && budget.perSecond > 0)) {
    throw moduleOptionError(
      'PaymentsWebhookModule',
      `${name}.perSecond`,
      'isPositive',
      `${name}.perSecond must be a positive number`,
    );
  }
  if (!(Number.isSafeInteger(budget.burst) && budget.burst >= 1)) {
    throw moduleOptionError(
      'PaymentsWebhookModule',
      `${name}.burst`,
      'isPositiveInteger',
      `${name}.burst must be a positive integer`,
    );
  }
  return budget;
}

/**
 * What the confirmation of webhooks may spend at the service (docs/errors.md, "What a flood of
 * webhooks costs"): status look-ups come out of a token bucket (shared by every instance when the
 * store offers one, as the Redis store does), and a delivery that finds it empty is answered 503
 * and costs nothing. Concurrent deliveries of one reference and budget share one look-up; a
 * reference the service does not know is remembered for a short time (answered 409 without a
 * look-up), a final record for a day; a reference the journal holds is never remembered as unknown.
 */
@Injectable()
export class PaymentsWebhookLookups implements OnModuleInit, OnModuleDestroy {
  private readonly logger = new Logger(PAYMENTS_WEBHOOK_LOGGER_CONTEXT);
  private readonly store: PaymentsWebhookStore;
  private budgets!: Record<BucketName, Required<PaymentsWebhookLookupBudget>>;
  private local!: Record<BucketName, TokenBucket>;
  private unknownTtlMs = DEFAULT_UNKNOWN_REFERENCE_TTL_MS;
  private readonly inFlight = new Map<string, Promise<LookupResult>>();
  private readonly unknown = new ExpiringMap<true>(REMEMBERED_REFERENCES);
  private readonly final = new ExpiringMap<TransactionStatus>(REMEMBERED_REFERENCES);
  private readonly keyOnly = new ExpiringMap<number>(REMEMBERED_REFERENCES);
  private readonly countSpent = libraryCounter(
    'malipo.webhook.lookups',
    'Status look-ups made to confirm webhook events.',
  );
  private readonly countRefused = libraryCounter(
    'malipo.webhook.lookups.refused',
    'Webhook deliveries answered without a status look-up (budget spent, or known unknown).',
  );
  private refusedSinceWarning: Record<BucketName, number> = { main: 0, foreign: 0 };
  private warningTimer?: NodeJS.Timeout;

  constructor(
    @Inject(PAYMENTS_WEBHOOK_OPTIONS) private readonly options: PaymentsWebhookModuleOptions,
    @Inject(PAYMENTS_WEBHOOK_STORE) host: PaymentsWebhookStoreHost,
  ) {
    this.store = host.store;
  }

  /** Checks the budgets' options at boot, so a bad one fails the boot rather than a delivery. */
  onModuleInit(): void {
    this.budgets = {
      main: readBudget('lookupBudget', this.options.lookupBudget, DEFAULT_LOOKUP_BUDGET),
      foreign: readBudget(
        'foreignLookupBudget',
        this.options.foreignLookupBudget,
        DEFAULT_FOREIGN_LOOKUP_BUDGET,
      ),
    };
    this.local = {
      main: new TokenBucket(this.budgets.main.perSecond, this.budgets.main.burst),
      foreign: new TokenBucket(this.budgets.foreign.perSecond, this.budgets.foreign.burst),
    };
    const ttl = this.options.unknownReferenceTtlMs ?? DEFAULT_UNKNOWN_REFERENCE_TTL_MS;
    if (!Number.isSafeInteger(ttl) || ttl < 0) {
      throw moduleOptionError(
        'PaymentsWebhookModule',
        'unknownReferenceTtlMs',
        'isNonNegativeInteger',
        'unknownReferenceTtlMs must be a non-negative integer (ms)',
      );
    }
    this.unknownTtlMs = ttl;
  }

  onModuleDestroy(): void {
    clearTimeout(this.warningTimer);
  }

  /**
   * The service's record of `reference`, or `found: false` when it knows none. From memory when
   * it can; else one look-up shared by the concurrent deliveries of the reference that draw on
   * `budget`, paid from it.
   * @throws PaymentWebhookBudgetError when the budget is spent (nothing was sent).
   * @throws PaymentWebhookStoreError when a shared budget cannot be read.
   * @throws what `lookUp` threw, when it failed for another reason than an unknown reference.
   */
  async lookUp(
    reference: string,
    budget: LookupBudgetName,
    lookUp: () => Promise<TransactionStatus>,
  ): Promise<LookupResult> {
    const now = Date.now();
    const record = this.final.get(reference, now);
    if (record !== undefined) return { found: true, record };
    // A reference the journal holds exists, whatever a forged delivery made us remember.
    if (budget !== 'known' && this.unknown.get(reference, now)) {
      this.countRefused(1, { 'malipo.lookup.reason': 'unknown-reference' });
      return { found: false, remembered: true };
    }
    // By budget too: a delivery must not inherit another budget's refusal (a forged copy's spent
    // foreign budget for the app's own event of the same reference).
    const key = `${budget}:${reference}`;
    const running = this.inFlight.get(key);
    if (running) return running;
    const result = this.spend(reference, budget, lookUp);
    this.inFlight.set(key, result);
    try {
      return await result;
    } finally {
      this.inFlight.delete(key);
    }
  }

  /**
   * The budget of a delivery that names a journal entry by its key alone: the main one for the
   * first {@link KEY_ONLY_LOOKUPS} deliveries of the key in a window, then the foreign one.
   * @internal
   */
  budgetOfKeyOnly(idempotencyKey: string): LookupBudgetName {
    const now = Date.now();
    const seen = this.keyOnly.get(idempotencyKey, now) ?? 0;
    this.keyOnly.set(idempotencyKey, seen + 1, now + KEY_ONLY_WINDOW_MS);
    return seen < KEY_ONLY_LOOKUPS ? 'main' : 'foreign';
  }

  /**
   * Refuses without a look-up: counted and warned about as the budget's refusals are.
   * @internal For events the journal or the options refuse before any look-up.
   */
  refusedWithoutLookUp(reason: string): void {
    this.countRefused(1, { 'malipo.lookup.reason': reason });
  }

  private async spend(
    reference: string,
    budget: LookupBudgetName,
    lookUp: () => Promise<TransactionStatus>,
  ): Promise<LookupResult> {
    if (budget !== 'known' && !(await this.takeToken(reference, budget))) {
      this.countRefused(1, { 'malipo.lookup.reason': 'budget', 'malipo.lookup.budget': budget });
      this.noteRefusal(budget);
      throw new PaymentWebhookBudgetError(reference, budget);
    }
    this.countSpent(1, { 'malipo.lookup.budget': budget });
    let record: TransactionStatus;
    try {
      record = await lookUp();
    } catch (error) {
      if (!isUnknownReference(error)) throw error;
      if (budget !== 'known' && this.unknownTtlMs > 0) {
        this.unknown.set(reference, true, Date.now() + this.unknownTtlMs);
      }
      return { found: false, remembered: false };
    }
    // Only a record of this reference and final: a pending one must be looked at again.
    if (record.code === reference && recordOutcome(record) !== undefined) {
      this.final.set(reference, record, Date.now() + FINAL_RECORD_TTL_MS);
    }
    return { found: true, record };
  }

  private async takeToken(reference: string, budget: BucketName): Promise<boolean> {
    const { perSecond, burst } = this.budgets[budget];
    if (typeof this.store.takeLookupToken !== 'function') return this.local[budget].take();
    try {
      return await this.store.takeLookupToken(`lookups:${budget}`, perSecond, burst);
    } catch (error) {
      throw new PaymentWebhookStoreError(reference, 'takeLookupToken', error);
    }
  }

  /** A warning at once, then at most one a minute with the count refused meanwhile. */
  private noteRefusal(budget: BucketName): void {
    this.refusedSinceWarning[budget] += 1;
    if (this.warningTimer === undefined) this.warn();
  }

  private warn(): void {
    const refused = Object.entries(this.refusedSinceWarning).filter(([, count]) => count > 0);
    this.refusedSinceWarning = { main: 0, foreign: 0 };
    if (refused.length === 0) {
      this.warningTimer = undefined;
      return;
    }
    const spent = refused.map(([name, count]) => {
      const { perSecond, burst } = this.budgets[name as BucketName];
      const option = name === 'main' ? 'lookupBudget' : 'foreignLookupBudget';
      return `${option} (${perSecond}/s, burst ${burst}): ${count} deliver${count === 1 ? 'y' : 'ies'}`;
    });
    this.logger.warn(
      `The webhook look-up budget is spent; answered 503 without a look-up since the last ` +
        `warning: ${spent.join('; ')}. A flood of forged deliveries, or more genuine events than ` +
        'the budget allows (then raise it)',
    );
    this.warningTimer = setTimeout(() => this.warn(), WARNING_INTERVAL_MS);
    this.warningTimer.unref();
  }
}

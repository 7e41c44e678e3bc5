import { assertKnownOptions, moduleOptionError } from '../known-options';
import type { PayoutRunEngineFactory } from './payout-run-engine';
import type { PayoutRunStore } from './payout-run.store';
import { withSecretsHidden } from '../secret-holders';

/**
 * The most a run's `concurrency` and `ratePerSecond` may be, for the module's defaults and each
 * run's own: far above any service limit, and low enough that a careless value (a limit read from
 * the wrong field) cannot open thousands of sockets or make BullMQ's limiter windows too fine.
 */
export const PAYOUT_RUN_PACE_LIMITS = { concurrency: 1_000, ratePerSecond: 10_000 } as const;

/**
 * The longest time a timer of the module may wait (ms): Node fires a longer `setTimeout` after
 * 1 ms, which would turn a slow poll into a busy one.
 */
const MAX_TIMER_MS = 2_147_483_647;

/** Options of `PayoutRunsModule.forRoot` / `forRootAsync`. */
export interface PayoutRunsModuleOptions {
  /** The `name` of the `PaymentsModule` registration whose payouts runs send. Default: the unnamed one. */
  account?: string;
  /**
   * Where runs live. Default: a new {@link InMemoryPayoutRunStore} (lost on restart). With the
   * BullMQ engine, a store every instance shares: `RedisPayoutRunStore`.
   */
  store?: PayoutRunStore;
  /**
   * What executes runs. Default: the embedded engine, in this process (docs/payout-runs.md,
   * "Engines"). `bullmqPayoutRunEngine({ url })` of `@malipo/nestjs/runs/bullmq` runs them on
   * BullMQ, every instance of the app a worker.
   */
  engine?: PayoutRunEngineFactory;
  /** Default `concurrency` of a run, at most 1,000. Default 4. */
  concurrency?: number;
  /** Default `ratePerSecond` of a run, at most 10,000. Default 10. */
  ratePerSecond?: number;
  /** Items a run may hold. Default 100,000. */
  maxItems?: number;
  /** How often accepted and in-doubt items are read from the journal (ms). Default 1000. */
  settlementPollMs?: number;
  /** Least time between two `progress` events of a run (ms). Default 1000. */
  progressIntervalMs?: number;
  /**
   * How long after a run finished its in-doubt items are still read from the journal (ms): then
   * the reconciler and people settle them (the journal still does; the run's copy no longer
   * follows). Default 7 days.
   */
  followInDoubtMs?: number;
  /**
   * Pause a run once this many of its sends in a row (in one process) reached the service and
   * ended in doubt, with no answer: the service may be down, and every further item would be one
   * more payment to settle by hand. `resume()` it once the service is back. 0 never pauses.
   * Default 5.
   */
  pauseAfterInDoubtSends?: number;
  /**
   * How long after an item was accepted (or went in doubt with a reference) the run looks up its
   * status itself (ms), then again at doubling intervals up to 6 hours: an item whose webhook was
   * lost settles, and its run completes, without a scheduled `reconcile()`. 0 never looks up.
   * Default 10 minutes.
   */
  statusLookupAfterMs?: number;
  /**
   * Secret of the item keys (at least 16 characters; docs/payout-runs.md, "Exactly once per
   * item"): each item's idempotency key is an HMAC of the run id and item id under it, so a key
   * seen in a callback URL does not give away the others. Must be the same on every instance and
   * across restarts, or a re-created run would get new keys. Default: derived from the payments
   * module's `journalFingerprintSecret`, else its `apiPassword` (HKDF, another purpose than the
   * journal's); set it to keep keys across a password rotation.
   */
  itemKeySecret?: string;
}

/** The options with their defaults, checked. */
export interface ResolvedPayoutRunsOptions {
  readonly concurrency: number;
  readonly ratePerSecond: number;
  readonly maxItems: number;
  readonly settlementPollMs: number;
  readonly progressIntervalMs: number;
  readonly followInDoubtMs: number;
  readonly pauseAfterInDoubtSends: number;
  readonly statusLookupAfterMs: number;
  readonly itemKeySecret: string | undefined;
}

function positiveInteger(
  name: string,
  value: unknown,
  fallback: number,
  max = Number.MAX_SAFE_INTEGER,
): number {
  if (value === undefined) return fallback;
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 1) {
    throw moduleOptionError(
      'PayoutRunsModule',
      name,
      'isPositiveInteger',
      `${name} must be a positive integer`,
    );
  }
  if (value > max) {
    throw moduleOptionError('PayoutRunsModule', name, 'max', `${name} must be at most ${max}`);
  }
  return value;
}

function itemKeySecret(value: unknown): string | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== 'string' || value.length < 16) {
    throw moduleOptionError(
      'PayoutRunsModule',
      'itemKeySecret',
      'minLength',
      'itemKeySecret must be at least 16 characters',
    );
  }
  return value;
}

/** Every option of the module: a key not here is a typo, refused rather than ignored. */
const OPTION_NAMES: Readonly<Record<keyof PayoutRunsModuleOptions, true>> = {
  account: true,
  store: true,
  engine: true,
  concurrency: true,
  ratePerSecond: true,
  maxItems: true,
  settlementPollMs: true,
  progressIntervalMs: true,
  followInDoubtMs: true,
  pauseAfterInDoubtSends: true,
  statusLookupAfterMs: true,
  itemKeySecret: true,
};

/**
 * @throws PaymentsValidationError naming an option that is not one (a typo such as `ratePerSecound` would leave
 * the default pace), or that is not a positive integer, or above its bound.
 */
export function resolvePayoutRunsOptions(
  options: PayoutRunsModuleOptions,
): ResolvedPayoutRunsOptions {
  assertKnownOptions('PayoutRunsModule', options, OPTION_NAMES);
  const resolved: ResolvedPayoutRunsOptions = {
    concurrency: positiveInteger(
      'concurrency',
      options.concurrency,
      4,
      PAYOUT_RUN_PACE_LIMITS.concurrency,
    ),
    ratePerSecond: positiveInteger(
      'ratePerSecond',
      options.ratePerSecond,
      10,
      PAYOUT_RUN_PACE_LIMITS.ratePerSecond,
    ),
    maxItems: positiveInteger('maxItems', options.maxItems, 100_000),
    settlementPollMs: positiveInteger(
      'settlementPollMs',
      options.settlementPollMs,
      1000,
      MAX_TIMER_MS,
    ),
    progressIntervalMs: positiveInteger(
      'progressIntervalMs',
      options.progressIntervalMs,
      1000,
      MAX_TIMER_MS,
    ),
    followInDoubtMs: positiveInteger(
      'followInDoubtMs',
      options.followInDoubtMs,
      7 * 24 * 60 * 60 * 1000,
      MAX_TIMER_MS,
    ),
    pauseAfterInDoubtSends:
      options.pauseAfterInDoubtSends === 0
        ? 0
        : positiveInteger('pauseAfterInDoubtSends', options.pauseAfterInDoubtSends, 5),
    statusLookupAfterMs:
      options.statusLookupAfterMs === 0
        ? 0
        : positiveInteger(
            'statusLookupAfterMs',
            options.statusLookupAfterMs,
            10 * 60 * 1000,
            MAX_TIMER_MS,
          ),
    itemKeySecret: itemKeySecret(options.itemKeySecret),
  };
  return withSecretsHidden(resolved, ['itemKeySecret']);
}

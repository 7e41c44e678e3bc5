import type { PayoutRunEngineFactory } from './payout-run-engine';
import type { PayoutRunStore } from './payout-run.store';

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
  /** Default `concurrency` of a run. Default 4. */
  concurrency?: number;
  /** Default `ratePerSecond` of a run. Default 10. */
  ratePerSecond?: number;
  /** Items a run may hold. Default 100,000. */
  maxItems?: number;
  /** How often accepted and in-doubt items are read from the journal (ms). Default 1000. */
  settlementPollMs?: number;
  /** Least time between two `progress` events of a run (ms). Default 1000. */
  progressIntervalMs?: number;
}

/** The options with their defaults, checked. */
export interface ResolvedPayoutRunsOptions {
  readonly concurrency: number;
  readonly ratePerSecond: number;
  readonly maxItems: number;
  readonly settlementPollMs: number;
  readonly progressIntervalMs: number;
}

function positiveInteger(name: string, value: unknown, fallback: number): number {
  if (value === undefined) return fallback;
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 1) {
    throw new Error(`The PayoutRunsModule option ${name} must be a positive integer`);
  }
  return value;
}

/** @throws Error naming the option that is not a positive integer. */
export function resolvePayoutRunsOptions(
  options: PayoutRunsModuleOptions,
): ResolvedPayoutRunsOptions {
  return {
    concurrency: positiveInteger('concurrency', options.concurrency, 4),
    ratePerSecond: positiveInteger('ratePerSecond', options.ratePerSecond, 10),
    maxItems: positiveInteger('maxItems', options.maxItems, 100_000),
    settlementPollMs: positiveInteger('settlementPollMs', options.settlementPollMs, 1000),
    progressIntervalMs: positiveInteger('progressIntervalMs', options.progressIntervalMs, 1000),
  };
}

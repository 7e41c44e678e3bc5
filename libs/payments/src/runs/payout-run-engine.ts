import type { Logger } from '@nestjs/common';
import type { PayoutRunEvent } from './payout-run-events';
import type { PayoutRunOutageGuard } from './payout-run-outage-guard';
import type { PayoutRunStatusLookups } from './payout-run-status-lookups';
import type { PayoutRunRecord, PayoutRunStore } from './payout-run.store';
import type { PayoutRunsPayments } from './payout-runs-payments';

/**
 * What executes runs (docs/payout-runs.md, "Engines"). The embedded
 * {@link InProcessPayoutRunEngine} runs them in this process; `BullMQPayoutRunEngine`
 * (`@malipo/nestjs/runs/bullmq`) runs them on BullMQ, every instance a worker, over a shared
 * {@link PayoutRunStore}. An engine may also implement Nest's `onApplicationBootstrap` and
 * `onModuleDestroy`: the module calls them (the BullMQ engine takes up the runs left in Redis
 * at boot, and closes its workers at shutdown before the payments client closes).
 */
export interface PayoutRunEngine {
  /**
   * Begins sending the `queued` items of a run the store holds. Once closing, rejects (an engine
   * of this library with {@link PayoutRunEngineClosedError}) unless it handed the run to another
   * instance.
   */
  start(runId: string): Promise<void>;
  /** Sends nothing new; sends in flight end and are recorded. */
  pause(runId: string): Promise<void>;
  /** Sends the `queued` items again. */
  resume(runId: string): Promise<void>;
  /** Refuses the `queued` items; sent ones are left alone and still followed to their outcome. */
  cancel(runId: string): Promise<void>;
  /** The sends per second of the run now, when this engine knows it. */
  currentRatePerSecond(runId: string): number | undefined;
  /** Stops sending, waits for the sends in flight to be recorded. */
  close(): Promise<void>;
}

/** What the module hands an engine: the store, the payouts, the event sink and the timings. */
export interface PayoutRunEngineContext {
  readonly store: PayoutRunStore;
  readonly payments: PayoutRunsPayments;
  readonly emit: (event: PayoutRunEvent) => void;
  /** How often accepted and in-doubt items are read from the journal (ms). */
  readonly settlementPollMs: number;
  /** Least time between two `progress` events of a run (ms). */
  readonly progressIntervalMs: number;
  /** How long after a run finished its in-doubt items are still read from the journal (ms). */
  readonly followInDoubtMs: number;
  /** Pauses a run after sends in a row ended in doubt (the module's `pauseAfterInDoubtSends`). */
  readonly outageGuard?: PayoutRunOutageGuard;
  /** When a sent item's status is looked up (the module's `statusLookupAfterMs`). */
  readonly statusLookups?: PayoutRunStatusLookups;
}

/**
 * The engine was closing (the app shutting down) when asked to start a run, and will send none of
 * its items: `create()` rejects with `PayoutRunCreationError`, nothing sent.
 * @internal
 */
export class PayoutRunEngineClosedError extends Error {
  override readonly name = 'PayoutRunEngineClosedError';

  constructor(readonly runId: string) {
    super(
      `The payout run engine was closing (the app shutting down): run ${runId} was not started`,
    );
  }
}

/**
 * Makes the engine of a `PayoutRunsModule` (its option `engine`), once the module has its store
 * and payouts: `bullmqPayoutRunEngine({ url })` of `@malipo/nestjs/runs/bullmq` is one.
 */
export type PayoutRunEngineFactory = (context: PayoutRunEngineContext) => PayoutRunEngine;

/**
 * Whether `run` was created through another payment account than `payments` sends from (an app of
 * another `defaultUsername` sharing the store): its items are neither sent nor followed here,
 * which would pay them from this account. A run without an account is any account's.
 */
export function ofAnotherAccount(
  run: PayoutRunRecord,
  payments: Pick<PayoutRunsPayments, 'accountDigest'>,
): boolean {
  return run.account !== undefined && run.account !== payments.accountDigest();
}

/**
 * What an engine says of the runs {@link ofAnotherAccount} it meets: at error level, once per run,
 * however many ticks, jobs or sends meet it.
 */
export class RunsOfAnotherAccount {
  private readonly said = new Set<string>();

  constructor(private readonly logger: Logger) {}

  /** Logs, the first time, that `runId` was created through another payment account. */
  met(runId: string): void {
    if (this.said.has(runId)) return;
    this.said.add(runId);
    this.logger.error(
      `Payout run ${runId} was created through another payment account (another defaultUsername: ` +
        'an app sharing this store): this app sends and follows none of its items. Give each app ' +
        'its own store (keyPrefix) and engine prefix (docs/payout-runs.md)',
    );
  }
}

import type {
  PayoutRunBalanceCheck,
  PayoutRunItem,
  PayoutRunItemState,
  PayoutRunState,
  PayoutRunTotals,
} from './payout-run.interfaces';

/**
 * `PayoutRunStore.createRun` of a run id that is taken: the run exists, or another creation of it
 * is writing. A store of your own rejects with it in that case, and only then.
 */
export class PayoutRunExistsError extends Error {
  override readonly name = 'PayoutRunExistsError';

  constructor(readonly runId: string) {
    super(`The payout run ${runId} exists already, or is being created`);
  }
}

/** A run as its store keeps it (the pace is the engine's, read live). */
export interface PayoutRunRecord {
  readonly runId: string;
  readonly name?: string;
  readonly state: PayoutRunState;
  readonly createdAt: string;
  readonly updatedAt: string;
  readonly finishedAt?: string;
  readonly concurrency: number;
  readonly ratePerSecond: number;
  readonly balanceCheck: PayoutRunBalanceCheck;
  /** 429s answered to the run's sends. */
  readonly rateLimited: number;
  /** A digest of the items as prepared: a second `create()` with the run id must match it. */
  readonly itemsDigest?: string;
  /**
   * A digest of the payment account that created the run (its `defaultUsername`): an engine of
   * another account (an app sharing the store) never sends nor follows its items. A store keeps
   * it as given; a run without one (created by an earlier version) is any account's.
   */
  readonly account?: string;
}

/**
 * An item as its store keeps it: what callers read, plus the request as it will be sent (it holds
 * a phone or account number: a store on shared infrastructure must protect it like the app's
 * database does). The store drops the request once the item is final (`succeeded`, `failed`,
 * `refused`): it is never sent again.
 */
export interface PayoutRunItemRecord extends PayoutRunItem {
  readonly request?: object;
  /**
   * The token of the send that moved the item to `sending`: a worker whose write landed but
   * whose answer was lost (a reconnect, which re-sends the command) finds its own token and sends
   * the item, where it would otherwise leave it `sending`, never sent. A store that does not
   * keep it loses only that recovery.
   */
  readonly sendClaim?: string;
  /**
   * Call ids of the item's sends that never went out although their journal write may have landed
   * (the journal down: its write timed out, and so did its undo), at most the latest
   * {@link MAX_UNSENT_CALL_IDS}. Whichever instance sends the item next tells the journal, which
   * then sends it again instead of holding it in doubt (docs/payout-runs.md, "Run states"). A store
   * that does not keep it loses only that recovery: such an item ends `in_doubt`.
   */
  readonly unsentCallIds?: readonly string[];
}

/** The most {@link PayoutRunItemRecord.unsentCallIds} an item keeps. */
export const MAX_UNSENT_CALL_IDS = 10;

/**
 * The position a cursor of our stores names (the decimal index of an item in the run's order),
 * or the `RangeError` to reject any other text with: `''`, `' 3'`, `'1e1'` or `'0x10'` read as
 * numbers, but no store gave them. Whether the position is inside the run is the store's to check.
 */
export function cursorPosition(cursor: string | undefined): number | RangeError {
  if (cursor === undefined) return 0;
  return /^(?:0|[1-9][0-9]{0,14})$/.test(cursor)
    ? Number(cursor)
    : new RangeError('cursor must be a nextCursor of this run');
}

/** A cursor at or past the end of a run of `count` items: no store gives one (`RangeError`). */
export function pastTheEnd(position: number, count: number): RangeError | undefined {
  return position > 0 && position >= count
    ? new RangeError('cursor must be a nextCursor of this run')
    : undefined;
}

/** Item states after which an item is never sent: its store drops its request. */
export const FINAL_ITEM_STATES: readonly PayoutRunItemState[] = ['succeeded', 'failed', 'refused'];

/** What {@link PayoutRunStore.updateItem} may change. */
export type PayoutRunItemChange = Partial<
  Pick<
    PayoutRunItemRecord,
    'state' | 'reason' | 'reference' | 'sends' | 'sendClaim' | 'unsentCallIds'
  >
>;

/** What {@link PayoutRunStore.updateRun} may change. */
export type PayoutRunChange = Partial<
  Pick<PayoutRunRecord, 'state' | 'finishedAt' | 'rateLimited'>
>;

/**
 * The condition of a {@link PayoutRunStore.updateRun}: the run is in one of `states`, and with
 * `unfinished`, has no `finishedAt` yet. Of several instances finishing or pausing a run at once,
 * one wins (docs/payout-runs.md, "Engines").
 */
export interface PayoutRunCondition {
  readonly states?: readonly PayoutRunState[];
  readonly unfinished?: boolean;
}

/** Counts and totals of a run's items, kept as items change (never by reading every item). */
export interface PayoutRunSummary {
  counts: Record<PayoutRunItemState, number>;
  totals: PayoutRunTotals;
}

/**
 * Where runs and their items live: the engine writes each item's state here before and after
 * each send, and every read of the service comes from here. The embedded default is
 * {@link InMemoryPayoutRunStore}; a shared store (`RedisPayoutRunStore` of
 * `@malipo/nestjs/runs/bullmq`) makes runs readable from every instance. The contract (checked by
 * `payoutRunStoreConformance()` of `@malipo/nestjs/testing`):
 * - `updateItem` with `from` is atomic: of two updates from the same state, one wins, so one
 *   worker sends an item; with `runStates` it also checks the run's state in the same step (an
 *   item is never moved to `sending` once `pause` or `cancel` was stored); `updateRun` with
 *   `when` likewise;
 * - counts and totals per state are kept as items change, in integer minor units;
 * - an item's request is dropped once it is final;
 * - `createRun` of a run id that exists, or that another `createRun` is writing, rejects with
 *   {@link PayoutRunExistsError}: the service then waits for that run and answers it (a double
 *   click), where any other rejection is answered at once as a failed creation;
 * - a method that cannot do its work rejects.
 */
export interface PayoutRunStore {
  /**
   * Adds a run and its items (all `queued`), in the order they were given.
   * @throws PayoutRunExistsError when the run id exists, or another `createRun` of it is writing.
   */
  createRun(run: PayoutRunRecord, items: readonly PayoutRunItemRecord[]): Promise<void>;
  getRun(runId: string): Promise<PayoutRunRecord | undefined>;
  /**
   * Changes a run if it meets `when` (always when absent), atomically; resolves with it as
   * stored, or `undefined` when there is no such run or it did not meet `when`.
   */
  updateRun(
    runId: string,
    change: PayoutRunChange,
    when?: PayoutRunCondition,
  ): Promise<PayoutRunRecord | undefined>;
  getItem(runId: string, itemId: string): Promise<PayoutRunItemRecord | undefined>;
  /**
   * Changes an item if it is in one of the states `from` (any state when absent) and its run in
   * one of `runStates` (any when absent), atomically; resolves with it as stored, or `undefined`
   * when either condition failed or it does not exist.
   */
  updateItem(
    runId: string,
    itemId: string,
    change: PayoutRunItemChange,
    from?: readonly PayoutRunItemState[],
    runStates?: readonly PayoutRunState[],
  ): Promise<PayoutRunItemRecord | undefined>;
  /**
   * Items in the order they were given, from `cursor`, at most `limit`, in one of `states`. A
   * cursor this store did not give rejects with a `RangeError`, which the service answers as a
   * `PaymentsValidationError` on `cursor`.
   */
  listItems(
    runId: string,
    query: { states?: readonly PayoutRunItemState[]; cursor?: string; limit: number },
  ): Promise<{ items: PayoutRunItemRecord[]; nextCursor?: string }>;
  summary(runId: string): Promise<PayoutRunSummary>;
  /** Releases connections; `PayoutRunsModule` calls it at shutdown, after its engine closed. */
  close?(): Promise<void>;
}

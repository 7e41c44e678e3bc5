import type { PayoutRun, PayoutRunItem } from './payout-run.interfaces';

/**
 * - `item.settled`: an item reached `succeeded`, `failed`, `refused` or `in_doubt` (an in-doubt
 *   item settled later by its webhook or the reconciler is announced again);
 * - `progress`: the counts changed (at most once per `progressIntervalMs` per run);
 * - `completed`: no item is left queued, sending or accepted (a cancelled run too).
 */
export type PayoutRunEventName = 'item.settled' | 'progress' | 'completed';

/** Every event name. */
export const PAYOUT_RUN_EVENTS: readonly PayoutRunEventName[] = [
  'item.settled',
  'progress',
  'completed',
];

/** An item reached an end state (see {@link PayoutRunEventName}). */
export interface PayoutRunItemSettledEvent {
  readonly event: 'item.settled';
  readonly runId: string;
  readonly item: PayoutRunItem;
}

/** The run's counts changed. */
export interface PayoutRunProgressEvent {
  readonly event: 'progress';
  readonly run: PayoutRun;
}

/** Nothing is left queued, sending or accepted. */
export interface PayoutRunCompletedEvent {
  readonly event: 'completed';
  readonly run: PayoutRun;
}

/** What an `@OnPayoutRunEvent()` method receives. */
export type PayoutRunEvent =
  PayoutRunItemSettledEvent | PayoutRunProgressEvent | PayoutRunCompletedEvent;

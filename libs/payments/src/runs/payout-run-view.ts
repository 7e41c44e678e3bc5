import type { PayoutRun, PayoutRunItem } from './payout-run.interfaces';
import type { PayoutRunItemRecord, PayoutRunRecord, PayoutRunSummary } from './payout-run.store';

/** A run as callers read it: the stored record, its counts and totals, and the pace now. */
export function toPayoutRun(
  record: PayoutRunRecord,
  summary: PayoutRunSummary,
  currentRatePerSecond: number,
): PayoutRun {
  return {
    runId: record.runId,
    ...(record.name === undefined ? {} : { name: record.name }),
    state: record.state,
    createdAt: record.createdAt,
    updatedAt: record.updatedAt,
    ...(record.finishedAt === undefined ? {} : { finishedAt: record.finishedAt }),
    concurrency: record.concurrency,
    ratePerSecond: record.ratePerSecond,
    counts: summary.counts,
    totals: summary.totals,
    pace: { currentRatePerSecond, rateLimited: record.rateLimited },
    balanceCheck: record.balanceCheck,
  };
}

/**
 * An item as callers read it: without its request, which holds the receiver's numbers, nor the
 * engine's send claim and unsent sends.
 */
export function toPayoutRunItem(record: PayoutRunItemRecord): PayoutRunItem {
  const {
    request: _request,
    sendClaim: _sendClaim,
    unsentCallIds: _unsentCallIds,
    ...item
  } = record;
  return item;
}

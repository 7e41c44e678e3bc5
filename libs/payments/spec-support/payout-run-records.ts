import type { PayoutRunEngineContext } from '../src/runs/payout-run-engine';
import type { PayoutRunsPayments } from '../src/runs/payout-runs-payments';
import type { PayoutRunItemState } from '../src/runs/payout-run.interfaces';
import type {
  PayoutRunItemRecord,
  PayoutRunRecord,
  PayoutRunStore,
} from '../src/runs/payout-run.store';

/** A stored run as `create()` writes it: running, one at a time, one per second. */
export function runRecord(runId: string, changes: Partial<PayoutRunRecord> = {}): PayoutRunRecord {
  return {
    runId,
    state: 'running',
    createdAt: 'now',
    updatedAt: 'now',
    concurrency: 1,
    ratePerSecond: 1,
    balanceCheck: { checked: [], unchecked: [] },
    rateLimited: 0,
    ...changes,
  };
}

/** A stored M-Pesa payout item of 10 KES under the key `run-<runId>-<itemId>`. */
export function itemRecord(
  runId: string,
  itemId: string,
  state: PayoutRunItemState = 'queued',
  changes: Partial<PayoutRunItemRecord> = {},
): PayoutRunItemRecord {
  return {
    runId,
    itemId,
    operation: 'payouts.mpesa',
    idempotencyKey: `run-${runId}-${itemId}`,
    amount: 10,
    currency: 'KES',
    state,
    sends: state === 'queued' ? 0 : 1,
    updatedAt: 'now',
    request: { phoneNumber: '0712345678', amount: 10 },
    ...changes,
  };
}

/** An engine's context over `store` and `payments`: events dropped, timings of a second. */
export function engineContext(
  store: PayoutRunStore,
  payments: PayoutRunsPayments,
  changes: Partial<PayoutRunEngineContext> = {},
): PayoutRunEngineContext {
  return {
    store,
    payments,
    emit: () => undefined,
    settlementPollMs: 1000,
    progressIntervalMs: 1000,
    followInDoubtMs: 1000,
    ...changes,
  };
}

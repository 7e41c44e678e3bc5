import type {
  MerchantPayoutRequest,
  MpesaPayoutRequest,
  PanAfricanPayoutRequest,
} from '../dto/payout-requests';

/**
 * Where one item of a run stands (docs/payout-runs.md has the state machine):
 * - `queued`: not sent yet (also after a 429, which the service did not execute);
 * - `sending`: journaled and on the wire;
 * - `accepted`: the service accepted it; its outcome comes with its webhook or the reconciler;
 * - `succeeded` | `failed`: the final outcome, as the payments journal settled it;
 * - `refused`: never executed (refused by the service, not sent by the journal, or the run was
 *   cancelled before it was sent);
 * - `in_doubt`: may have executed and its outcome is not known: never re-sent automatically.
 */
export type PayoutRunItemState =
  'queued' | 'sending' | 'accepted' | 'succeeded' | 'failed' | 'refused' | 'in_doubt';

/** Every item state, in the order of docs/payout-runs.md. */
export const PAYOUT_RUN_ITEM_STATES: readonly PayoutRunItemState[] = [
  'queued',
  'sending',
  'accepted',
  'succeeded',
  'failed',
  'refused',
  'in_doubt',
];

/** Item states the run still works on: it is not done while an item is in one of them. */
export const OPEN_ITEM_STATES: ReadonlySet<PayoutRunItemState> = new Set([
  'queued',
  'sending',
  'accepted',
]);

/**
 * Where a run stands: `running`, `paused` (nothing new is sent), `cancelled` (queued items were
 * refused; sent ones are still followed) or `completed` (no item is queued, sending or accepted).
 */
export type PayoutRunState = 'running' | 'paused' | 'cancelled' | 'completed';

/** The three payouts, by the name of their operation. */
export type PayoutRunOperation = 'payouts.mpesa' | 'payouts.panAfrican' | 'payouts.merchant';

/** What every item of a run has, whichever its payout. */
export interface PayoutRunItemBase {
  /**
   * The caller's id of the item (an employee or invoice number), unique in the run: 1 to 64 of
   * `A-Z a-z 0-9 . _ : -`. Its idempotency key is derived from the run id and it (docs/payout-runs.md,
   * "Exactly once per item").
   */
  itemId: string;
  /**
   * Send it although another item of the run has the same receiver and amount (two salaries of
   * the same amount to one person, on purpose).
   */
  allowDuplicate?: boolean;
}

/** One payout of a run: the request of `PayoutsService.mpesa`, `panAfrican` or `merchant`. */
export type PayoutRunItemInput =
  | (PayoutRunItemBase & { operation: 'payouts.mpesa'; request: MpesaPayoutRequest })
  | (PayoutRunItemBase & { operation: 'payouts.panAfrican'; request: PanAfricanPayoutRequest })
  | (PayoutRunItemBase & { operation: 'payouts.merchant'; request: MerchantPayoutRequest });

/** What {@link PayoutRunsService.create} takes. */
export interface CreatePayoutRunOptions {
  /**
   * The run's id, given by the caller so that creating it again is harmless: derive it from your
   * payroll batch id (`payroll-2026-03`). A second `create()` with the same id and the same items
   * returns the run already there (`existing: true`) and sends nothing; with other items it is
   * refused ({@link PayoutRunConflictError}). 1 to 64 of `A-Z a-z 0-9 . _ : -`. Default: a random
   * UUID (then a retried call makes a second run: pass your own).
   */
  runId?: string;
  /** A label for people (`"March salaries"`); kept on the run and in its report. */
  name?: string;
  items: readonly PayoutRunItemInput[];
  /** Payouts on the wire at once, at most 1,000. Default: the module's `concurrency` (4). */
  concurrency?: number;
  /**
   * Payouts started per second at most, up to 10,000. Default: the module's `ratePerSecond` (10).
   */
  ratePerSecond?: number;
  /** Allow items with the same receiver and amount (else each such item needs `allowDuplicate`). */
  allowDuplicates?: boolean;
  /** Start although the balance looked short at creation (the figures are kept on the run). */
  allowBalanceShortfall?: boolean;
}

/** One rule an item broke: the run is refused and nothing is sent. */
export interface PayoutRunItemProblem {
  /** The item's `itemId` (or `#<index>` when it has none usable). */
  itemId: string;
  /** The field, as the library's validation names it (`amount`, `phoneNumber`, `itemId`...). */
  field: string;
  /** The rule, as the library names it (`min`, `isKenyanPhoneNumber`, `unique`...). */
  rule: string;
  message: string;
}

/** A currency whose total the balance did not cover at creation. */
export interface PayoutRunBalanceShortfall {
  currency: string;
  /** The run's total in this currency. */
  required: number;
  /** The balance of the wallet(s) of this currency, as `balances.all()` answered it. */
  available: number;
}

/** The balance check made at creation: what was compared, and what could not be. */
export interface PayoutRunBalanceCheck {
  /** Per currency checked: the run's total and the balance. */
  checked: { currency: string; required: number; available: number }[];
  /**
   * Totals drawn from a wallet held in another currency (a KES payout from the USD wallet, a
   * pan-African payout in NGN): the service converts, at a rate the balance does not give.
   */
  unchecked: { currency: string; required: number }[];
}

/** Count and sum of a run's items in one currency. */
export interface PayoutRunTotal {
  count: number;
  amount: number;
}

/** Items and amounts per currency: all of them, those `succeeded`, and those of each state. */
export interface PayoutRunTotals {
  all: Record<string, PayoutRunTotal>;
  succeeded: Record<string, PayoutRunTotal>;
  /** Per state, per currency: `byState.in_doubt.KES`; a currency with no item there is absent. */
  byState: Record<PayoutRunItemState, Record<string, PayoutRunTotal>>;
}

/** A run as {@link PayoutRunsService.get} answers it. */
export interface PayoutRun {
  runId: string;
  name?: string;
  state: PayoutRunState;
  createdAt: string;
  updatedAt: string;
  /** When no item was left queued, sending or accepted (in-doubt items may still settle later). */
  finishedAt?: string;
  concurrency: number;
  ratePerSecond: number;
  /** Items in each state. */
  counts: Record<PayoutRunItemState, number>;
  /** Items and amounts per currency, summed in minor units (docs/payout-runs.md, "Money"). */
  totals: PayoutRunTotals;
  /** The pace now: rate (requests per second) after any slow-down, and 429s answered so far. */
  pace: { currentRatePerSecond: number; rateLimited: number };
  balanceCheck: PayoutRunBalanceCheck;
}

/** What {@link PayoutRunsService.create} answers: the run, and whether it was there already. */
export interface CreatedPayoutRun extends PayoutRun {
  /**
   * `true` when a run with this `runId` and the same items existed: it was returned as it is and
   * nothing was sent again.
   */
  existing: boolean;
}

/** What {@link PayoutRunsService.validate} answers: what `create()` would say, nothing sent. */
export interface PayoutRunValidationReport {
  /**
   * No problem, and no shortfall unless `allowBalanceShortfall`: `create()` would take these
   * items with these options.
   */
  ok: boolean;
  /** Every rule every item breaks. */
  problems: PayoutRunItemProblem[];
  /** The balance check, when every item passed (the balance is read only then). */
  balanceCheck?: PayoutRunBalanceCheck;
  /** The currencies the balance does not cover (empty when it does, or was not read). */
  shortfalls: PayoutRunBalanceShortfall[];
}

/** One item as {@link PayoutRunsService.items} answers it: no phone or account number. */
export interface PayoutRunItem {
  runId: string;
  itemId: string;
  operation: PayoutRunOperation;
  /**
   * `run-<runId>-<22 characters>`: the payout's `Idempotency-Key` and journal key, derived from the
   * run id and the item id with a secret, so one key does not give away the others.
   */
  idempotencyKey: string;
  amount: number;
  currency: string;
  state: PayoutRunItemState;
  /** Why it is `refused`, `failed` or `in_doubt`, in words. */
  reason?: string;
  /** The service's transaction reference, once known. */
  reference?: string;
  /** Sends made (a 429 counts: it was sent, not executed). */
  sends: number;
  updatedAt: string;
}

/** A page of {@link PayoutRunsService.items}. */
export interface PayoutRunItemsPage {
  items: PayoutRunItem[];
  /** Pass it as `cursor` for the next page; absent on the last one. */
  nextCursor?: string;
}

/** Which items {@link PayoutRunsService.items} lists. */
export interface PayoutRunItemsQuery {
  /** One state or several. Default: every state. */
  state?: PayoutRunItemState | readonly PayoutRunItemState[];
  /** From the `nextCursor` of the page before. */
  cursor?: string;
  /** Items per page, 1 to 1000. Default 100. */
  limit?: number;
}

/** `report(runId, 'json')`: the run and every item, in the order they were given. */
export interface PayoutRunReport {
  run: PayoutRun;
  items: PayoutRunItem[];
}

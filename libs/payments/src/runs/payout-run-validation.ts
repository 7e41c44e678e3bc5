import { PaymentsValidationError } from '../errors';
import type { PaymentsDefaults } from '../payments-options.interface';
import { prepareRequest, resolveIdempotencyKey } from '../request-rules';
import { PAYOUT_RUN_KINDS, isPayoutRunOperation } from './payout-run-kinds';
import type {
  PayoutRunItemInput,
  PayoutRunItemProblem,
  PayoutRunOperation,
} from './payout-run.interfaces';

/** An item that passed every rule: its request as it will be sent, and its key. */
export interface PreparedPayoutRunItem {
  readonly itemId: string;
  readonly operation: PayoutRunOperation;
  /** After `prepareRequest`: defaults applied (callback URL, username, wallet). */
  readonly request: object;
  readonly idempotencyKey: string;
  readonly amount: number;
  readonly currency: string;
  readonly wallet: 'local' | 'USD';
}

/** What {@link validatePayoutRunItems} found: every item prepared, or every problem. */
export type PayoutRunValidation =
  | { readonly ok: true; readonly items: readonly PreparedPayoutRunItem[] }
  | { readonly ok: false; readonly problems: readonly PayoutRunItemProblem[] };

/**
 * The idempotency key of an item: derived from the run and the item, so a send of the item, by
 * this process or after a restart, is the same call to the service and to the journal.
 */
export function payoutRunItemKey(runId: string, itemId: string): string {
  return `run-${runId}-${itemId}`;
}

/**
 * Checks every item before anything is sent (docs/payout-runs.md, "All or nothing"): the
 * library's own rules of each payout (`prepareRequest`, the same checks a single call runs), the
 * idempotency-key rules on the derived key, unique item ids, and no two items alike in receiver and
 * amount unless allowed. Reports every problem of every item, not only the first.
 */
export function validatePayoutRunItems(
  runId: string,
  items: readonly unknown[],
  defaults: PaymentsDefaults,
  allowDuplicates: boolean,
): PayoutRunValidation {
  const problems: PayoutRunItemProblem[] = [];
  const prepared: PreparedPayoutRunItem[] = [];
  const seenIds = new Set<string>();
  /** Receiver and amount → the first item with them. */
  const seenPayouts = new Map<string, string>();
  items.forEach((input, index) => {
    const item = (typeof input === 'object' && input !== null ? input : {}) as Partial<
      Record<keyof PayoutRunItemInput, unknown>
    >;
    const itemId = typeof item.itemId === 'string' ? item.itemId : `#${index}`;
    const problem = (field: string, rule: string, message: string) =>
      problems.push({ itemId, field, rule, message });

    if (typeof item.itemId !== 'string' || item.itemId === '') {
      problem('itemId', 'isNotEmpty', 'itemId must be a non-empty string');
    } else if (seenIds.has(item.itemId)) {
      problem('itemId', 'unique', `itemId ${item.itemId} is given to more than one item`);
    } else {
      seenIds.add(item.itemId);
    }
    let idempotencyKey: string | undefined;
    if (typeof item.itemId === 'string' && item.itemId !== '') {
      try {
        idempotencyKey = resolveIdempotencyKey('PayoutRunItem', {
          idempotencyKey: payoutRunItemKey(runId, item.itemId),
        });
      } catch {
        problem(
          'itemId',
          'isIdempotencyKey',
          'itemId must be printable ASCII without spaces, short enough for run-<runId>-<itemId> to be at most 255 characters',
        );
      }
    }
    if (!isPayoutRunOperation(item.operation)) {
      problem(
        'operation',
        'isIn',
        `operation must be one of ${Object.keys(PAYOUT_RUN_KINDS).join(', ')}`,
      );
      return;
    }
    const kind = PAYOUT_RUN_KINDS[item.operation];
    let request: object;
    try {
      request = prepareRequest(kind.operation, item.request, defaults);
    } catch (error) {
      if (!(error instanceof PaymentsValidationError)) throw error;
      for (const { field, rule, message } of error.errors) problem(field, rule, message);
      return;
    }
    const amount = (request as { amount: number }).amount;
    const currency = kind.currency(request);
    const payout = `${kind.receiver(request)}|${currency}|${amount}`;
    const earlier = seenPayouts.get(payout);
    if (earlier === undefined) seenPayouts.set(payout, itemId);
    else if (!allowDuplicates && item.allowDuplicate !== true) {
      problem(
        'request',
        'duplicatePayout',
        `the item pays the same receiver the same amount as item ${earlier}: mark it allowDuplicate if that is meant`,
      );
    }
    if (idempotencyKey === undefined) return;
    prepared.push({
      itemId,
      operation: item.operation,
      request,
      idempotencyKey,
      amount,
      currency,
      wallet: kind.wallet(request),
    });
  });
  return problems.length > 0 ? { ok: false, problems } : { ok: true, items: prepared };
}

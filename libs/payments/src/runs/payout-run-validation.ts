import { PaymentsValidationError } from '../errors';
import { objectOfKnownKeysProblems, readKnownFields } from '../unknown-keys';
import type { PaymentsOperation } from '../operations';
import { createHmac } from 'node:crypto';
import { fromMinorUnits, minorUnitDigits, toMinorUnits } from '../money';
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

/** The longest run id (or item id) {@link PAYOUT_RUN_ID_PATTERN} takes. */
export const MAX_RUN_ID_LENGTH = 64;

/** What a run id and an item id may hold: safe in a key, a URL, a CSV cell and a Redis key. */
export const PAYOUT_RUN_ID_PATTERN = new RegExp(`^[A-Za-z0-9._:-]{1,${MAX_RUN_ID_LENGTH}}$`);

/**
 * The idempotency key of an item: `run-<runId>-<HMAC-SHA256(secret, runId + "\n" + itemId)>`,
 * base64url, 22 characters (132 bits). Derived, so a send of the item by this process, another
 * instance or after a restart is the same call to the service and to the journal; keyed, so a key
 * leaked (a webhook's `malipo_key` in a callback URL) does not give away the keys of the other
 * items (docs/payout-runs.md, "Exactly once per item").
 */
export function payoutRunItemKey(secret: Buffer | string, runId: string, itemId: string): string {
  const mac = createHmac('sha256', secret).update(`${runId}\n${itemId}`).digest('base64url');
  return `run-${runId}-${mac.slice(0, 22)}`;
}

/**
 * `request` prepared as its send under `idempotencyKey` would be (`PayoutsService.prepare`): the
 * defaults applied, every rule checked.
 * @throws PaymentsValidationError for a request that breaks a rule.
 */
export type PreparePayout = (
  operation: PaymentsOperation<object, unknown>,
  request: unknown,
  idempotencyKey: string | undefined,
) => object;

/**
 * Checks every item before anything is sent (docs/payout-runs.md, "All or nothing"): the
 * library's own rules of each payout (`prepare`, the same checks a single call runs), item
 * ids of safe characters and unique, amounts with no more decimals than their currency has, and
 * no two items alike in receiver and amount unless allowed. Reports every problem of every item, not only the first.
 */
export function validatePayoutRunItems(
  keyOf: (itemId: string) => string,
  items: readonly unknown[],
  prepare: PreparePayout,
  allowDuplicates: boolean,
): PayoutRunValidation {
  const problems: PayoutRunItemProblem[] = [];
  const prepared: PreparedPayoutRunItem[] = [];
  const seenIds = new Set<string>();
  /** Receiver and amount → the first item with them. */
  const seenPayouts = new Map<string, string>();
  items.forEach((input, index) => {
    const item = readItem(input);
    if (item === undefined) {
      problems.push({
        itemId: `#${index}`,
        field: 'item',
        rule: 'isReadable',
        message: 'the item could not be read',
      });
      return;
    }
    const itemId = typeof item.itemId === 'string' ? item.itemId : `#${index}`;
    const problem = (field: string, rule: string, message: string) =>
      problems.push({ itemId, field, rule, message });
    // A key the run does not read (`idempotencyKey`, `allowDuplicates`, an `amount` beside the
    // request), ignored, would be a rule the caller thinks holds.
    if (typeof input === 'object' && input !== null) {
      for (const { field, rule, message } of objectOfKnownKeysProblems(
        input,
        'item',
        'an item must be an object such as { itemId, operation, request }',
        ITEM_FIELD_NAMES,
        (shown) => `${shown} is not a field of a run item (${ITEM_FIELDS.join(', ')})`,
      )) {
        problem(field, rule, message);
      }
    }
    if (item.allowDuplicate !== undefined && typeof item.allowDuplicate !== 'boolean') {
      problem('allowDuplicate', 'isBoolean', 'allowDuplicate must be true or false');
    }

    if (typeof item.itemId !== 'string' || item.itemId === '') {
      problem('itemId', 'isNotEmpty', 'itemId must be a non-empty string');
    } else if (!PAYOUT_RUN_ID_PATTERN.test(item.itemId)) {
      // Also what keeps it from being a formula in the report's CSV (docs/payout-runs.md).
      problem(
        'itemId',
        'isPayoutRunItemId',
        'itemId must be 1 to 64 of the characters A-Z a-z 0-9 . _ : -',
      );
    } else if (seenIds.has(item.itemId)) {
      problem('itemId', 'unique', `itemId ${item.itemId} is given to more than one item`);
    } else {
      seenIds.add(item.itemId);
    }
    const idempotencyKey =
      typeof item.itemId === 'string' && PAYOUT_RUN_ID_PATTERN.test(item.itemId)
        ? keyOf(item.itemId)
        : undefined;
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
      request = prepare(kind.operation, item.request, idempotencyKey);
    } catch (error) {
      if (!(error instanceof PaymentsValidationError)) throw error;
      for (const { field, rule, message } of error.errors) problem(field, rule, message);
      return;
    }
    const currency = kind.currency(request);
    const minor = toMinorUnits((request as { amount: number }).amount, currency);
    if (minor === undefined) {
      problem(
        'amount',
        'decimals',
        `amount must have at most ${minorUnitDigits(currency)} decimal(s) in ${currency}`,
      );
    } else {
      // A sum's binary artefact (250.7 + 0.1 is 250.79999999999998) goes to the wire, is compared
      // and is journaled as the decimal it stands for.
      (request as { amount: number }).amount = fromMinorUnits(minor, currency);
    }
    const amount = (request as { amount: number }).amount;
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

/**
 * Refuses a request, as prepared (defaults applied), that pays from another account than the
 * run's: a run is one account's, whose wallets its balance check reads and whose digest its record
 * keeps (docs/payout-runs.md, "All or nothing"). A payout without `username` (M-Pesa) pays from it.
 * @throws PaymentsValidationError (`username`, `isRunAccount`).
 */
export function assertRunAccount(operation: string, request: object, account: string): void {
  const username: unknown = (request as { username?: unknown }).username;
  if (
    username === undefined ||
    (typeof username === 'string' && username.trim() === account.trim())
  ) {
    return;
  }
  throw new PaymentsValidationError(`${operation} item`, [
    {
      field: 'username',
      rule: 'isRunAccount',
      message:
        "username must be the run's account (the registration's defaultUsername): a run pays " +
        'from one account, whose balance it checks. Pay from another account with a run of its ' +
        "own, through that account's registration (PayoutRunsModule option account)",
    },
  ]);
}

/** The fields of an item a run reads. */
const ITEM_FIELDS = ['itemId', 'operation', 'request', 'allowDuplicate'] as const;
const ITEM_FIELD_NAMES: ReadonlySet<string> = new Set(ITEM_FIELDS);

/**
 * The fields of an item, each read once ({@link readKnownFields}), so that a getter cannot give
 * the checks one `itemId` and the key another; `{}` for what is not an object (each field then
 * fails its rule), and undefined when reading one throws (a getter, a Proxy).
 */
function readItem(input: unknown): Partial<Record<keyof PayoutRunItemInput, unknown>> | undefined {
  if (typeof input !== 'object' || input === null) return {};
  return readKnownFields(input, ITEM_FIELDS);
}

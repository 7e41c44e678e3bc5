import type { TransactionStatus } from './dto/lookups';
import { ServiceAPIError } from './errors';
import { keptServiceText } from './journal/personal-data';
import { minorUnitDigits } from './money';

/**
 * Statuses by which the service says it has no such transaction. Any other refusal of a look-up
 * (the service's generic `{"status":400,"success":false}`, "could not fetch transaction, try
 * again"; our credentials; a rate limit) says nothing about the reference.
 */
const UNKNOWN_TRANSACTION_STATUSES: ReadonlySet<number> = new Set([404, 410]);

/**
 * Whether a failed status look-up is the service's answer that no transaction has the reference:
 * an HTTP 404 (or 410), or that status in the error body of a 2xx (`success: false`).
 * @internal
 */
export function isUnknownTransaction(error: unknown): boolean {
  if (!(error instanceof ServiceAPIError)) return false;
  const status =
    error.status !== undefined && error.status >= 400 ? error.status : error.serviceStatus;
  return status !== undefined && UNKNOWN_TRANSACTION_STATUSES.has(status);
}

/**
 * Whether a status refuses a call for the account's sake, not the request's: the credentials
 * (401) or a rate limit (429). A later call may not meet it.
 */
export function isRateLimitOrCredentialsStatus(status: number | undefined): boolean {
  return status === 401 || status === 429;
}

/**
 * Whether a failed call was refused for the account's sake ({@link isRateLimitOrCredentialsStatus}),
 * in the HTTP status or the service's body.
 */
export function isRateLimitOrCredentials(error: unknown): boolean {
  if (!(error instanceof ServiceAPIError)) return false;
  return (
    isRateLimitOrCredentialsStatus(error.status) ||
    isRateLimitOrCredentialsStatus(error.serviceStatus)
  );
}

/**
 * Whether two amounts of `currency` are different sums of money: they differ by half its minor
 * unit or more (0.005 KES, 0.0005 TND, 0.5 UGX; 2 decimals when the currency is unknown). Closer
 * amounts are equal: JSON decimals need not round-trip exactly.
 */
export function amountsDiffer(a: number, b: number, currency: string | undefined): boolean {
  const scale = 10 ** minorUnitDigits(currency?.trim().toUpperCase() ?? '');
  // In minor units, with room for the binary fraction of a difference of exactly half a unit.
  return Math.abs(a - b) * scale >= 0.5 - 1e-9;
}

/**
 * Record statuses (`transactionDetails.status`, compared trimmed and as written) of a transaction
 * that succeeded. Only the value docs/wire-contract.md records ("Transaction status", "Status
 * strings"): a success handler must never run on a word we merely guess means paid. `SUCCESS`
 * is the service's word for "accepted" on its answers, so no other casing counts. A word that is
 * in neither set is "not final", so an unforeseen one delays an event (503), never misroutes it.
 */
const RECORD_SUCCESS_STATUSES: ReadonlySet<string> = new Set(['success']);

/**
 * Record statuses (compared trimmed and lower-case) of a transaction that ended without the money
 * moving: the sandbox's `failed`
 * (docs/wire-contract.md records only "success" for the real service) and the usual words for a
 * payment that will not succeed any more. Left out on purpose: `error` and `timeout`, which may
 * name a step the service retries.
 */
const RECORD_FAILURE_STATUSES: ReadonlySet<string> = new Set([
  'failed',
  'failure',
  'cancelled',
  'canceled',
  'declined',
  'rejected',
  'reversed',
  'expired',
]);

/** The most of the service's reason for a failure that the journal keeps. */
const MAX_KEPT_REASON_LENGTH = 200;

/**
 * The service's reason for a failed transaction (`transaction_details.reason`: "DS timeout user
 * cannot be reached"), kept in the journal and shown in reports as {@link keptServiceText} keeps
 * it, with the record's phone number, account number and both parties' names masked; at most
 * {@link MAX_KEPT_REASON_LENGTH} characters. Undefined for a record that is not failed or gives
 * none.
 */
function failureReason(record: TransactionStatus): string | undefined {
  if (recordOutcome(record) !== 'failed') return undefined;
  const details: Partial<TransactionStatus['transactionDetails']> = record.transactionDetails ?? {};
  return keptServiceText(
    details.reason,
    {
      phoneNumber: details.phoneNumber,
      accountNumber: details.accountNumber,
      // Each party's name whole, and each word of either.
      accountHolderName: [details.payer, details.receiver],
    },
    MAX_KEPT_REASON_LENGTH,
  );
}

/**
 * What of the service's record the journal compares with an entry, where the record has it, and
 * the reason it keeps of a failure.
 */
export function recordFigures(record: TransactionStatus): {
  amount?: number;
  currency?: string;
  createdAt?: string;
  status?: string;
  phoneNumber?: string;
  accountNumber?: string;
  reason?: string;
} {
  const status: unknown = record.transactionDetails?.status;
  const phoneNumber: unknown = record.transactionDetails?.phoneNumber;
  const accountNumber: unknown = record.transactionDetails?.accountNumber;
  const reason = failureReason(record);
  return {
    ...(reason === undefined ? {} : { reason }),
    ...(typeof record.amount === 'number' ? { amount: record.amount } : {}),
    ...(typeof record.currency === 'string' ? { currency: record.currency } : {}),
    ...(typeof record.createdAt === 'string' ? { createdAt: record.createdAt } : {}),
    ...(typeof status === 'string' ? { status } : {}),
    ...(typeof phoneNumber === 'string' && phoneNumber !== '' ? { phoneNumber } : {}),
    ...(typeof accountNumber === 'string' && accountNumber !== '' ? { accountNumber } : {}),
  };
}

/** The outcome the record settled on, or `undefined` while it is not final (pending, no status...). */
export function recordOutcome(record: TransactionStatus): 'succeeded' | 'failed' | undefined {
  const status: unknown = record.transactionDetails?.status;
  if (typeof status !== 'string') return undefined;
  const word = status.trim();
  if (RECORD_SUCCESS_STATUSES.has(word)) return 'succeeded';
  if (RECORD_FAILURE_STATUSES.has(word.toLowerCase())) return 'failed';
  return undefined;
}

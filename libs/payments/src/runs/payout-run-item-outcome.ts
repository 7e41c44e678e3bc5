import { PaymentsJournalError, PaymentsValidationError, ServiceAPIError } from '../errors';
import type { PaymentsJournalEntry } from '../journal/payments-journal.interfaces';
import { keptServiceText } from '../journal/personal-data';
import type { PayoutRunItemState } from './payout-run.interfaces';

/**
 * What becomes of an item after a send failed:
 * - `requeue`: not executed and worth sending again (a 429, the client closing before it sent,
 *   the journal not written): back to `queued`, under the same key; `pauseRun` says why the whole
 *   run pauses too, when every other item would fail the same way;
 * - otherwise the item's next state and why.
 */
export type PayoutRunSendFailure =
  | {
      readonly kind: 'requeue';
      readonly rateLimited: boolean;
      readonly retryAfterMs?: number;
      readonly pauseRun?: string;
    }
  | {
      readonly kind: 'settle';
      readonly state: Extract<PayoutRunItemState, 'failed' | 'refused' | 'in_doubt'>;
      readonly reason: string;
    };

/** The state a journal entry puts its item in, when the journal knows more than the run. */
export function itemStateOfEntry(
  entry: PaymentsJournalEntry,
):
  | Extract<PayoutRunItemState, 'accepted' | 'succeeded' | 'failed' | 'refused' | 'in_doubt'>
  | undefined {
  switch (entry.state) {
    case 'succeeded':
    case 'failed':
    case 'in_doubt':
    case 'accepted':
      return entry.state;
    case 'refused':
      // A person found it never executed, or a run's cancel closed it: final. Otherwise it may be
      // sent again.
      return entry.settledBy === 'manual' || entry.settledBy === 'run' ? 'refused' : undefined;
    default:
      // `started` (a send in flight) says nothing new.
      return undefined;
  }
}

/** Why an item is in doubt whose key the journal holds for another request. */
export const KEY_OF_ANOTHER_REQUEST =
  'idempotencyKey reused: the journal holds an earlier, different request under its key, which may have executed';

/** The most of the service's own message an item's reason repeats. */
const MAX_SERVICE_MESSAGE_LENGTH = 200;

/**
 * What the service said of a refused item (`invalid network code`), so that a person sees why
 * without the logs: its own message as {@link keptServiceText} keeps it, with the request's phone
 * number, account and name masked; at most {@link MAX_SERVICE_MESSAGE_LENGTH} characters.
 */
function serviceSaid(error: ServiceAPIError, request: object | undefined): string | undefined {
  return keptServiceText(error.serviceMessage, request ?? {}, MAX_SERVICE_MESSAGE_LENGTH);
}

/** HTTP 429 under either the HTTP status or the service's body status. */
function isRateLimited(error: ServiceAPIError): boolean {
  return error.status === 429 || error.serviceStatus === 429;
}

/** HTTP 401 under either the HTTP status or the service's body status. */
function isCredentialsRefused(error: ServiceAPIError): boolean {
  return error.status === 401 || error.serviceStatus === 401;
}

/**
 * Reads a failed send the way the journal does (docs/journal.md): what may have executed is
 * `in_doubt` and never sent again by the run; what certainly did not is `refused`, except a 429,
 * a closing client and a journal that could not be written, which are sent again later.
 */
export function classifySendFailure(error: unknown, request?: object): PayoutRunSendFailure {
  if (error instanceof PaymentsJournalError) {
    switch (error.code) {
      case 'ALREADY_FAILED':
        return { kind: 'settle', state: 'failed', reason: 'the journal holds it as failed' };
      case 'ALREADY_REFUSED':
        // A key held with no send: its item was cancelled, or a person settled a held key refused.
        return {
          kind: 'settle',
          state: 'refused',
          reason: `not sent again: ${error.entry?.reason ?? 'a person settled its key refused'}`,
        };
      case 'JOURNAL_UNAVAILABLE':
        // Nothing was sent, and nothing can be while the journal is down: the item waits, the run
        // pauses, and resume() sends it once the journal answers (docs/payout-runs.md).
        return {
          kind: 'requeue',
          rateLimited: false,
          pauseRun: 'the payments journal could not be written (JOURNAL_UNAVAILABLE)',
        };
      default:
        // IN_DOUBT, IN_PROGRESS: an earlier send under the key may have executed.
        return {
          kind: 'settle',
          state: 'in_doubt',
          reason: `${error.code}: an earlier send under its key may have executed`,
        };
    }
  }
  if (error instanceof ServiceAPIError && !error.mayHaveExecuted && isCredentialsRefused(error)) {
    // The account's credentials, not the item: every other item would be refused the same way.
    // The item waits and the run pauses until resume(), after the password is put right.
    return {
      kind: 'requeue',
      rateLimited: false,
      pauseRun: "the service refused the account's credentials (401): put apiPassword right",
    };
  }
  if (error instanceof ServiceAPIError) {
    const status = error.status === undefined ? '' : ` (HTTP ${error.status})`;
    if (error.mayHaveExecuted) {
      return {
        kind: 'settle',
        state: 'in_doubt',
        reason: `${error.code}${status}: may have executed`,
      };
    }
    if (isRateLimited(error)) {
      return {
        kind: 'requeue',
        rateLimited: true,
        ...(error.retryAfterMs === undefined ? {} : { retryAfterMs: error.retryAfterMs }),
      };
    }
    if (error.code === 'CLIENT_CLOSED') return { kind: 'requeue', rateLimited: false };
    const said = serviceSaid(error, request);
    return {
      kind: 'settle',
      state: 'refused',
      reason: `${error.code}${status}: not executed${said === undefined ? '' : `: ${said}`}`,
    };
  }
  if (error instanceof PaymentsValidationError) {
    if (error.errors.some((e) => e.field === 'idempotencyKey' && e.rule === 'reused')) {
      // The journal holds another request under the item's key: the item was sent before with a
      // request that has changed since (a run created again with an edited item or new defaults).
      return { kind: 'settle', state: 'in_doubt', reason: KEY_OF_ANOTHER_REQUEST };
    }
    return {
      kind: 'settle',
      state: 'refused',
      reason: `not sent: ${error.errors.map((e) => `${e.field} ${e.rule}`).join(', ')}`,
    };
  }
  return { kind: 'settle', state: 'in_doubt', reason: 'an unexpected error: may have executed' };
}

/** Whether a send that failed with `error` made a request: the journal's refusals make none. */
export function reachedTheWire(error: unknown): boolean {
  return (
    error instanceof ServiceAPIError &&
    !(error instanceof PaymentsJournalError) &&
    error.attempts > 0
  );
}

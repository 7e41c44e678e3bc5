import { Injectable, Logger } from '@nestjs/common';
import type { TransactionStatus } from './dto/lookups';
import {
  withTypedFailure,
  PaymentsReconcilerError,
  PaymentsValidationError,
  failureNamed,
} from './errors';
import type {
  JournalSettleResult,
  JournalSettlement,
  PaymentsJournal,
} from './journal/payments-journal';
import { awaitsConfirmation, readResolution } from './journal/payments-journal';
import { InMemoryPaymentsJournal } from './journal/in-memory-payments-journal';
import {
  FINAL_JOURNAL_STATES,
  PAYMENTS_CONFIRMATION_WINDOW_MS,
  PAYMENTS_JOURNAL_STATES,
} from './journal/payments-journal.interfaces';
import type {
  PaymentsJournalEntry,
  PaymentsJournalResolution,
  PaymentsJournalState,
  PaymentsJournalTotal,
  PaymentsReconcileSummary,
} from './journal/payments-journal.interfaces';
import { fromUnits, summedDecimals } from './money';
import { REQUEST_RULES } from './request-rules';
import { OperationRunner } from './operation-runner';
import { PAYMENTS_LOGGER_CONTEXT } from './payments.constants';
import {
  isRateLimitOrCredentials,
  isUnknownTransaction,
  recordFigures,
  recordOutcome,
} from './transaction-outcome';
import { TransactionsService } from './transactions.service';
import { readObjectOfKnownKeys } from './unknown-keys';

/** Which entries {@link PaymentsReconciler.entries} lists. */
export interface PaymentsJournalFilter {
  /** Entries started at or after this time. */
  since?: Date | string;
  /** One state or several, as they stand now (a `started` entry past its deadline is `in_doubt`). */
  state?: PaymentsJournalState | readonly PaymentsJournalState[];
}

/** Options of one {@link PaymentsReconciler.reconcile} pass. */
export interface PaymentsReconcileOptions {
  /** Reconcile the entries started at or after this time. Default: every entry the store holds. */
  since?: Date | string;
  /** Status look-ups at a time. Default 4. */
  concurrency?: number;
}

const OPEN_STATES: readonly PaymentsJournalState[] = ['started', 'accepted', 'in_doubt'];

/**
 * An ISO 8601 date, or date and time (with seconds, fractions and an offset optional); no hour 24,
 * which `Date` rolls over to the next day.
 */
const ISO_DATE_TIME =
  /^(?<day>\d{4}-\d{2}-\d{2})(?:[T ](?<time>(?:[01]\d|2[0-3]):[0-5]\d(?::[0-5]\d(?:\.\d+)?)?)(?<zone>Z|[+-]\d{2}(?::?\d{2})?)?)?$/i;

/**
 * `value` as a date: a valid `Date` or an ISO 8601 string. Anything else is refused, not read as
 * the epoch (`null`, `0`) or guessed at (`'Nov 1 2099'`): an audit window must be the one meant.
 */
function toDate(value: unknown, field: string, target: string): Date | undefined {
  if (value === undefined) return undefined;
  const date =
    // A Date of another realm (a vm context, a test runner's sandbox) is one too.
    Object.prototype.toString.call(value) === '[object Date]'
      ? new Date((value as Date).getTime())
      : typeof value === 'string'
        ? isoDate(value.trim())
        : undefined;
  if (date === undefined || Number.isNaN(date.getTime())) {
    throw new PaymentsValidationError(target, [
      { field, rule: 'isDate', message: `${field} must be a Date or an ISO 8601 date string` },
    ]);
  }
  return date;
}

/**
 * ISO text as a `Date`, read the same everywhere: a date and time without an offset is UTC, as a
 * date alone is (`Date` reads the first in the server's time zone and the second in UTC, so
 * `2026-11-28` and `2026-11-28T00:00` were 12 hours apart on a server at UTC-12); an offset of
 * hours alone (`+03`) or without a colon (`+0300`) is read as `+03:00`, which `Date` takes.
 * Undefined for anything else, and for a day not of the calendar (`Date` rolls `2026-02-31` over
 * to March).
 */
function isoDate(text: string): Date | undefined {
  const parts = ISO_DATE_TIME.exec(text)?.groups;
  if (parts === undefined || !isCalendarDay(parts.day)) return undefined;
  if (parts.time === undefined) return new Date(parts.day);
  const zone = parts.zone === undefined || /^z$/i.test(parts.zone) ? 'Z' : parts.zone;
  const digits = zone.replace(':', '');
  const offset = zone === 'Z' ? zone : `${digits.slice(0, 3)}:${digits.slice(3) || '00'}`;
  return new Date(`${parts.day}T${parts.time}${offset}`);
}

/** Whether `day` (`YYYY-MM-DD`) is a day of the calendar. */
function isCalendarDay(day: string): boolean {
  const [year, month, date] = day.split('-').map(Number);
  const utc = new Date(Date.UTC(year, month - 1, date));
  return utc.getUTCMonth() === month - 1 && utc.getUTCDate() === date;
}

/**
 * The argument's fields, read once into a plain object; refuses an argument that is not an object
 * (`null`, a string, a `Date`), that holds a key it does not take (a misspelt `states` or
 * `sinse`, ignored, would list or reconcile everything), or whose fields cannot be read.
 */
function readArgument<T extends object>(
  value: T,
  field: string,
  target: string,
  known: ReadonlySet<string>,
): Partial<T> {
  const read = readObjectOfKnownKeys(
    value,
    field,
    `${field} must be an object`,
    known,
    (shown) => `${shown} is not a field of ${target} (${[...known].join(', ')})`,
  );
  if (read.problems) throw new PaymentsValidationError(target, read.problems);
  return read.fields as Partial<T>;
}

/** The states `state` names: each must be a journal state, or the filter would match nothing. */
function toStates(state: unknown): Set<PaymentsJournalState> | undefined {
  if (state === undefined) return undefined;
  const given: unknown[] = Array.isArray(state) ? state : [state];
  const unknown = given.filter(
    (value) => !PAYMENTS_JOURNAL_STATES.includes(value as PaymentsJournalState),
  );
  if (unknown.length > 0 || given.length === 0) {
    throw new PaymentsValidationError('PaymentsJournalFilter', [
      {
        field: 'state',
        rule: 'isIn',
        message: `state must be one or more of ${PAYMENTS_JOURNAL_STATES.join(', ')}`,
      },
    ]);
  }
  return new Set(given as PaymentsJournalState[]);
}

const FILTER_FIELDS: ReadonlySet<string> = new Set(['since', 'state']);
const RECONCILE_OPTION_FIELDS: ReadonlySet<string> = new Set(['since', 'concurrency']);

/**
 * Counts `entry` in `totals` (state → currency), its sum kept in `units` in integer units of the
 * finest decimal an amount may have, so that totals of many entries are the sums an auditor adds.
 */
function addToTotals(
  totals: PaymentsReconcileSummary['totals'],
  units: Map<PaymentsJournalTotal, bigint>,
  entry: PaymentsJournalEntry,
): void {
  const currency = entry.currency ?? 'unknown';
  const total = ((totals[entry.state] ??= {})[currency] ??= { count: 0, amount: 0 });
  total.count += 1;
  const digits = summedDecimals(currency, FINEST_REQUEST_DECIMALS);
  // A bigint: a 30-day journal's sum may pass 2^53 units of 10^-4.
  const sum = (units.get(total) ?? 0n) + BigInt(Math.round((entry.amount ?? 0) * 10 ** digits));
  units.set(total, sum);
  total.amount = fromUnits(sum, digits);
}

/**
 * Refuses a key that cannot name an entry (`get(123)` would answer "no entry" for a key the
 * journal may hold as `'123'`).
 * @throws PaymentsValidationError (`idempotencyKey`, `isString`) naming `target`.
 */
function assertEntryKey(idempotencyKey: unknown, target: string): void {
  if (typeof idempotencyKey === 'string' && idempotencyKey !== '') return;
  throw new PaymentsValidationError(target, [
    {
      field: 'idempotencyKey',
      rule: 'isString',
      message: 'idempotencyKey must be the key of a journal entry',
    },
  ]);
}

/**
 * `work`, its failure a `PaymentsError`: the library's own as they are, anything else (the
 * journal's store failed) `STORE_FAILED` naming `what`, the store's error kept as `cause` only (a
 * store's message is not ours to repeat).
 */
function typedFailure<T>(
  what: string,
  work: () => Promise<T>,
  idempotencyKey?: string,
): Promise<T> {
  return withTypedFailure(
    work,
    (cause) =>
      new PaymentsReconcilerError(
        `The payments journal store failed (${what}): nothing was changed; try again`,
        {
          code: 'STORE_FAILED',
          cause,
          ...(idempotencyKey === undefined ? {} : { idempotencyKey }),
        },
      ),
  );
}

/**
 * The most decimals a request's amount may have (any currency's, of pan-African calls and
 * transfers): a summary adds amounts in units of them.
 */
const FINEST_REQUEST_DECIMALS = REQUEST_RULES.anyCurrencyAmount.decimals;

/**
 * Answers, from the payments journal (docs/journal.md), what was started, what may have executed,
 * what is settled and what needs a look; `reconcile()` settles what it can by status look-up.
 * Injectable beside the other services and on `PaymentsClient.reconciler`; needs the `journal`
 * option of `PaymentsModule` (its methods reject without one).
 */
@Injectable()
export class PaymentsReconciler {
  private readonly logger = new Logger(PAYMENTS_LOGGER_CONTEXT);

  constructor(
    private readonly runner: OperationRunner,
    private readonly transactions: TransactionsService,
  ) {}

  /** Whether the client has a journal. */
  get enabled(): boolean {
    return this.runner.journal !== undefined;
  }

  /**
   * Whether the journal is this process's memory (`InMemoryPaymentsJournal`): lost on restart, and
   * seen by no other instance.
   * @internal
   */
  get journalInMemory(): boolean {
    return this.runner.journal?.store instanceof InMemoryPaymentsJournal;
  }

  /** The entry of `idempotencyKey`, as it stands now. */
  get(idempotencyKey: string): Promise<PaymentsJournalEntry | undefined> {
    return typedFailure(
      'get',
      async () => {
        assertEntryKey(idempotencyKey, 'PaymentsReconciler.get');
        const journal = this.journal();
        const entry = await journal.entryUnder(idempotencyKey);
        return entry && journal.shown(journal.view(entry));
      },
      idempotencyKey,
    );
  }

  /** Entries matching `filter`, oldest first, each as it stands now. */
  entries(filter: PaymentsJournalFilter = {}): Promise<PaymentsJournalEntry[]> {
    return typedFailure('list', () => this.listed(filter));
  }

  private async listed(given: PaymentsJournalFilter): Promise<PaymentsJournalEntry[]> {
    const filter = readArgument(given, 'filter', 'PaymentsJournalFilter', FILTER_FIELDS);
    const since = toDate(filter.since, 'since', 'PaymentsJournalFilter');
    const states = toStates(filter.state);
    const journal = this.journal();
    // `started` entries may be `in_doubt` by now: asked for `in_doubt`, the store lists both.
    const stored =
      states === undefined
        ? undefined
        : [...states, ...(states.has('in_doubt') ? (['started'] as const) : [])];
    const listed = await journal.store.list({
      ...(since ? { since } : {}),
      ...(stored ? { states: stored } : {}),
    });
    const viewed = listed.map((entry) => journal.view(entry));
    return (states ? viewed.filter((entry) => states.has(entry.state)) : viewed).map((entry) =>
      journal.shown(entry),
    );
  }

  /** Entries that may have executed with no known outcome: they need a look before paying again. */
  inDoubt(): Promise<PaymentsJournalEntry[]> {
    return this.entries({ state: 'in_doubt' });
  }

  /** Entries not final yet: `started`, `accepted` and `in_doubt`. */
  unsettled(): Promise<PaymentsJournalEntry[]> {
    return this.entries({ state: OPEN_STATES });
  }

  /**
   * Looks up the status of the entry of `idempotencyKey`, when it is open and has a reference, and
   * settles it as {@link reconcile} would; a look-up that fails leaves it as it was (logged).
   * Payout runs follow an item whose webhook was lost so (docs/payout-runs.md, "Lost webhooks").
   * @internal
   */
  lookUp(idempotencyKey: string): Promise<void> {
    return typedFailure(
      'look-up',
      async () => {
        const journal = this.journal();
        const entry = await journal.entryUnder(idempotencyKey);
        if (entry !== undefined && OPEN_STATES.includes(entry.state)) {
          await this.reconcileOne(journal, entry);
        }
      },
      idempotencyKey,
    );
  }

  /**
   * Settles what it can: a `started` entry past its deadline becomes `in_doubt`; an entry with a
   * reference is looked up (`transactions.status`) and becomes `succeeded` or `failed` when the
   * service's record is final and agrees with it (reference and amount). An entry in doubt without
   * a reference is settled by the references of webhooks deferred while it was being sent
   * (`deferredEvents`), when one's record agrees with it; else it stays `in_doubt` (the service has
   * no look-up by idempotency key): its webhook, matched by `malipo_key`, settles it. Look-ups that
   * fail leave their entry as it was.
   */
  reconcile(options: PaymentsReconcileOptions = {}): Promise<PaymentsReconcileSummary> {
    return typedFailure('reconcile', () => this.reconcilePass(options));
  }

  private async reconcilePass(given: PaymentsReconcileOptions): Promise<PaymentsReconcileSummary> {
    const options = readArgument(
      given,
      'options',
      'PaymentsReconcileOptions',
      RECONCILE_OPTION_FIELDS,
    );
    const since = toDate(options.since, 'since', 'PaymentsReconcileOptions');
    const journal = this.journal();
    const concurrency = options.concurrency ?? 4;
    if (!Number.isSafeInteger(concurrency) || concurrency < 1) {
      throw new PaymentsValidationError('PaymentsReconcileOptions', [
        {
          field: 'concurrency',
          rule: 'isPositiveInteger',
          message: 'concurrency must be a positive integer',
        },
      ]);
    }
    // One listing for the work, one for the totals after it. A person's `succeeded` or `failed`
    // taken while the record was not final is looked up too.
    const open = (await journal.store.list(since ? { since } : {})).filter(
      (entry) => OPEN_STATES.includes(entry.state) || awaitsConfirmation(entry),
    );
    let changed = 0;
    let lookupFailures = 0;
    let next = 0;
    const work = async () => {
      while (next < open.length) {
        const entry = open[next];
        next += 1;
        const result = await this.reconcileOne(journal, entry);
        if (result === 'changed') changed += 1;
        else if (result === 'lookup-failed') lookupFailures += 1;
      }
    };
    await Promise.all(Array.from({ length: Math.min(concurrency, open.length) }, work));
    const all = (await journal.store.list(since ? { since } : {})).map((entry) =>
      journal.view(entry),
    );
    const totals: PaymentsReconcileSummary['totals'] = {};
    const byOperation: PaymentsReconcileSummary['byOperation'] = {};
    const units = new Map<PaymentsJournalTotal, bigint>();
    for (const entry of all) {
      addToTotals(totals, units, entry);
      addToTotals((byOperation[entry.operation] ??= {}), units, entry);
    }
    return {
      checked: open.length,
      changed,
      lookupFailures,
      totals,
      byOperation,
      inDoubt: all
        .filter((entry) => entry.state === 'in_doubt')
        .map((entry) => journal.shown(entry)),
    };
  }

  /**
   * Settles an entry by hand, once a person has found out what became of the call (the service's
   * dashboard or support): `succeeded` or `failed` (with the reference, when the entry has none),
   * or `refused` when it did not execute, after which its key may be sent again (a key held for a
   * payout-run takeover only with `resend`: docs/journal.md). Only an entry that is not final and
   * not being sent; recorded as `settledBy: 'manual'` with the `note`. For
   * `succeeded` and `failed` the reference (given, or the entry's own) is first looked up: the
   * service's record must be final with that outcome and agree with the entry (amount, currency,
   * time). The service's record of the entry's reference later outranks the resolution (a webhook
   * or look-up that says otherwise settles it again), except for a call the service executed more
   * than once (`otherExecutions`): resolved only on a final record, of the reference or one of
   * the others, and then overruled by none (docs/journal.md, "More than one execution").
   * @throws PaymentsValidationError for a malformed resolution; PaymentsReconcilerError naming what
   *   stops it (no such entry, final already, in flight, another reference, a record that
   *   disagrees, a look-up or the store that failed).
   */
  resolve(
    idempotencyKey: string,
    resolution: PaymentsJournalResolution,
  ): Promise<PaymentsJournalEntry> {
    return typedFailure(
      'resolve',
      async () => this.journal().shown(await this.resolveNow(idempotencyKey, resolution)),
      idempotencyKey,
    );
  }

  private async resolveNow(
    idempotencyKey: string,
    given: PaymentsJournalResolution,
  ): Promise<PaymentsJournalEntry> {
    assertEntryKey(idempotencyKey, 'PaymentsJournalResolution');
    // Read once: the checks and the work see the same values, whatever getters the object has.
    const resolution = readResolution(given);
    const journal = this.journal();
    // What stops the resolution is named before anything is asked of the service.
    const { entry } = await journal.resolvable(idempotencyKey, resolution);
    const { outcome } = resolution;
    if (outcome === 'refused') return journal.resolve(idempotencyKey, resolution);
    // The service's record of the reference, typed by a person or the entry's own, is checked
    // before the journal takes the outcome: a person can be wrong, the service is not, and a wrong
    // reference would make the genuine webhook look like a second execution.
    const reference = (resolution.reference ?? entry.reference) as string;
    let record: TransactionStatus | undefined;
    try {
      record = await this.transactions.status(reference);
    } catch (error) {
      // A reference the look-up refuses before sending (a path it would break): named as such.
      if (error instanceof PaymentsValidationError) throw error;
      // Unknown to the service (404) is its answer, not a failure to ask: trying again is no use.
      if (!isUnknownTransaction(error)) {
        throw new PaymentsReconcilerError(
          `The reference ${reference} could not be checked with the service ` +
            `(${failureNamed(error)}): nothing was resolved; try again`,
          { code: 'LOOKUP_FAILED', idempotencyKey, cause: error },
        );
      }
    }
    const found = record && recordOutcome(record);
    const known = record?.code === reference;
    if (known && found !== undefined && found !== outcome) {
      throw new PaymentsReconcilerError(
        `The service's record of ${reference} says ${found}, not ${outcome}: nothing was resolved`,
        { code: 'REFUSED', idempotencyKey },
      );
    }
    // A record of the entry's reference, final or not, has its figures: one of another sum is no
    // record of the call. (A reference the person gives is checked so by the journal.)
    const mismatch =
      known && record && entry.reference !== undefined
        ? journal.recordMismatch(entry, { reference, ...recordFigures(record) })
        : undefined;
    if (mismatch !== undefined) {
      throw new PaymentsReconcilerError(
        `The service's record of ${reference} does not agree with the entry: ${mismatch}: ` +
          'nothing was resolved',
        { code: 'REFUSED', idempotencyKey },
      );
    }
    if (record === undefined || !known || found === undefined) {
      const status = known
        ? `not final (${String(record?.transactionDetails?.status)})`
        : 'unknown to the service';
      // A reference a person gives must be the service's settled word on the call; the entry's
      // own (the service's answer gave it) may be settled by hand while the service is silent,
      // and the service's record of it outranks the person once it says otherwise.
      if (entry.reference === undefined) {
        throw new PaymentsReconcilerError(
          `The service's record of ${reference} is ${status}: nothing was resolved`,
          { code: 'REFUSED', idempotencyKey },
        );
      }
      this.logger.warn(
        `The journal entry ${idempotencyKey} is resolved ${outcome} by hand while the service's ` +
          `record of its reference ${reference} is ${status} (${resolution.note})`,
      );
      return journal.resolve(idempotencyKey, resolution);
    }
    return journal.resolve(idempotencyKey, resolution, {
      reference,
      outcome,
      ...recordFigures(record),
      by: 'status',
    });
  }

  /**
   * Settles the entry a confirmed outcome points at, when they agree.
   * @internal The webhook module calls it with confirmed events.
   */
  async settle(settlement: JournalSettlement): Promise<JournalSettleResult> {
    return this.journal().settle(settlement);
  }

  /**
   * The entry a webhook event points at: by its idempotency key, else by its reference.
   * @internal The webhook module ranks deliveries with it before any look-up.
   */
  async findEntry(
    idempotencyKey: string | undefined,
    reference: string,
  ): Promise<PaymentsJournalEntry | undefined> {
    const journal = this.journal();
    const byKey =
      idempotencyKey === undefined ? undefined : await journal.entryUnder(idempotencyKey);
    return byKey ?? (await journal.store.findByReference(reference));
  }

  /**
   * Whether `entry`'s call is being sent now, its reference not known yet.
   * @internal The webhook module answers an event that names such an entry before any look-up.
   */
  isBeingSent(entry: PaymentsJournalEntry): boolean {
    return this.journal().isBeingSent(entry);
  }

  /**
   * Keeps the reference of a webhook deferred because its entry was being sent.
   * @internal The webhook module calls it before answering such an event 503.
   */
  deferEvent(idempotencyKey: string, reference: string, kind?: string): Promise<void> {
    return this.journal().deferEvent(idempotencyKey, reference, kind);
  }

  private async reconcileOne(
    journal: PaymentsJournal,
    stored: PaymentsJournalEntry,
  ): Promise<'changed' | 'unchanged' | 'lookup-failed'> {
    let entry = stored;
    /** Whether this pass marked the entry overdue: a change counted as the pass's own. */
    let marked = false;
    if (entry.state === 'started') {
      if (journal.view(entry) === entry) return 'unchanged';
      ({ entry, marked } = await journal.markOverdue(entry));
    }
    const reference = entry.reference;
    if (reference === undefined && entry.state === 'in_doubt' && entry.deferredEvents?.length) {
      const result = await this.settleByDeferredEvents(journal, entry);
      return result === 'unchanged' && marked ? 'changed' : result;
    }
    if (
      reference === undefined ||
      (FINAL_JOURNAL_STATES.has(entry.state) && !awaitsConfirmation(entry))
    ) {
      return marked ? 'changed' : 'unchanged';
    }
    let record: TransactionStatus;
    try {
      record = await this.transactions.status(reference);
    } catch (error) {
      // A person's resolution of a reference the service does not know (yet): not a failed
      // look-up, and looked up again until the confirmation window closes.
      if (awaitsConfirmation(entry) && isUnknownTransaction(error)) {
        return this.unconfirmedOnceLapsed(journal, entry, `the service knows no ${reference}`);
      }
      this.logger.warn(
        `Reconcile: the status look-up of ${reference} (${entry.idempotencyKey}) failed ` +
          `(${failureNamed(error)}); the entry stays ${entry.state}`,
      );
      return 'lookup-failed';
    }
    const result = await this.settleByRecord(journal, entry.idempotencyKey, reference, record);
    if (awaitsConfirmation(entry)) {
      if (result === 'unknown') {
        return this.unconfirmedOnceLapsed(journal, entry, `the service knows no ${reference}`);
      }
      if (result === 'not-final') {
        const status = String(record.transactionDetails?.status);
        return this.unconfirmedOnceLapsed(journal, entry, `its record is still ${status}`);
      }
      if (result.result === 'contradicted') {
        return (await journal.markUnconfirmed(entry, result.why)) || marked
          ? 'changed'
          : 'unchanged';
      }
    }
    if (result === 'unknown' || result === 'not-final') {
      return marked ? 'changed' : 'unchanged';
    }
    if (result.result === 'contradicted') {
      this.logger.error(
        `Reconcile: the service's record of ${reference} contradicts the journal entry ` +
          `${entry.idempotencyKey}: ${result.why}; ` +
          (result.wrote === true ? 'now in doubt, for a look' : 'left as it was, for a look'),
      );
    }
    const wrote = result.result === 'contradicted' && result.wrote === true;
    return result.result === 'settled' || wrote || marked ? 'changed' : 'unchanged';
  }

  /**
   * A person's resolution the service's record does not confirm yet (`what` says how it stands):
   * looked up again next pass, until the confirmation window closes; then marked `unconfirmed`.
   */
  private async unconfirmedOnceLapsed(
    journal: PaymentsJournal,
    entry: PaymentsJournalEntry,
    what: string,
  ): Promise<'changed' | 'unchanged'> {
    if (!journal.confirmationLapsed(entry)) return 'unchanged';
    const hours = PAYMENTS_CONFIRMATION_WINDOW_MS / 3_600_000;
    const unconfirmed = await journal.markUnconfirmed(
      entry,
      `${what} ${hours} h after the resolution`,
    );
    return unconfirmed ? 'changed' : 'unchanged';
  }

  /**
   * An entry in doubt without a reference, whose call's answer never came, settled by one of the
   * webhooks deferred while it was being sent: each reference is looked up, and settles the entry
   * only as any event named by the key alone would (docs/journal.md, "Webhooks"); a forger's
   * reference is refused there. What cannot be placed yet stays, and closes the key, for
   * {@link PAYMENTS_CONFIRMATION_WINDOW_MS} of passes that could not place it (`unplacedSince`).
   */
  private async settleByDeferredEvents(
    journal: PaymentsJournal,
    entry: PaymentsJournalEntry,
  ): Promise<'changed' | 'unchanged' | 'lookup-failed'> {
    let lookupFailed = false;
    /** Whether this pass listed one as another execution of the call. */
    let listed = false;
    const unusable: { reference: string; unplacedSince?: string }[] = [];
    const hours = PAYMENTS_CONFIRMATION_WINDOW_MS / 3_600_000;
    for (const { reference, unplacedSince } of entry.deferredEvents ?? []) {
      /** This pass could not place it: dropped once that has lasted the window, else marked. */
      const unplaced = async (why: string): Promise<void> => {
        if (unplacedSince !== undefined && journal.windowLapsedSince(unplacedSince)) {
          unusable.push({ reference, unplacedSince });
          this.logger.error(
            `Reconcile: the deferred webhook of ${entry.idempotencyKey} named ${reference}, which ` +
              `could not be placed for ${hours} h (${why}): dropped, check it by hand`,
          );
        } else if (unplacedSince === undefined) {
          await journal.deferredEventUnplaced(entry.idempotencyKey, reference, true);
        }
      };
      let record: TransactionStatus;
      try {
        record = await this.transactions.status(reference);
      } catch (error) {
        // Unknown to the service, or no reference a look-up can carry: a forger's. A rate limit or
        // refused credentials say nothing of the reference, and do not count.
        if (isUnknownTransaction(error) || error instanceof PaymentsValidationError) {
          unusable.push({ reference });
          continue;
        }
        this.logger.warn(
          `Reconcile: the status look-up of ${reference}, named by a deferred webhook of ` +
            `${entry.idempotencyKey}, failed (${failureNamed(error)})`,
        );
        if (!isRateLimitOrCredentials(error)) await unplaced(`look-ups failed`);
        lookupFailed = true;
        continue;
      }
      // The kind its webhook gave is not compared: whoever posts a reference first gives it, and
      // a forger's on another route would make the call's own record read as another's.
      if (record.code === reference && recordOutcome(record) === undefined) {
        // Not final: another transaction's if its figures are not the call's; else it may be
        // the call's own execution, and stays for as long as it is pending.
        const mismatch = journal.recordMismatch(entry, { reference, ...recordFigures(record) });
        if (mismatch !== undefined) {
          unusable.push({ reference });
          this.logger.warn(
            `Reconcile: the deferred webhook of ${entry.idempotencyKey} named ${reference}, whose ` +
              `pending record does not agree with the entry (${mismatch}); not taken`,
          );
        } else if (unplacedSince !== undefined) {
          await journal.deferredEventUnplaced(entry.idempotencyKey, reference, false);
        }
        continue;
      }
      const result = await this.settleByRecord(journal, entry.idempotencyKey, reference, record);
      if (result === 'unknown') unusable.push({ reference });
      else if (result === 'not-final') continue;
      else if (result.result === 'settled') return 'changed';
      else if (result.result === 'second-execution') {
        // The call's answer or webhook gave the entry its reference while this pass looked the
        // deferred one up: the service ran the call twice, as when the answer comes after.
        if (await journal.anotherExecution(entry.idempotencyKey, reference)) listed = true;
        unusable.push({ reference });
      } else if (result.result === 'contradicted' && result.undecided === true) {
        await unplaced('another call could as well own its record');
      } else if (result.result === 'contradicted') {
        unusable.push({ reference });
        this.logger.warn(
          `Reconcile: the deferred webhook of ${entry.idempotencyKey} named ${reference}, which ` +
            `does not agree with the entry (${result.why}); not taken`,
        );
      }
    }
    // Counted changed only for what this pass wrote: another may have dropped them first.
    const dropped =
      unusable.length > 0 && (await journal.dropDeferredEvents(entry.idempotencyKey, unusable));
    if (dropped || listed) return 'changed';
    return lookupFailed ? 'lookup-failed' : 'unchanged';
  }

  /**
   * Settles the entry of `idempotencyKey` by the service's `record` of `reference`: `'unknown'`
   * when the record is of another transaction, `'not-final'` while it is not final, else what the
   * journal's settlement did.
   */
  private async settleByRecord(
    journal: PaymentsJournal,
    idempotencyKey: string,
    reference: string,
    record: TransactionStatus,
  ): Promise<'unknown' | 'not-final' | JournalSettleResult> {
    if (record.code !== reference) return 'unknown';
    const outcome = recordOutcome(record);
    if (outcome === undefined) return 'not-final';
    return journal.settle({
      idempotencyKey,
      reference,
      outcome,
      ...recordFigures(record),
      by: 'status',
    });
  }

  private journal(): PaymentsJournal {
    const journal = this.runner.journal;
    if (journal === undefined) {
      throw new PaymentsReconcilerError(
        'PaymentsReconciler needs the payments journal: set the journal option of PaymentsModule, ' +
          'or of PaymentsTestingModule in a unit test (new InMemoryPaymentsJournal(), or RedisPaymentsJournal from @malipo/nestjs/redis)',
        { code: 'NO_JOURNAL' },
      );
    }
    return journal;
  }
}

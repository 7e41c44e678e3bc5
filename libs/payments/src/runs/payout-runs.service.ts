import { Inject, Injectable, Logger, type OnApplicationBootstrap } from '@nestjs/common';
import { createHash, randomUUID } from 'node:crypto';
import {
  PayoutRunConflictError,
  PayoutRunCreationError,
  PayoutRunNotFoundError,
  PayoutRunRefusedError,
  PayoutRunStateError,
  PayoutRunStoreError,
} from './payout-run.errors';
import type { PayoutRunStoreAction } from './payout-run.errors';
import type {
  CreatedPayoutRun,
  CreatePayoutRunOptions,
  PayoutRun,
  PayoutRunValidationReport,
  PayoutRunItemProblem,
  PayoutRunItemsPage,
  PayoutRunItemsQuery,
  PayoutRunItemState,
  PayoutRunReport,
  PayoutRunState,
} from './payout-run.interfaces';
import { PAYOUT_RUN_ITEM_STATES } from './payout-run.interfaces';
import { checkPayoutRunBalance } from './payout-run-balance';
import { inBatches } from './payout-run-settlement-schedule';
import { InMemoryPayoutRunStore } from './in-memory-payout-run.store';
import { PAYMENTS_LOGGER_CONTEXT } from '../payments.constants';
import { PaymentsError, PaymentsValidationError, withTypedFailure } from '../errors';
import { refusedForGood, sentAgainAsRetry } from '../journal/payments-journal';
import { ofAnotherAccount, PayoutRunEngineClosedError } from './payout-run-engine';
import type { PayoutRunEngine } from './payout-run-engine';
import { payoutRunCsv } from './payout-run-report';
import { PayoutRunExistsError } from './payout-run.store';
import type { PayoutRunItemRecord, PayoutRunRecord, PayoutRunStore } from './payout-run.store';
import {
  PAYOUT_RUN_ID_PATTERN,
  payoutRunItemKey,
  MAX_RUN_ID_LENGTH,
  validatePayoutRunItems,
  assertRunAccount,
} from './payout-run-validation';
import type { PreparedPayoutRunItem } from './payout-run-validation';
import { toPayoutRun, toPayoutRunItem } from './payout-run-view';
import { PayoutRunsPayments } from './payout-runs-payments';
import {
  PAYOUT_RUN_ENGINE,
  PAYOUT_RUN_STORE,
  PAYOUT_RUNS_RESOLVED_OPTIONS,
} from './payout-runs.constants';
import { PAYOUT_RUN_PACE_LIMITS } from './payout-runs.options';
import type { ResolvedPayoutRunsOptions } from './payout-runs.options';
import { printsAsNameOnly } from '../secret-holders';
import { hasAtMostCodePoints, REQUEST_RULES } from '../request-rules';
import { readObjectOfKnownKeys } from '../unknown-keys';

const DEFAULT_PAGE = 100;
const MAX_PAGE = 1000;

/** Which states allow which action (docs/payout-runs.md, "Run states"). */
const ALLOWED_FROM: Record<'pause' | 'resume' | 'cancel', readonly PayoutRunState[]> = {
  pause: ['running'],
  resume: ['paused'],
  cancel: ['running', 'paused'],
};

/** The HKDF purpose of the item keys' secret: never the journal's. */
const ITEM_KEY_PURPOSE = 'payout-run item keys v1';

/** A digest of the items as prepared (requests with defaults applied), in their order. */
function digestOf(items: readonly PreparedPayoutRunItem[]): string {
  const hash = createHash('sha256');
  for (const item of items) {
    hash.update(JSON.stringify([item.itemId, item.operation, item.request]));
    hash.update('\n');
  }
  return hash.digest('base64url');
}

/** A problem of the run as a whole, not of one item (`itemId` `-`). */
function runProblem(field: string, rule: string, message: string): PayoutRunItemProblem {
  return { itemId: '-', field, rule, message };
}

const RUN_ID_RULE = `runId must be 1 to ${MAX_RUN_ID_LENGTH} of the characters A-Z a-z 0-9 . _ : -`;

/** Whether `runId` is one a run can have. */
function isRunId(runId: unknown): runId is string {
  return typeof runId === 'string' && PAYOUT_RUN_ID_PATTERN.test(runId);
}

function checkRunId(runId: unknown): string {
  if (!isRunId(runId)) {
    throw new PayoutRunRefusedError([runProblem('runId', 'isPayoutRunId', RUN_ID_RULE)]);
  }
  return runId;
}

/** Refuses options that are not an object (`create()`, `create(null)`): nothing is sent. */
/** Every key of {@link CreatePayoutRunOptions}, which `validate()` takes whole too. */
const CREATE_OPTION_NAMES: Readonly<Record<keyof CreatePayoutRunOptions, true>> = {
  runId: true,
  name: true,
  items: true,
  concurrency: true,
  ratePerSecond: true,
  allowDuplicates: true,
  allowBalanceShortfall: true,
};
const CREATE_OPTION_KEYS: ReadonlySet<string> = new Set(Object.keys(CREATE_OPTION_NAMES));

/** The longest run `name`, as the longest text field of a request. */
const MAX_RUN_NAME_LENGTH = REQUEST_RULES.maxTextLength;

/**
 * Refuses options that are not an object, or hold a key that is not an option: a misspelt
 * `runID`, ignored, would give the run a random id, and a retried call would pay everyone again.
 */
function checkOptions(options: unknown): Partial<CreatePayoutRunOptions> {
  // Read once: what is checked is what is used, whatever getters the object has.
  const read = readObjectOfKnownKeys(
    options,
    'options',
    'options must be an object',
    CREATE_OPTION_KEYS,
    (shown) =>
      `${shown} is not an option of create() (options: ${[...CREATE_OPTION_KEYS].join(', ')})`,
  );
  if (read.problems) {
    throw new PayoutRunRefusedError(read.problems.map((problem) => ({ itemId: '-', ...problem })));
  }
  return read.fields;
}

/**
 * The run's `name`: a label for people, kept on the run in every store and shown on every read.
 * @throws PayoutRunRefusedError for a name that is not a string, or too long.
 */
function checkName(name: unknown): string | undefined {
  if (name !== undefined && typeof name !== 'string') {
    throw new PayoutRunRefusedError([runProblem('name', 'isString', 'name must be a string')]);
  }
  if (name !== undefined && !hasAtMostCodePoints(name, MAX_RUN_NAME_LENGTH)) {
    throw new PayoutRunRefusedError([
      runProblem('name', 'maxLength', `name must be at most ${MAX_RUN_NAME_LENGTH} characters`),
    ]);
  }
  return name;
}

function runLimit(
  name: keyof typeof PAYOUT_RUN_PACE_LIMITS,
  value: unknown,
  fallback: number,
): number {
  if (value === undefined) return fallback;
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 1) {
    throw new PayoutRunRefusedError([
      runProblem(name, 'isPositiveInteger', `${name} must be a positive integer`),
    ]);
  }
  const max = PAYOUT_RUN_PACE_LIMITS[name];
  if (value > max) {
    throw new PayoutRunRefusedError([runProblem(name, 'max', `${name} must be at most ${max}`)]);
  }
  return value;
}

/** Rethrows `error` unless the engine said it was closing. */
function unlessClosed(error: unknown): void {
  if (!(error instanceof PayoutRunEngineClosedError)) throw error;
}

/** One call of `create()` past its checks: what it creates, and whether it started the run. */
interface RunCreation {
  readonly runId: string;
  readonly items: readonly PreparedPayoutRunItem[];
  readonly itemsDigest: string;
  /** Handed to the engine (this call or the first): its payouts may have gone out. */
  started: boolean;
}

/**
 * How long a creation that lost its run id to another waits for that one to write its run (a
 * run of many items takes seconds), then how often it looks.
 */
const RACED_CREATION_WAIT_MS = 30_000;
const RACED_CREATION_POLL_MS = 100;

/**
 * Pays many people at once through the library's own payouts (docs/payout-runs.md): every item is
 * validated and the balance checked before anything is sent, each item is sent once under a key
 * derived from the run and the item and journaled first, at a pace that slows down when the
 * service answers 429.
 */
@Injectable()
export class PayoutRunsService implements OnApplicationBootstrap {
  /** The last control operation of each run, which the next one waits for. */
  private readonly controls = new Map<string, Promise<void>>();
  private secret: Buffer | string | undefined;

  constructor(
    private readonly payments: PayoutRunsPayments,
    @Inject(PAYOUT_RUN_STORE) private readonly store: PayoutRunStore,
    @Inject(PAYOUT_RUN_ENGINE) private readonly engine: PayoutRunEngine,
    @Inject(PAYOUT_RUNS_RESOLVED_OPTIONS) private readonly options: ResolvedPayoutRunsOptions,
  ) {}

  /**
   * Warns when the item keys would change with the account's password and nothing but the
   * journal remembers a run across a restart (the embedded store): a run created again after a
   * rotation would get new keys, and pay its items again (docs/payout-runs.md).
   */
  onApplicationBootstrap(): void {
    if (this.options.itemKeySecret !== undefined) return;
    if (!(this.store instanceof InMemoryPayoutRunStore)) return;
    if (!this.payments.payouts.keysFromPassword()) return;
    new Logger(PAYMENTS_LOGGER_CONTEXT).warn(
      'Payout runs: item keys derive from apiPassword (neither itemKeySecret nor ' +
        'journalFingerprintSecret is set), and runs are kept in memory: after a password ' +
        'rotation, a run created again would send its items under new keys and pay them again. ' +
        'Set itemKeySecret now, before any run (docs/payout-runs.md, "Exactly once per item")',
    );
  }

  /**
   * Validates every item, checks the balance, stores the run and starts it. With the `runId` of a
   * run that exists and the same items, answers that run (`existing: true`) and sends nothing:
   * give the id of your payroll batch, and a retried or doubled call pays nobody twice.
   * @throws PayoutRunRefusedError with every problem of every item, or the balance shortfall per
   *   currency (both figures); nothing was sent and no run was kept.
   * @throws PayoutRunConflictError when a run with this `runId` exists with other items.
   * @throws ServiceAPIError when the balance could not be read; nothing was sent.
   * @throws PayoutRunCreationError when the store, the journal or the engine failed after the
   *   checks: create again with its `runId` and the same items.
   */
  async create(given: CreatePayoutRunOptions): Promise<CreatedPayoutRun> {
    const options = checkOptions(given) as CreatePayoutRunOptions;
    checkName(options.name);
    const concurrency = runLimit('concurrency', options.concurrency, this.options.concurrency);
    const ratePerSecond = runLimit(
      'ratePerSecond',
      options.ratePerSecond,
      this.options.ratePerSecond,
    );
    const runId = options.runId === undefined ? randomUUID() : checkRunId(options.runId);
    const prepared = this.prepare(runId, options.items, options.allowDuplicates === true);
    if (!prepared.ok) throw new PayoutRunRefusedError(prepared.problems);
    const creation: RunCreation = {
      runId,
      items: prepared.items,
      itemsDigest: digestOf(prepared.items),
      started: false,
    };
    try {
      return await this.createChecked(creation, options, concurrency, ratePerSecond);
    } catch (error) {
      // Refusals and a balance that could not be read come before any start; after the run was
      // handed to the engine, every failure says that it may be paying.
      if (error instanceof PayoutRunStoreError) {
        throw new PayoutRunCreationError(runId, creation.started, error.cause);
      }
      if (error instanceof PaymentsError && !creation.started) throw error;
      throw new PayoutRunCreationError(runId, creation.started, error);
    }
  }

  /** {@link create} once every item passed its checks. */
  private async createChecked(
    creation: RunCreation,
    options: CreatePayoutRunOptions,
    concurrency: number,
    ratePerSecond: number,
  ): Promise<CreatedPayoutRun> {
    const { runId, itemsDigest, items } = creation;
    const existing = await this.existing(creation);
    if (existing) return existing;
    const balances = await this.payments.balances.all();
    let { check, shortfalls } = checkPayoutRunBalance(items, balances);
    if (shortfalls.length > 0 && options.allowBalanceShortfall !== true) {
      // A run created again after a crash (same ids, same keys): what the journal holds already
      // left the balance, or will not be sent again; only the rest must be covered.
      ({ check, shortfalls } = checkPayoutRunBalance(await this.notJournaled(items), balances));
      if (shortfalls.length > 0) throw new PayoutRunRefusedError([], shortfalls);
    }
    const now = new Date().toISOString();
    const stored = await this.storeRun(
      creation,
      {
        runId,
        ...(options.name === undefined ? {} : { name: String(options.name) }),
        state: 'running',
        createdAt: now,
        updatedAt: now,
        concurrency,
        ratePerSecond,
        balanceCheck: check,
        rateLimited: 0,
        itemsDigest,
        account: this.payments.accountDigest(),
      },
      items.map((item): PayoutRunItemRecord => ({
        runId,
        itemId: item.itemId,
        operation: item.operation,
        idempotencyKey: item.idempotencyKey,
        amount: item.amount,
        currency: item.currency,
        state: 'queued',
        sends: 0,
        updatedAt: now,
        request: item.request,
      })),
    );
    if (stored) return stored;
    await this.start(creation);
    return { ...(await this.get(runId)), existing: false };
  }

  /** Hands the run to the engine: from here on, its payouts may go out. */
  private async start(creation: RunCreation): Promise<void> {
    creation.started = true;
    try {
      await this.engine.start(creation.runId);
    } catch (error) {
      // Closing, the engine took nothing of the run: not one of its payouts went out by this call.
      if (error instanceof PayoutRunEngineClosedError) creation.started = false;
      throw error;
    }
  }

  /**
   * The items whose key the journal does not hold, or holds `refused` but not by the service for
   * good (sent again): any other entry is answered from the journal or stopped, never paid again
   * by this run.
   */
  private async notJournaled(
    items: readonly PreparedPayoutRunItem[],
  ): Promise<PreparedPayoutRunItem[]> {
    const toSend: PreparedPayoutRunItem[] = [];
    await inBatches(items, async (item) => {
      const entry = await this.payments.reconciler.get(item.idempotencyKey);
      if (entry === undefined || (sentAgainAsRetry(entry) && !refusedForGood(entry))) {
        toSend.push(item);
      }
    });
    return toSend;
  }

  /**
   * What {@link create} would say of these items, sending nothing and keeping nothing: every
   * problem of every item, then (when there is none) the balance check and its shortfalls.
   * @throws ServiceAPIError when the balance could not be read.
   */
  async validate(given: CreatePayoutRunOptions): Promise<PayoutRunValidationReport> {
    const options = checkOptions(given);
    // Without the run's id, the longest one it may have: its items' keys, and so the room their
    // callback URLs need for `malipo_key`, are then the longest `create()` can make.
    let runId = 'v'.repeat(MAX_RUN_ID_LENGTH);
    try {
      // The name and pace as create() checks them: options that pass here pass there.
      checkName(options.name);
      runLimit('concurrency', options.concurrency, this.options.concurrency);
      runLimit('ratePerSecond', options.ratePerSecond, this.options.ratePerSecond);
      if (options.runId !== undefined) runId = checkRunId(options.runId);
    } catch (error) {
      if (!(error instanceof PayoutRunRefusedError)) throw error;
      return { ok: false, problems: [...error.problems], shortfalls: [] };
    }
    const prepared = this.prepare(runId, options.items, options.allowDuplicates === true);
    if (!prepared.ok) return { ok: false, problems: [...prepared.problems], shortfalls: [] };
    const { check, shortfalls } = checkPayoutRunBalance(
      prepared.items,
      await this.payments.balances.all(),
    );
    return {
      ok: shortfalls.length === 0 || options.allowBalanceShortfall === true,
      problems: [],
      balanceCheck: check,
      shortfalls,
    };
  }

  /**
   * The idempotency key of an item of a run (docs/payout-runs.md, "Exactly once per item"): to
   * find its journal entry (`PaymentsReconciler.get`) when the run is gone.
   */
  itemKey(runId: string, itemId: string): string {
    return payoutRunItemKey(this.keySecret(), runId, itemId);
  }

  private prepare(
    runId: string,
    items: unknown,
    allowDuplicates: boolean,
  ): ReturnType<typeof validatePayoutRunItems> {
    if (!Array.isArray(items) || items.length === 0 || items.length > this.options.maxItems) {
      return {
        ok: false,
        problems: [
          runProblem(
            'items',
            'arraySize',
            `items must be a list of 1 to ${this.options.maxItems} payouts`,
          ),
        ],
      };
    }
    const secret = this.keySecret();
    return validatePayoutRunItems(
      (itemId) => payoutRunItemKey(secret, runId, itemId),
      items as unknown[],
      (operation, request, idempotencyKey) => {
        const prepared = this.payments.payouts.prepare(operation, request, idempotencyKey);
        assertRunAccount(operation.name, prepared, this.payments.username);
        return prepared;
      },
      allowDuplicates,
    );
  }

  /**
   * Stores the run: undefined once this creation stored it, or the run another creation of its id
   * stored meanwhile (a double click), answered by {@link existing}. While the id is taken
   * (`PayoutRunExistsError`) it waits up to 30 s for that run, asking the store again each time: a
   * creation that died holds the id only until its claim lapses (15 s on `RedisPayoutRunStore`),
   * and this one then takes it over. Any other failure is thrown at once, after one read for a
   * write whose answer was lost.
   */
  private async storeRun(
    creation: RunCreation,
    run: PayoutRunRecord,
    items: readonly PayoutRunItemRecord[],
  ): Promise<CreatedPayoutRun | undefined> {
    for (let waited = 0; ; waited += RACED_CREATION_POLL_MS) {
      try {
        await this.store.createRun(run, items);
        return undefined;
      } catch (error) {
        const existing = await this.existing(creation);
        if (existing) return existing;
        if (!(error instanceof PayoutRunExistsError) || waited >= RACED_CREATION_WAIT_MS) {
          throw error;
        }
      }
      await new Promise((resolve) => setTimeout(resolve, RACED_CREATION_POLL_MS));
    }
  }

  /** The run of this id when it holds these items; throws when it holds others. */
  private async existing(creation: RunCreation): Promise<CreatedPayoutRun | undefined> {
    const { runId } = creation;
    const record = await this.store.getRun(runId);
    if (!record) return undefined;
    if (ofAnotherAccount(record, this.payments)) throw new PayoutRunConflictError(runId, 'account');
    if (record.itemsDigest !== creation.itemsDigest) {
      throw new PayoutRunConflictError(runId, 'items');
    }
    // Started again in case the first call stopped between storing and starting it: an engine
    // leaves a run it works on already as it is. Finished, nothing left to send: its accepted and
    // in-doubt items are followed through the journal for `followInDoubtMs` after the finish, by
    // this process too (after a restart). An engine closing leaves it to whoever works on it.
    if (record.finishedAt === undefined) creation.started = true;
    if (
      record.finishedAt === undefined ||
      Date.now() - Date.parse(record.finishedAt) <= this.options.followInDoubtMs
    ) {
      await this.engine.start(runId).catch(unlessClosed);
    }
    return { ...(await this.get(runId)), existing: true };
  }

  private keySecret(): Buffer | string {
    this.secret ??= this.options.itemKeySecret ?? this.payments.payouts.deriveKey(ITEM_KEY_PURPOSE);
    return this.secret;
  }

  /**
   * The run: state, counts and totals per currency, the pace now, the balance check.
   * @throws PayoutRunNotFoundError; PaymentsValidationError for a `runId` no run can have.
   */
  get(runId: string): Promise<PayoutRun> {
    const refused = runIdRefusal(runId, 'get');
    if (refused) return Promise.reject(refused);
    return this.typed(runId, 'read', () => this.read(runId));
  }

  private async read(runId: string): Promise<PayoutRun> {
    const record = await this.store.getRun(runId);
    // Another account's run (an app sharing the store) is not this app's to read or steer: its
    // items name that account's payees, and a resume here would undo that app's pause.
    if (!record || ofAnotherAccount(record, this.payments)) throw new PayoutRunNotFoundError(runId);
    const summary = await this.store.summary(runId);
    return toPayoutRun(
      record,
      summary,
      this.engine.currentRatePerSecond(runId) ?? record.ratePerSecond,
    );
  }

  /**
   * A page of the run's items, in the order they were given, optionally in some states only.
   * @throws PayoutRunNotFoundError
   */
  items(runId: string, query: PayoutRunItemsQuery = {}): Promise<PayoutRunItemsPage> {
    const refused = runIdRefusal(runId, 'items');
    if (refused) return Promise.reject(refused);
    return this.typed(runId, 'read', () => this.pageOf(runId, query));
  }

  private async pageOf(runId: string, query: PayoutRunItemsQuery): Promise<PayoutRunItemsPage> {
    const { state, cursor, limit } = readItemsQuery(query);
    const states = state === undefined ? undefined : typeof state === 'string' ? [state] : state;
    await this.read(runId);
    const page = await this.store
      .listItems(runId, {
        limit,
        ...(states ? { states } : {}),
        ...(cursor === undefined ? {} : { cursor }),
      })
      .catch((error: unknown) => {
        // The stores refuse a cursor they did not give with a RangeError (docs/payout-runs.md).
        if (error instanceof RangeError && cursor !== undefined) {
          throw queryProblem(
            'cursor',
            'isPayoutRunCursor',
            'cursor must be a nextCursor of this run',
          );
        }
        throw error;
      });
    return {
      items: page.items.map(toPayoutRunItem),
      ...(page.nextCursor === undefined ? {} : { nextCursor: page.nextCursor }),
    };
  }

  /**
   * Every item with its state, amount, reference and reason, to reconcile against the bank or the
   * payroll: `'json'` as an object, `'csv'` as text (one line per item, header first).
   * @throws PayoutRunNotFoundError
   */
  report(runId: string, format: 'json'): Promise<PayoutRunReport>;
  report(runId: string, format: 'csv'): Promise<string>;
  /** A format chosen at run time (a query parameter): branch on the answer's type. */
  report(runId: string, format: 'json' | 'csv'): Promise<PayoutRunReport | string>;
  report(runId: string, format: 'json' | 'csv'): Promise<PayoutRunReport | string> {
    const refused = runIdRefusal(runId, 'report');
    if (refused) return Promise.reject(refused);
    if (format !== 'json' && format !== 'csv') {
      return Promise.reject(
        new PaymentsValidationError('PayoutRunsService.report', [
          { field: 'format', rule: 'isIn', message: 'format must be "json" or "csv"' },
        ]),
      );
    }
    return this.typed(runId, 'read', async () => {
      const run = await this.read(runId);
      const items = [];
      for (
        let cursor: string | undefined, first = true;
        first || cursor !== undefined;
        first = false
      ) {
        const page = await this.pageOf(runId, {
          limit: MAX_PAGE,
          ...(cursor ? { cursor } : {}),
        });
        items.push(...page.items);
        cursor = page.nextCursor;
      }
      return format === 'csv' ? payoutRunCsv(items) : { run, items };
    });
  }

  /**
   * Sends nothing new until {@link resume}; sends in flight end and are recorded.
   * @throws PayoutRunNotFoundError, PayoutRunStateError unless the run is running.
   */
  pause(runId: string): Promise<PayoutRun> {
    return this.control(runId, 'pause');
  }

  /** @throws PayoutRunNotFoundError, PayoutRunStateError unless the run is paused. */
  resume(runId: string): Promise<PayoutRun> {
    return this.control(runId, 'resume');
  }

  /**
   * Refuses every queued item (`refused`, never sent); sent items are left alone and still
   * followed to their outcome.
   * @throws PayoutRunNotFoundError, PayoutRunStateError when the run is completed or cancelled.
   */
  cancel(runId: string): Promise<PayoutRun> {
    return this.control(runId, 'cancel');
  }

  /**
   * One pause, resume or cancel of a run at a time in this process, each checked against the
   * state the one before left: concurrent calls cannot leave the store and the engine apart.
   */
  private control(runId: string, action: keyof typeof ALLOWED_FROM): Promise<PayoutRun> {
    const refused = runIdRefusal(runId, action);
    if (refused) return Promise.reject(refused);
    const before = this.controls.get(runId) ?? Promise.resolve();
    const next = before.then(() => this.typed(runId, action, () => this.change(runId, action)));
    const settled = next.then(
      () => undefined,
      () => undefined,
    );
    this.controls.set(runId, settled);
    void settled.then(() => {
      if (this.controls.get(runId) === settled) this.controls.delete(runId);
    });
    return next;
  }

  /** {@link control}'s step: checked against the stored state, then handed to the engine. */
  private async change(runId: string, action: keyof typeof ALLOWED_FROM): Promise<PayoutRun> {
    const run = await this.read(runId);
    if (!ALLOWED_FROM[action].includes(run.state)) {
      throw new PayoutRunStateError(runId, run.state, action);
    }
    await this.engine[action](runId);
    const after = await this.read(runId);
    // Another instance cancelled it meanwhile: this pause or resume did not take.
    if (after.state === 'cancelled' && action !== 'cancel') {
      throw new PayoutRunStateError(runId, after.state, action);
    }
    return after;
  }

  /**
   * `work`, whose failures are the library's typed errors: a store's or engine's own error becomes
   * a {@link PayoutRunStoreError}, its `cause`.
   */
  private typed<T>(
    runId: string,
    action: PayoutRunStoreAction,
    work: () => Promise<T>,
  ): Promise<T> {
    return withTypedFailure(work, (cause) => new PayoutRunStoreError(runId, action, cause));
  }
}

/**
 * The error for a `runId` no run can have, given to a read or a control (`method`): a path such as
 * `../x` or a number is the caller's mistake, not a run that is missing.
 */
function runIdRefusal(runId: unknown, method: string): PaymentsValidationError | undefined {
  if (isRunId(runId)) return undefined;
  return new PaymentsValidationError(`PayoutRunsService.${method}`, [
    { field: 'runId', rule: 'isPayoutRunId', message: RUN_ID_RULE },
  ]);
}

/** A query argument of the run's reads that breaks a rule: nothing was read. */
function queryProblem(field: string, rule: string, message: string): PaymentsValidationError {
  return new PaymentsValidationError('PayoutRunItemsQuery', [{ field, rule, message }]);
}

const ITEMS_QUERY_FIELDS: ReadonlySet<string> = new Set(['state', 'cursor', 'limit']);

/**
 * The fields of an `items()` query, checked before anything is read: a misspelt `states`, a state
 * given as the query itself, or an empty list, ignored, would list every item or none, and a
 * state from a query string's `?state[a]=` (an object) would fail as the store's fault.
 */
function readItemsQuery(query: unknown): {
  state?: PayoutRunItemState | PayoutRunItemState[];
  cursor?: string;
  limit: number;
} {
  const read = readObjectOfKnownKeys(
    query,
    'query',
    "query must be an object such as { state: 'in_doubt' }",
    ITEMS_QUERY_FIELDS,
    (shown) => `${shown} is not a field of the query (state, cursor, limit)`,
  );
  if (read.problems) throw new PaymentsValidationError('PayoutRunItemsQuery', read.problems);
  const given = read.fields;
  const limit = given.limit ?? DEFAULT_PAGE;
  if (typeof limit !== 'number' || !Number.isSafeInteger(limit) || limit < 1 || limit > MAX_PAGE) {
    throw queryProblem('limit', 'isInt', `limit must be a whole number from 1 to ${MAX_PAGE}`);
  }
  const isState = (value: unknown): value is PayoutRunItemState =>
    PAYOUT_RUN_ITEM_STATES.includes(value as PayoutRunItemState);
  const { state, cursor } = given;
  if (
    state !== undefined &&
    !isState(state) &&
    !(Array.isArray(state) && state.length > 0 && state.every(isState))
  ) {
    throw queryProblem(
      'state',
      'isIn',
      `state must be one of ${PAYOUT_RUN_ITEM_STATES.join(', ')}, or a list of them`,
    );
  }
  if (cursor !== undefined && typeof cursor !== 'string') {
    throw queryProblem('cursor', 'isPayoutRunCursor', 'cursor must be a nextCursor of this run');
  }
  return {
    ...(state === undefined ? {} : { state: state }),
    ...(cursor === undefined ? {} : { cursor }),
    limit,
  };
}

printsAsNameOnly(PayoutRunsService.prototype, 'PayoutRunsService');

import { Inject, Injectable } from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import {
  PayoutRunNotFoundError,
  PayoutRunRefusedError,
  PayoutRunStateError,
} from './payout-run.errors';
import type {
  CreatePayoutRunOptions,
  PayoutRun,
  PayoutRunItemsPage,
  PayoutRunItemsQuery,
  PayoutRunReport,
  PayoutRunState,
} from './payout-run.interfaces';
import { PAYOUT_RUN_ITEM_STATES } from './payout-run.interfaces';
import { checkPayoutRunBalance } from './payout-run-balance';
import type { PayoutRunEngine } from './payout-run-engine';
import { payoutRunCsv } from './payout-run-report';
import type { PayoutRunItemRecord, PayoutRunStore } from './payout-run.store';
import { validatePayoutRunItems } from './payout-run-validation';
import { toPayoutRun, toPayoutRunItem } from './payout-run-view';
import { PayoutRunsPayments } from './payout-runs-payments';
import {
  PAYOUT_RUN_ENGINE,
  PAYOUT_RUN_STORE,
  PAYOUT_RUNS_RESOLVED_OPTIONS,
} from './payout-runs.constants';
import type { ResolvedPayoutRunsOptions } from './payout-runs.options';

const DEFAULT_PAGE = 100;
const MAX_PAGE = 1000;

/** Which states allow which action (docs/payout-runs.md, "Run states"). */
const ALLOWED_FROM: Record<'pause' | 'resume' | 'cancel', readonly PayoutRunState[]> = {
  pause: ['running'],
  resume: ['paused'],
  cancel: ['running', 'paused'],
};

function runLimit(name: string, value: unknown, fallback: number): number {
  if (value === undefined) return fallback;
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 1) {
    throw new PayoutRunRefusedError([
      {
        itemId: '-',
        field: name,
        rule: 'isPositiveInteger',
        message: `${name} must be a positive integer`,
      },
    ]);
  }
  return value;
}

/**
 * Pays many people at once through the library's own payouts (docs/payout-runs.md): every item is
 * validated and the balance checked before anything is sent, each item is sent once under a key
 * derived from the run and the item and journaled first, at a pace that slows down when the
 * service answers 429.
 */
@Injectable()
export class PayoutRunsService {
  constructor(
    private readonly payments: PayoutRunsPayments,
    @Inject(PAYOUT_RUN_STORE) private readonly store: PayoutRunStore,
    @Inject(PAYOUT_RUN_ENGINE) private readonly engine: PayoutRunEngine,
    @Inject(PAYOUT_RUNS_RESOLVED_OPTIONS) private readonly options: ResolvedPayoutRunsOptions,
  ) {}

  /**
   * Validates every item, checks the balance, stores the run and starts it.
   * @throws PayoutRunRefusedError with every problem of every item, or the balance shortfall per
   *   currency (both figures); nothing was sent and no run was kept.
   * @throws ServiceAPIError when the balance could not be read; nothing was sent.
   */
  async create(options: CreatePayoutRunOptions): Promise<PayoutRun> {
    const items: unknown = options.items;
    if (!Array.isArray(items) || items.length === 0 || items.length > this.options.maxItems) {
      throw new PayoutRunRefusedError([
        {
          itemId: '-',
          field: 'items',
          rule: 'arraySize',
          message: `items must be a list of 1 to ${this.options.maxItems} payouts`,
        },
      ]);
    }
    const concurrency = runLimit('concurrency', options.concurrency, this.options.concurrency);
    const ratePerSecond = runLimit(
      'ratePerSecond',
      options.ratePerSecond,
      this.options.ratePerSecond,
    );
    const runId = randomUUID();
    const validation = validatePayoutRunItems(
      runId,
      items as unknown[],
      this.payments.payouts.defaults,
      options.allowDuplicates === true,
    );
    if (!validation.ok) throw new PayoutRunRefusedError(validation.problems);
    const { check, shortfalls } = checkPayoutRunBalance(
      validation.items,
      await this.payments.balances.all(),
    );
    if (shortfalls.length > 0 && options.allowBalanceShortfall !== true) {
      throw new PayoutRunRefusedError([], shortfalls);
    }
    const now = new Date().toISOString();
    await this.store.createRun(
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
      },
      validation.items.map((item): PayoutRunItemRecord => ({
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
    await this.engine.start(runId);
    return this.get(runId);
  }

  /**
   * The run: state, counts and totals per currency, the pace now, the balance check.
   * @throws PayoutRunNotFoundError
   */
  async get(runId: string): Promise<PayoutRun> {
    const record = await this.store.getRun(runId);
    if (!record) throw new PayoutRunNotFoundError(runId);
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
  async items(runId: string, query: PayoutRunItemsQuery = {}): Promise<PayoutRunItemsPage> {
    await this.get(runId);
    const limit = query.limit ?? DEFAULT_PAGE;
    if (!Number.isSafeInteger(limit) || limit < 1 || limit > MAX_PAGE) {
      throw new RangeError(`limit must be a whole number from 1 to ${MAX_PAGE}`);
    }
    const states =
      query.state === undefined
        ? undefined
        : typeof query.state === 'string'
          ? [query.state]
          : [...query.state];
    for (const state of states ?? []) {
      if (!PAYOUT_RUN_ITEM_STATES.includes(state)) {
        throw new RangeError(`state must be one of ${PAYOUT_RUN_ITEM_STATES.join(', ')}`);
      }
    }
    const page = await this.store.listItems(runId, {
      limit,
      ...(states ? { states } : {}),
      ...(query.cursor === undefined ? {} : { cursor: query.cursor }),
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
  async report(runId: string, format: 'json' | 'csv'): Promise<PayoutRunReport | string> {
    const run = await this.get(runId);
    const items = [];
    for (
      let cursor: string | undefined, first = true;
      first || cursor !== undefined;
      first = false
    ) {
      const page = await this.items(runId, { limit: MAX_PAGE, ...(cursor ? { cursor } : {}) });
      items.push(...page.items);
      cursor = page.nextCursor;
    }
    if (format === 'csv') return payoutRunCsv(items);
    if (format === 'json') return { run, items };
    throw new RangeError('format must be "json" or "csv"');
  }

  /**
   * Sends nothing new until {@link resume}; sends in flight end and are recorded.
   * @throws PayoutRunNotFoundError, PayoutRunStateError unless the run is running.
   */
  async pause(runId: string): Promise<PayoutRun> {
    await this.allow(runId, 'pause');
    await this.engine.pause(runId);
    return this.get(runId);
  }

  /** @throws PayoutRunNotFoundError, PayoutRunStateError unless the run is paused. */
  async resume(runId: string): Promise<PayoutRun> {
    await this.allow(runId, 'resume');
    await this.engine.resume(runId);
    return this.get(runId);
  }

  /**
   * Refuses every queued item (`refused`, never sent); sent items are left alone and still
   * followed to their outcome.
   * @throws PayoutRunNotFoundError, PayoutRunStateError when the run is completed or cancelled.
   */
  async cancel(runId: string): Promise<PayoutRun> {
    await this.allow(runId, 'cancel');
    await this.engine.cancel(runId);
    return this.get(runId);
  }

  private async allow(runId: string, action: keyof typeof ALLOWED_FROM): Promise<void> {
    const run = await this.get(runId);
    if (!ALLOWED_FROM[action].includes(run.state)) {
      throw new PayoutRunStateError(runId, run.state, action);
    }
  }
}

import { BadRequestException, Injectable } from '@nestjs/common';
import {
  PAYOUT_RUN_ITEM_STATES,
  PayoutRunRefusedError,
  PayoutRunsService,
} from '@malipo/nestjs/runs';
import type { PayoutRun, PayoutRunItem, PayoutRunItemState } from '@malipo/nestjs/runs';
import type { PayrollRefusal } from './payroll-rows';
import { payrollProblems, readPayrollCsv } from './payroll-rows';

/** States in which the run still works on an item: the bar counts the others as done. */
const OPEN_STATES: ReadonlySet<PayoutRunItemState> = new Set(['queued', 'sending', 'accepted']);

/** States a person should look at: not paid, or not known to be. */
const ATTENTION_STATES: readonly PayoutRunItemState[] = ['failed', 'refused', 'in_doubt'];

/** Items listed under "needs attention"; the report has them all. */
const ATTENTION_LIMIT = 100;

/** Items in one state, and their amounts per currency. */
export interface PayrollStateTotal {
  count: number;
  amounts: Record<string, number>;
}

/** What the payroll page shows of a run. */
export interface PayrollProgress {
  run: PayoutRun;
  states: Record<PayoutRunItemState, PayrollStateTotal>;
  total: number;
  /** Items in none of the open states (queued, sending, accepted). */
  done: number;
  /** `done` in whole percent, rounded down: 100 only when every item is done. */
  percent: number;
  /** Some item is still queued, sending or accepted. */
  open: boolean;
  /** The first failed, refused and in-doubt items, with their reason. */
  attention: PayoutRunItem[];
}

/** Payroll files in, payout runs out (`PayoutRunsExceptionFilter` answers the runs' errors). */
@Injectable()
export class PayrollService {
  constructor(private readonly runs: PayoutRunsService) {}

  /**
   * Reads the file and creates its run.
   * @throws BadRequestException with a {@link PayrollRefusal} body: nothing was sent.
   */
  async create(
    csv: string,
    options: { name?: string; ratePerSecond?: number },
  ): Promise<PayrollProgress> {
    const read = readPayrollCsv(csv);
    if (!read.ok) throw refusal(read.problems, []);
    let run: PayoutRun;
    try {
      run = await this.runs.create({ ...options, items: read.file.items });
    } catch (error) {
      if (!(error instanceof PayoutRunRefusedError)) throw error;
      throw refusal(payrollProblems(read.file, error.problems), [...error.shortfalls]);
    }
    return this.progress(run.runId);
  }

  /**
   * The run with counts and sums per state (the library keeps them, in minor units), and the first
   * items that need a person.
   */
  async progress(runId: string): Promise<PayrollProgress> {
    const run = await this.runs.get(runId);
    const states = Object.fromEntries(
      PAYOUT_RUN_ITEM_STATES.map((state) => {
        const totals = Object.entries(run.totals.byState[state]);
        return [
          state,
          {
            count: run.counts[state],
            amounts: Object.fromEntries(totals.map(([currency, { amount }]) => [currency, amount])),
          },
        ];
      }),
    ) as Record<PayoutRunItemState, PayrollStateTotal>;
    const { items: attention } = await this.runs.items(runId, {
      state: ATTENTION_STATES,
      limit: ATTENTION_LIMIT,
    });
    const total = PAYOUT_RUN_ITEM_STATES.reduce((sum, state) => sum + run.counts[state], 0);
    const open = [...OPEN_STATES].reduce((sum, state) => sum + run.counts[state], 0);
    const done = total - open;
    return {
      run,
      states,
      total,
      done,
      percent: total === 0 ? 100 : Math.floor((done * 100) / total),
      open: open > 0,
      attention,
    };
  }

  /**
   * @throws PayoutRunNotFoundError, PayoutRunStateError when the run's state does not allow it
   *   (answered 404 and 409 by `PayoutRunsExceptionFilter`).
   */
  async act(runId: string, action: 'pause' | 'resume' | 'cancel'): Promise<PayrollProgress> {
    await this.runs[action](runId);
    return this.progress(runId);
  }

  /** The run's report, one line per item (the library's columns). */
  report(runId: string): Promise<string> {
    return this.runs.report(runId, 'csv');
  }
}

function refusal(
  problems: PayrollRefusal['problems'],
  shortfalls: PayrollRefusal['shortfalls'],
): BadRequestException {
  const body: PayrollRefusal & { statusCode: number; error: string } = {
    statusCode: 400,
    error: 'Bad Request',
    message: `The run was refused, nothing was sent: ${[
      problems.length > 0 ? `${problems.length} broken rule(s)` : '',
      shortfalls.length > 0 ? 'the balance does not cover it' : '',
    ]
      .filter(Boolean)
      .join('; ')}`,
    problems,
    shortfalls,
  };
  return new BadRequestException(body);
}

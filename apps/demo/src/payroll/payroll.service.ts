import {
  BadRequestException,
  ConflictException,
  Injectable,
  NotFoundException,
} from '@nestjs/common';
import {
  PAYOUT_RUN_ITEM_STATES,
  PayoutRunNotFoundError,
  PayoutRunRefusedError,
  PayoutRunStateError,
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

const PAGE_SIZE = 1000;

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

/** Sums of amounts in the currencies' minor unit, then back: 0.1 + 0.2 must show 0.3. */
function addAmount(amounts: Record<string, number>, currency: string, amount: number): void {
  amounts[currency] = Math.round(((amounts[currency] ?? 0) + amount) * 100) / 100;
}

/** Payroll files in, payout runs out; the runs API's errors as HTTP answers. */
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
   * The run with counts and sums per state. `PayoutRunsService.get` sums only all items and the
   * succeeded ones, so the sums per state come from reading every item (fine at a demo's size).
   */
  async progress(runId: string): Promise<PayrollProgress> {
    const run = await this.answer(() => this.runs.get(runId));
    const states = Object.fromEntries(
      PAYOUT_RUN_ITEM_STATES.map((state) => [state, { count: 0, amounts: {} }]),
    ) as Record<PayoutRunItemState, PayrollStateTotal>;
    const attention: PayoutRunItem[] = [];
    let cursor: string | undefined;
    do {
      const page = await this.runs.items(runId, {
        limit: PAGE_SIZE,
        ...(cursor === undefined ? {} : { cursor }),
      });
      for (const item of page.items) {
        states[item.state].count += 1;
        addAmount(states[item.state].amounts, item.currency, item.amount);
        if (ATTENTION_STATES.includes(item.state) && attention.length < ATTENTION_LIMIT) {
          attention.push(item);
        }
      }
      cursor = page.nextCursor;
    } while (cursor !== undefined);
    const total = PAYOUT_RUN_ITEM_STATES.reduce((sum, state) => sum + states[state].count, 0);
    const open = [...OPEN_STATES].reduce((sum, state) => sum + states[state].count, 0);
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

  /** @throws NotFoundException, ConflictException when the run's state does not allow it. */
  async act(runId: string, action: 'pause' | 'resume' | 'cancel'): Promise<PayrollProgress> {
    await this.answer(() => this.runs[action](runId));
    return this.progress(runId);
  }

  /** The run's report, one line per item (the library's columns). */
  report(runId: string): Promise<string> {
    return this.answer(() => this.runs.report(runId, 'csv'));
  }

  private async answer<T>(call: () => Promise<T>): Promise<T> {
    try {
      return await call();
    } catch (error) {
      if (error instanceof PayoutRunNotFoundError) {
        throw new NotFoundException(
          `No payout run ${error.runId}: runs live in the demo's memory and end with it`,
        );
      }
      if (error instanceof PayoutRunStateError) throw new ConflictException(error.message);
      throw error;
    }
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

import { Logger } from '@nestjs/common';
import { PAYMENTS_LOGGER_CONTEXT } from '../payments.constants';
import type { PayoutRunEngine, PayoutRunEngineContext } from './payout-run-engine';
import {
  finishPayoutRunIfDone,
  followPayoutRunItem,
  PayoutRunProgressTimers,
  refuseCancelledPayoutRunItem,
  sendPayoutRunItem,
  UNSETTLED_ITEM_STATES,
} from './payout-run-item-steps';
import { PayoutRunPacer } from './payout-run-pacer';

/** One run this engine executes. */
interface ActiveRun {
  readonly runId: string;
  readonly pacer: PayoutRunPacer;
  /** Item ids still to send, in order; a 429'd item goes back to the front. */
  readonly queue: string[];
  state: 'running' | 'paused' | 'cancelled';
  pumping: boolean;
  readonly sending: Set<Promise<void>>;
  /** Items `accepted` or `in_doubt`: their journal entries are read until they settle. */
  readonly watched: Set<string>;
  finished: boolean;
  /** 429s answered to the run's sends, counted here and written to the store. */
  rateLimited: number;
}

const PAGE = 1000;

/**
 * Runs in this process (docs/payout-runs.md, "Embedded engine"): one instance, state in its
 * {@link PayoutRunStore}, lost on restart with an in-memory store; the payments journal then says
 * which items were sent. Each item: `queued` → `sending` (written before the call, which the
 * journal writes ahead again under the item's key) → the call's outcome; an accepted or in-doubt
 * item is then followed through the journal, which its webhook or the reconciler settles.
 */
export class InProcessPayoutRunEngine implements PayoutRunEngine {
  private readonly logger = new Logger(PAYMENTS_LOGGER_CONTEXT);
  private readonly runs = new Map<string, ActiveRun>();
  private readonly progress: PayoutRunProgressTimers;
  private pollTimer: NodeJS.Timeout | undefined;
  private polling = false;
  private closed = false;

  constructor(private readonly deps: PayoutRunEngineContext) {
    this.progress = new PayoutRunProgressTimers(deps, (runId) => this.currentRatePerSecond(runId));
  }

  async start(runId: string): Promise<void> {
    const record = await this.deps.store.getRun(runId);
    if (!record || this.closed) return;
    const run: ActiveRun = {
      runId,
      pacer: new PayoutRunPacer(record),
      queue: [],
      state: record.state === 'paused' ? 'paused' : 'running',
      pumping: false,
      sending: new Set(),
      watched: new Set(),
      finished: false,
      rateLimited: record.rateLimited,
    };
    this.runs.set(runId, run);
    for (
      let cursor: string | undefined, first = true;
      first || cursor !== undefined;
      first = false
    ) {
      const page = await this.deps.store.listItems(runId, {
        states: ['queued', ...UNSETTLED_ITEM_STATES],
        limit: PAGE,
        ...(cursor === undefined ? {} : { cursor }),
      });
      for (const item of page.items) {
        if (item.state === 'queued') run.queue.push(item.itemId);
        else this.watch(run, item.itemId);
      }
      cursor = page.nextCursor;
    }
    this.pump(run);
    await this.checkFinished(run);
  }

  async pause(runId: string): Promise<void> {
    const run = this.runs.get(runId);
    if (run?.state === 'running') run.state = 'paused';
    await this.deps.store.updateRun(runId, { state: 'paused' });
  }

  async resume(runId: string): Promise<void> {
    const run = this.runs.get(runId);
    await this.deps.store.updateRun(runId, { state: 'running' });
    if (run?.state !== 'paused') return;
    run.state = 'running';
    this.pump(run);
  }

  async cancel(runId: string): Promise<void> {
    const run = this.runs.get(runId);
    await this.deps.store.updateRun(runId, { state: 'cancelled' });
    if (!run) return;
    run.state = 'cancelled';
    for (const itemId of run.queue.splice(0)) {
      await refuseCancelledPayoutRunItem(this.deps, runId, itemId);
    }
    await this.checkFinished(run);
  }

  currentRatePerSecond(runId: string): number | undefined {
    return this.runs.get(runId)?.pacer.currentRatePerSecond;
  }

  /** Nest lifecycle: before the payments client closes, so sends in flight are recorded. */
  onModuleDestroy(): Promise<void> {
    return this.close();
  }

  async close(): Promise<void> {
    this.closed = true;
    clearInterval(this.pollTimer);
    this.pollTimer = undefined;
    this.progress.cancel();
    for (const run of this.runs.values()) run.pacer.stop();
    await Promise.all([...this.runs.values()].flatMap((run) => [...run.sending]));
  }

  /** Starts sends while the run is running, has items and the pacer lets them go. */
  private pump(run: ActiveRun): void {
    if (run.pumping) return;
    run.pumping = true;
    void (async () => {
      try {
        while (run.state === 'running' && run.queue.length > 0) {
          if (!(await run.pacer.acquire())) break;
          const itemId = run.state === 'running' ? run.queue.shift() : undefined;
          if (itemId === undefined) {
            run.pacer.release();
            break;
          }
          const sending = this.send(run, itemId).finally(() => {
            run.pacer.release();
            run.sending.delete(sending);
          });
          run.sending.add(sending);
        }
      } finally {
        run.pumping = false;
      }
    })();
  }

  /** Sends one item; never rejects (a failure of the store is logged and leaves the item). */
  private async send(run: ActiveRun, itemId: string): Promise<void> {
    try {
      const result = await sendPayoutRunItem(this.deps, run.runId, itemId);
      if (result.kind === 'requeued') {
        if (result.rateLimited) {
          run.pacer.onRateLimited(result.retryAfterMs);
          run.rateLimited += 1;
          await this.deps.store.updateRun(run.runId, { rateLimited: run.rateLimited });
        }
        // Not executed: it goes again, first, unless the run was cancelled meanwhile.
        if (run.state === 'cancelled')
          await refuseCancelledPayoutRunItem(this.deps, run.runId, itemId);
        else {
          run.queue.unshift(itemId);
          this.pump(run);
        }
      } else if (result.kind !== 'skipped') {
        run.pacer.onAccepted();
        if (result.kind === 'accepted' || result.state === 'in_doubt') this.watch(run, itemId);
      }
      this.progress.schedule(run.runId);
      await this.checkFinished(run);
    } catch (error) {
      this.logger.error(
        `Payout run ${run.runId}: item ${itemId} could not be recorded (${error instanceof Error ? error.message : 'error'}); the journal holds its send`,
      );
    }
  }

  private watch(run: ActiveRun, itemId: string): void {
    run.watched.add(itemId);
    if (this.pollTimer || this.closed) return;
    this.pollTimer = setInterval(() => void this.poll(), this.deps.settlementPollMs);
    this.pollTimer.unref();
  }

  /**
   * Reads the journal entry of each accepted or in-doubt item: the webhook module and the
   * reconciler settle entries there, and the run follows.
   */
  private async poll(): Promise<void> {
    if (this.polling) return;
    this.polling = true;
    try {
      for (const run of this.runs.values()) {
        if (run.watched.size === 0) continue;
        for (const itemId of [...run.watched]) await this.follow(run, itemId);
        this.progress.schedule(run.runId);
        await this.checkFinished(run);
      }
      if ([...this.runs.values()].every((run) => run.watched.size === 0)) {
        clearInterval(this.pollTimer);
        this.pollTimer = undefined;
      }
    } catch (error) {
      this.logger.warn(
        `Payout runs: the journal could not be read (${error instanceof Error ? error.message : 'error'}); trying again`,
      );
    } finally {
      this.polling = false;
    }
  }

  private async follow(run: ActiveRun, itemId: string): Promise<void> {
    if (!(await followPayoutRunItem(this.deps, run.runId, itemId))) run.watched.delete(itemId);
  }

  /** Marks the run finished once no item is queued, sending or accepted; announces it once. */
  private async checkFinished(run: ActiveRun): Promise<void> {
    if (run.finished) return;
    if (await finishPayoutRunIfDone(this.deps, run.runId, run.pacer.currentRatePerSecond)) {
      run.finished = true;
      this.progress.cancel(run.runId);
    }
  }
}

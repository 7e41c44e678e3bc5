import { Logger } from '@nestjs/common';
import { PAYMENTS_LOGGER_CONTEXT } from '../payments.constants';
import { InMemoryPayoutRunStore } from './in-memory-payout-run.store';
import {
  ofAnotherAccount,
  PayoutRunEngineClosedError,
  RunsOfAnotherAccount,
} from './payout-run-engine';
import type { PayoutRunEngine, PayoutRunEngineContext } from './payout-run-engine';
import {
  finishPayoutRunIfDone,
  followPayoutRunItem,
  PayoutRunProgressTimers,
  refuseCancelledPayoutRunItem,
  sendPayoutRunItem,
  takeOverPayoutRunItem,
  UNSETTLED_ITEM_STATES,
} from './payout-run-item-steps';
import { PayoutRunPacer } from './payout-run-pacer';
import type { PacedSend } from './payout-run-pacer';
import { inBatches, PayoutRunSettlementSchedule } from './payout-run-settlement-schedule';

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
  /** Items whose send ended in a store failure: read again at each poll until the store answers. */
  readonly recovering: Set<string>;
  finished: boolean;
  /** When it finished (ms since the epoch): in-doubt items are followed `followInDoubtMs` more. */
  finishedAt?: number;
  /** 429s answered to the run's sends, counted here and written to the store. */
  rateLimited: number;
}

const PAGE = 1000;

/** Nothing of the run left to send, follow or read again here. */
function isIdle(run: ActiveRun): boolean {
  return run.watched.size === 0 && run.sending.size === 0 && run.recovering.size === 0;
}

/**
 * Runs in this process (docs/payout-runs.md, "Embedded engine"): one instance, state in its
 * {@link PayoutRunStore}, lost on restart with an in-memory store; the payments journal then says
 * which items were sent. Each item: `queued` → `sending` (written before the call, which the
 * journal writes ahead again under the item's key) → the call's outcome; an accepted or in-doubt
 * item is then followed through the journal, which its webhook or the reconciler settles.
 */
export class InProcessPayoutRunEngine implements PayoutRunEngine {
  private readonly logger = new Logger(PAYMENTS_LOGGER_CONTEXT);
  /** Runs of another account met here (an app sharing the store), each logged once. */
  private readonly othersRuns = new RunsOfAnotherAccount(this.logger);
  private readonly runs = new Map<string, ActiveRun>();
  private readonly progress: PayoutRunProgressTimers;
  private pollTimer: NodeJS.Timeout | undefined;
  private polling = false;
  private closed = false;
  private readonly schedule: PayoutRunSettlementSchedule;

  constructor(private readonly deps: PayoutRunEngineContext) {
    this.progress = new PayoutRunProgressTimers(deps, (runId) => this.currentRatePerSecond(runId));
    this.schedule = new PayoutRunSettlementSchedule(deps.settlementPollMs);
  }

  /** Starts the run here; a run started already is left as it is (create() may ask again). */
  async start(runId: string): Promise<void> {
    if (this.runs.has(runId)) return;
    // Nothing would ever send the run's items here (a create() among the app's last requests):
    // its caller hears so, and creates it again elsewhere or after the restart.
    if (this.closed) throw new PayoutRunEngineClosedError(runId);
    const record = await this.deps.store.getRun(runId);
    if (this.closed) throw new PayoutRunEngineClosedError(runId);
    if (!record || this.runs.has(runId)) return;
    if (ofAnotherAccount(record, this.deps.payments)) {
      this.othersRuns.met(runId);
      return;
    }
    const pacer = new PayoutRunPacer(record);
    // create() read the balance just before it stored the run: a request the service counts too.
    pacer.countRequestAt(Date.parse(record.createdAt));
    const run: ActiveRun = {
      runId,
      pacer,
      queue: [],
      state: record.state === 'running' || record.state === 'cancelled' ? record.state : 'paused',
      pumping: false,
      sending: new Set(),
      watched: new Set(),
      recovering: new Set(),
      finished: record.finishedAt !== undefined,
      ...(record.finishedAt === undefined ? {} : { finishedAt: Date.parse(record.finishedAt) }),
      rateLimited: record.rateLimited,
    };
    this.runs.set(runId, run);
    try {
      await this.load(run);
    } catch (error) {
      // Not held here then: the next start() (create() again) loads it anew.
      this.forget(run);
      throw error;
    }
    // A run stored cancelled (its cancel's refusals cut short) has its queued items refused here.
    if (run.state === 'cancelled') await this.refuseQueued(run);
    this.pump(run);
    await this.checkFinished(run);
    if (run.finished && isIdle(run)) this.forget(run);
  }

  /** Queues the run's `queued` items, takes over its `sending` ones, watches the unsettled. */
  private async load(run: ActiveRun): Promise<void> {
    for (
      let cursor: string | undefined, first = true;
      first || cursor !== undefined;
      first = false
    ) {
      const page = await this.deps.store.listItems(run.runId, {
        states: ['queued', 'sending', ...UNSETTLED_ITEM_STATES],
        limit: PAGE,
        ...(cursor === undefined ? {} : { cursor }),
      });
      for (const item of page.items) {
        if (item.state === 'queued') {
          run.queue.push(item.itemId);
        } else {
          // Not sent from here: this engine did not hold the run. Its sender died with its
          // process (a store that outlives it, such as RedisPayoutRunStore); never sent again.
          if (item.state === 'sending') await takeOverPayoutRunItem(this.deps, item);
          this.watch(run, item.itemId);
        }
      }
      cursor = page.nextCursor;
    }
  }

  /*
   * Control operations write the store conditionally and then take the engine's state from what
   * the store holds: the store is the one truth, and an item starts only while the store says
   * `running` (sendPayoutRunItem), so the engine cannot send after a pause the store recorded.
   * The service serialises them per run.
   */

  async pause(runId: string): Promise<void> {
    const run = this.runs.get(runId);
    // Stops the pump at once; the store's condition stops a send already past it.
    if (run?.state === 'running') run.state = 'paused';
    await this.deps.store.updateRun(runId, { state: 'paused' }, { states: ['running'] });
    if (run) await this.syncState(run);
  }

  async resume(runId: string): Promise<void> {
    await this.deps.store.updateRun(runId, { state: 'running' }, { states: ['paused'] });
    const run = await this.held(runId);
    if (run) await this.syncState(run);
  }

  async cancel(runId: string): Promise<void> {
    await this.deps.store.updateRun(
      runId,
      { state: 'cancelled' },
      { states: ['running', 'paused'] },
    );
    const run = await this.held(runId);
    if (!run) return;
    await this.syncState(run);
    if (run.state !== 'cancelled') return;
    await this.refuseQueued(run);
    await this.checkFinished(run);
  }

  /** Refuses every item still queued of a cancelled run (never sent). */
  private async refuseQueued(run: ActiveRun): Promise<void> {
    for (const itemId of run.queue.splice(0)) {
      await refuseCancelledPayoutRunItem(this.deps, run.runId, itemId);
    }
  }

  /**
   * The run as this engine holds it, taken up from the store when it did not (its start failed in
   * `create()`, or a store that outlived the process holds it): a resume or a cancel must still
   * reach its items.
   */
  private async held(runId: string): Promise<ActiveRun | undefined> {
    // Closing, it takes up no run: the change is stored, for whoever starts the run next.
    if (!this.runs.has(runId) && !this.closed) await this.start(runId);
    return this.runs.get(runId);
  }

  /** Takes the run's state from the store; pumps when it is running. */
  private async syncState(run: ActiveRun): Promise<void> {
    const stored = (await this.deps.store.getRun(run.runId))?.state;
    if (stored === 'running' || stored === 'paused' || stored === 'cancelled') run.state = stored;
    else if (stored === 'completed') run.state = 'paused';
    if (run.state === 'running') this.pump(run);
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
    this.progress.stop();
    for (const run of this.runs.values()) run.pacer.stop();
    await Promise.all([...this.runs.values()].flatMap((run) => [...run.sending]));
    for (const run of this.runs.values()) this.logLeftAtShutdown(run);
  }

  /**
   * Says what a run left undone at shutdown, so that a payroll stopped by a redeploy is not found
   * out from the bank: items never sent, and sends not settled yet; and how to go on.
   */
  private logLeftAtShutdown(run: ActiveRun): void {
    if (run.finished || run.state === 'cancelled') return;
    const unsent = run.queue.length;
    const unsettled = run.watched.size + run.recovering.size;
    if (unsent === 0 && unsettled === 0) return;
    const lost = this.deps.store instanceof InMemoryPayoutRunStore;
    const journalLost = this.deps.payments.reconciler.journalInMemory === true;
    this.logger.warn(
      `Payout run ${run.runId} stopped at shutdown, unfinished: ${unsent} item(s) never sent, ` +
        `${unsettled} sent and not settled yet. ` +
        (lost && journalLost
          ? 'Its in-memory store and journal lose it: nothing here will tell what was sent. Do ' +
            "not create it again as it was, which would send every item again: the service's " +
            'transactions (and the webhooks still to come) tell what was paid; pay the rest in a ' +
            'new run'
          : lost
            ? 'Its in-memory store loses it: after the restart, create() it again with the same ' +
              'runId and items, and the journal answers what was sent while only what never ' +
              'went out is sent'
            : 'create() it again with the same runId after the restart, and this process takes ' +
              'it over') +
        ' (docs/payout-runs.md, "The embedded engine and crashes")',
    );
  }

  /** Starts sends while the run is running, has items and the pacer lets them go. */
  private pump(run: ActiveRun): void {
    if (run.pumping) return;
    run.pumping = true;
    void (async () => {
      try {
        while (run.state === 'running' && run.queue.length > 0) {
          const paced = await run.pacer.acquire();
          if (paced === undefined) break;
          const itemId = run.state === 'running' ? run.queue.shift() : undefined;
          if (itemId === undefined) {
            run.pacer.release(paced, false);
            break;
          }
          const sending = this.send(run, itemId, paced).then((requested) => {
            run.pacer.release(paced, requested);
            run.sending.delete(sending);
            if (run.finished && isIdle(run)) this.forget(run);
          });
          run.sending.add(sending);
        }
      } finally {
        run.pumping = false;
      }
    })();
  }

  /**
   * Sends one item; never rejects (a failure of the store is logged and leaves the item).
   * Resolves whether a request reached the wire, for the pacer.
   */
  private async send(run: ActiveRun, itemId: string, paced: PacedSend): Promise<boolean> {
    let requested = true;
    try {
      const result = await sendPayoutRunItem(this.deps, run.runId, itemId, {
        onWire: () => run.pacer.left(paced),
      });
      requested = result.requested;
      if (result.kind === 'foreign') {
        // Created anew by another account's app under its id since this engine took it up.
        this.othersRuns.met(run.runId);
        run.queue.length = 0;
        run.state = 'paused';
        this.forget(run);
      } else if (result.kind === 'held') {
        // The store was not `running` when the item was to go: a pause or cancel won the race.
        if (run.state === 'running') run.state = 'paused';
        run.queue.unshift(itemId);
        await this.syncState(run);
        if (run.state === 'cancelled') {
          for (const queued of run.queue.splice(0)) {
            await refuseCancelledPayoutRunItem(this.deps, run.runId, queued);
          }
        }
      } else if (result.kind === 'requeued') {
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
      } else if (result.kind === 'accepted' || result.kind === 'settled') {
        run.pacer.onAccepted();
        if (result.kind === 'accepted' || result.state === 'in_doubt') this.watch(run, itemId);
      }
      this.progress.schedule(run.runId);
      // While items wait here the run cannot be done: the store's counts are read once the queue
      // is empty, not after every send (a summary per item is most of the run's own cost).
      if (run.queue.length === 0) await this.checkFinished(run);
    } catch (error) {
      this.logger.error(
        `Payout run ${run.runId}: item ${itemId} could not be recorded (${error instanceof Error ? error.message : 'error'}); it is read again every ${this.deps.settlementPollMs} ms until the store answers`,
      );
      run.recovering.add(itemId);
      this.startPolling();
    }
    return requested;
  }

  private watch(run: ActiveRun, itemId: string): void {
    run.watched.add(itemId);
    this.startPolling();
  }

  private startPolling(): void {
    if (this.pollTimer || this.closed) return;
    this.pollTimer = setInterval(() => void this.poll(), this.deps.settlementPollMs);
    this.pollTimer.unref();
  }

  /**
   * Goes on with items whose send ended in a store failure, from what the store holds now:
   * `queued` is sent again, `sending` is taken over from the journal (this process's send has
   * ended: what the journal says was not sent goes again), `accepted` and `in_doubt` are followed.
   */
  private async recover(run: ActiveRun): Promise<void> {
    for (const itemId of [...run.recovering]) {
      let item = await this.deps.store.getItem(run.runId, itemId);
      if (item?.state === 'sending') {
        await takeOverPayoutRunItem(this.deps, item, { senderEnded: true });
        item = await this.deps.store.getItem(run.runId, itemId);
      }
      run.recovering.delete(itemId);
      if (item?.state === 'queued') {
        if (run.state === 'cancelled') {
          await refuseCancelledPayoutRunItem(this.deps, run.runId, itemId);
        } else run.queue.push(itemId);
      } else if (item && UNSETTLED_ITEM_STATES.includes(item.state)) {
        this.watch(run, itemId);
      }
    }
    this.pump(run);
    if (run.queue.length === 0) await this.checkFinished(run);
  }

  /**
   * Reads the journal entry of each accepted or in-doubt item: the webhook module and the
   * reconciler settle entries there, and the run follows.
   */
  private async poll(): Promise<void> {
    if (this.polling) return;
    this.polling = true;
    try {
      for (const run of [...this.runs.values()]) {
        if (
          run.finishedAt !== undefined &&
          Date.now() - run.finishedAt > this.deps.followInDoubtMs
        ) {
          // Finished long ago: its in-doubt items are left to the reconciler and to people.
          this.forget(run);
          continue;
        }
        if (run.recovering.size + run.watched.size === 0) continue;
        const record = await this.deps.store.getRun(run.runId);
        if (record && ofAnotherAccount(record, this.deps.payments)) {
          this.othersRuns.met(run.runId);
          this.forget(run);
          continue;
        }
        if (run.recovering.size > 0) await this.recover(run);
        if (run.watched.size === 0) continue;
        const due = [...run.watched].filter((itemId) => this.schedule.isDue(run.runId, itemId));
        if (due.length === 0) continue;
        await inBatches(due, (itemId) => this.follow(run, itemId));
        this.progress.schedule(run.runId);
        await this.checkFinished(run);
      }
      if ([...this.runs.values()].every((run) => run.watched.size + run.recovering.size === 0)) {
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
    if (await followPayoutRunItem(this.deps, run.runId, itemId)) {
      this.schedule.missed(run.runId, itemId);
      return;
    }
    run.watched.delete(itemId);
    this.schedule.forget(run.runId, itemId);
    if (run.finished && isIdle(run)) this.forget(run);
  }

  /** Nothing left to send or follow here: the run is let go (the store still has it). */
  private forget(run: ActiveRun): void {
    run.pacer.stop();
    this.progress.cancel(run.runId);
    this.schedule.forget(run.runId);
    this.runs.delete(run.runId);
  }

  /** Marks the run finished once no item is queued, sending or accepted; announces it once. */
  private async checkFinished(run: ActiveRun): Promise<void> {
    if (run.finished) return;
    if (await finishPayoutRunIfDone(this.deps, run.runId, run.pacer.currentRatePerSecond)) {
      run.finished = true;
      run.finishedAt = Date.now();
      this.progress.cancel(run.runId);
      if (isIdle(run)) this.forget(run);
    }
  }
}

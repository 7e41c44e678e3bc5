import { Logger } from '@nestjs/common';
import { Queue, Worker } from 'bullmq';
import type { ConnectionOptions, Job } from 'bullmq';
import type { Redis, RedisOptions } from 'ioredis';
import { createHash, randomUUID } from 'node:crypto';
import { PAYMENTS_LOGGER_CONTEXT } from '../../payments.constants';
import {
  assertKnownOptions,
  moduleOptionError,
  textOption,
  wholeNumberOption,
} from '../../known-options';
import {
  connectRedis,
  quit,
  redactCommandArguments,
  withoutPassword,
} from '../../redis/redis-connection';
import { InMemoryPayoutRunStore } from '../in-memory-payout-run.store';
import { ofAnotherAccount, RunsOfAnotherAccount } from '../payout-run-engine';
import type {
  PayoutRunEngine,
  PayoutRunEngineContext,
  PayoutRunEngineFactory,
} from '../payout-run-engine';
import {
  finishPayoutRunIfDone,
  followPayoutRunItem,
  PayoutRunProgressTimers,
  refuseCancelledPayoutRunItem,
  sendPayoutRunItem,
  takeOverPayoutRunItem,
  UNSETTLED_ITEM_STATES,
} from '../payout-run-item-steps';
import type { PayoutRunItemState } from '../payout-run.interfaces';
import type { PayoutRunRecord } from '../payout-run.store';
import { inBatches, PayoutRunSettlementSchedule } from '../payout-run-settlement-schedule';
import { BullMQPayoutRunPace, limiterOf } from './bullmq-payout-run-pace';
import { printsAsNameOnly } from '../../secret-holders';
import type { SecretRedactor } from '../../secret-redactor';
import { within } from '../../within';
import { restOnRedisRefusals } from './rest-on-redis-refusals';
import { throttledWarning } from './throttled-warning';

/** Options of {@link bullmqPayoutRunEngine}. */
export interface BullMQPayoutRunEngineOptions {
  /** `redis://[user:password@]host:port[/db]` or `rediss://...` of the Redis BullMQ works on. */
  url?: string;
  /**
   * ioredis options (with or without `url`). BullMQ makes its own connections from them (a
   * worker blocks on one), with `maxRetriesPerRequest: null` as it requires.
   */
  connection?: RedisOptions;
  /** BullMQ's key prefix, and the prefix of the engine's own keys. Default `malipo-runs`. */
  prefix?: string;
  /**
   * How long a worker holds an item's job without renewing (ms): after a worker died, its items
   * are taken over (and resolved through the journal, never re-sent) after this, one or two
   * `stalledIntervalMs` and a free place in the run (88 and 104 s measured with the defaults,
   * docs/payout-runs.md, "Crashes with BullMQ"). Default 30,000 (BullMQ's).
   */
  lockDurationMs?: number;
  /** How often workers look for jobs of dead workers (ms). Default 30,000 (BullMQ's). */
  stalledIntervalMs?: number;
  /**
   * Attempts of an item's job whose processing failed (Redis or the store failing), exponential
   * backoff between them. After the last, the job is dropped and the item's job added again by
   * the engine's next round (docs/payout-runs.md, "Crashes with BullMQ"). Default 8.
   */
  jobAttempts?: number;
  /** First backoff between two attempts of a job (ms), doubling each time. Default 1000. */
  jobBackoffMs?: number;
  /**
   * How long a run's first BullMQ command here may take (ms). BullMQ waits for its connection
   * without limit (a Redis that refuses the password, or hangs); past this, the call that needed
   * the run's queue (`create()`, `pause()`...) rejects, and the engine's next round tries again.
   * Default 10,000.
   */
  setupTimeoutMs?: number;
}

/** One item's job: the item id only, the request stays in the store (it holds phone numbers). */
interface ItemJobData {
  readonly itemId: string;
}

/** A run this instance works on: its queue and its worker here. */
interface AttachedRun {
  readonly runId: string;
  readonly queue: Queue<ItemJobData>;
  readonly worker: Worker<ItemJobData>;
  /** The run's `ratePerSecond`: the pace it returns to. */
  readonly ceiling: number;
  /** The pace now, as last read from Redis. */
  rate: number;
  /** A job failed its last attempt: the next round adds the jobs of its items again. */
  jobsLost: boolean;
}

/** Attempts of a job whose processing failed (the store or Redis failing): it is safe to re-run. */
const JOB_ATTEMPTS = 8;
/** Items with a job: `sending` ones too, whose job is taken over (never sent again). */
const JOB_STATES: readonly PayoutRunItemState[] = ['queued', 'sending'];
/** A job may be taken over many times (each instance dying in turn): each time is safe. */
const MAX_STALLED = 1_000_000;
/** Items read per round trip. */
const PAGE = 1000;
/** Default of `setupTimeoutMs`. */
const SETUP_TIMEOUT_MS = 10_000;

/**
 * The BullMQ queue of a run. BullMQ refuses `:` in a queue name, which a run id may hold: it is
 * written `%3A` there (a run id holds no `%`, so no two runs share a queue), and a run id without
 * one keeps the name it always had.
 * @internal
 */
export function payoutRunQueueName(runId: string): string {
  return `run-${runId.replaceAll(':', '%3A')}`;
}

/** A job id from the item's key: the same item is never added twice to its run's queue. */
export function payoutRunJobId(idempotencyKey: string): string {
  // BullMQ refuses ids with `:` or all digits; item ids may hold either.
  return `i${createHash('sha256').update(idempotencyKey).digest('hex')}`;
}

/**
 * The `sendClaim` of a send by the worker now holding `job`: the job (its id and creation time: a
 * job added again under the id is another), this hold of it (`attemptsStarted`, which BullMQ
 * counts up each time a worker takes the job, a take-back after a stall included), how many times
 * BullMQ had taken the job back as stalled when it was taken (`stalledCounter`), and a random part,
 * so that no two sends ever write the same claim.
 */
function holdClaim(job: Job<ItemJobData>): string {
  return `bullmq:${job.id ?? ''}:${job.timestamp}:${job.attemptsStarted}:${job.stalledCounter}:${randomUUID()}`;
}

const HOLD_CLAIM_PARTS = /^bullmq:(.*):(\d{1,15}):(\d{1,15}):(\d{1,15}):[0-9a-f-]{36}$/;

/**
 * Whether `sendClaim` is that of an earlier hold of `job` whose worker has ended it: an earlier
 * take (`attemptsStarted`) while BullMQ has taken the job back as stalled not once since that take
 * (`stalledCounter` unchanged). A job leaves its worker otherwise only when that worker's processing
 * ended (done, failed, put back), and with it its send. A stall since then means the worker lost
 * the job without ending, and may still send: its claim is not ended, and the item is taken over
 * as one whose sender may live (held in doubt when the journal holds nothing of its key). The
 * counter read when the job was taken may be short of a stall during that hold: it then reads as a
 * stall, the safe side.
 */
function isEndedHoldOf(job: Job<ItemJobData>, sendClaim: string | undefined): boolean {
  const parts = sendClaim === undefined ? null : HOLD_CLAIM_PARTS.exec(sendClaim);
  if (parts === null) return false;
  const [, id, timestamp, started, stalled] = parts;
  return (
    id === (job.id ?? '') &&
    Number(timestamp) === job.timestamp &&
    Number(started) < job.attemptsStarted &&
    Number(stalled) === job.stalledCounter
  );
}

/**
 * Runs on BullMQ (docs/payout-runs.md, "Engines"), every instance of the app a worker:
 * - one queue per run (`run-<runId>`), one job per item (id from its key), a worker for it in
 *   every instance; BullMQ's global concurrency and rate limit are the run's `concurrency` and
 *   pace, a 429 pauses the whole queue for its `Retry-After` (`queue.rateLimit`) and puts the job
 *   back (`Worker.RateLimitError`), pause and resume are BullMQ's;
 * - runs and items live in a shared {@link PayoutRunStore} (`RedisPayoutRunStore`), readable
 *   from any instance; runs not done are listed in Redis, and each instance takes up those it
 *   does not work on yet (at boot too: a run survives a redeploy);
 * - a job whose worker died is given to another worker by BullMQ; that worker finds the item
 *   `sending` and never sends it again: the journal under its key says what happened, else the
 *   item is `in_doubt`.
 */
export class BullMQPayoutRunEngine implements PayoutRunEngine {
  private readonly logger = new Logger(PAYMENTS_LOGGER_CONTEXT);
  private readonly runs = new Map<string, AttachedRun>();
  /** Runs of another account met here (an app sharing the store), each logged once. */
  private readonly othersRuns = new RunsOfAnotherAccount(this.logger);
  /** Runs being attached: one queue and one worker per run here, however many ask at once. */
  private readonly attaching = new Map<string, Promise<AttachedRun | undefined>>();
  private readonly progress: PayoutRunProgressTimers;
  private readonly client: Redis;
  private readonly pace: BullMQPayoutRunPace;
  private readonly prefix: string;
  private readonly bullConnection: ConnectionOptions;
  private tickTimer: NodeJS.Timeout | undefined;
  private ticking: Promise<void> | undefined;
  private closed = false;
  private readonly schedule: PayoutRunSettlementSchedule;

  constructor(
    private readonly context: PayoutRunEngineContext,
    private readonly options: BullMQPayoutRunEngineOptions = {},
  ) {
    checkEngineOptions(options);
    this.prefix = options.prefix ?? 'malipo-runs';
    // ioredis 6 types `retryStrategy` as possibly null, which BullMQ's own copy of the options
    // type does not list; ioredis takes null at run time (no reconnecting).
    this.bullConnection = {
      ...options.connection,
      ...(options.url === undefined ? {} : { url: options.url }),
    } as ConnectionOptions;
    ({ client: this.client } = connectRedis(
      {
        ...(options.url === undefined ? {} : { url: options.url }),
        connection: options.connection ?? {},
      },
      'BullMQPayoutRunEngine',
      'payout runs wait',
    ));
    this.pace = new BullMQPayoutRunPace(this.client, (runId) => `${this.prefix}:pace:${runId}`);
    this.progress = new PayoutRunProgressTimers(context, (runId) =>
      this.currentRatePerSecond(runId),
    );
    this.schedule = new PayoutRunSettlementSchedule(context.settlementPollMs);
  }

  /** Nest lifecycle: takes up the runs left in Redis (a redeploy), then looks for new ones. */
  async onApplicationBootstrap(): Promise<void> {
    // Its instances share runs, and take up those of a dead one: what each sent must be in a
    // journal all see, which outlives the process.
    if (this.context.payments.reconciler.journalInMemory) {
      this.closed = true;
      await quit(this.client);
      throw moduleOptionError(
        'PaymentsModule',
        'journal',
        'isShared',
        'bullmqPayoutRunEngine needs a journal every instance shares and that outlives a ' +
          'restart (RedisPaymentsJournal from @malipo/nestjs/redis, or your own store): with ' +
          'InMemoryPaymentsJournal, an item sent before a crash is never settled, and no other ' +
          'instance can tell what was sent (docs/payout-runs.md, "Engines")',
      );
    }
    void this.judgeServer();
    await this.tick();
    this.tickTimer = setInterval(() => void this.tick(), this.context.settlementPollMs);
    this.tickTimer.unref();
  }

  /** Nest lifecycle: before the payments client closes, so sends in flight are recorded. */
  onModuleDestroy(): Promise<void> {
    return this.close();
  }

  /**
   * Says at boot, at error level, a `url` of a Redis Cluster node: BullMQ's keys of a run span
   * slots no one node holds, so its runs fail (MOVED) or stall at the node's first failover. A
   * Redis that is down or refuses `INFO` is not judged.
   */
  private async judgeServer(): Promise<void> {
    try {
      if (/^cluster_enabled:1\b/m.test(await this.client.info('cluster'))) {
        this.logger.error(
          'Payout runs: bullmqPayoutRunEngine is given a node of a Redis Cluster: it needs one ' +
            'Redis (standalone, or Sentinel), and its runs fail or stall on a Cluster ' +
            '(docs/payout-runs.md, "Engines")',
        );
      }
    } catch {
      // Down at boot, or INFO refused: not judged.
    }
  }

  /*
   * BullMQ's queues and workers make connections of their own, which `connectRedis` does not
   * guard: what they reject with has the arguments of a failed AUTH (the password) taken out
   * before it leaves the engine.
   */

  start(runId: string): Promise<void> {
    return withoutCredentials(this.startNow(runId));
  }

  pause(runId: string): Promise<void> {
    return withoutCredentials(this.pauseNow(runId));
  }

  resume(runId: string): Promise<void> {
    return withoutCredentials(this.resumeNow(runId));
  }

  cancel(runId: string): Promise<void> {
    return withoutCredentials(this.cancelNow(runId));
  }

  private async startNow(runId: string): Promise<void> {
    // Listed first, also while this engine closes: should this instance die while adding the
    // jobs, or shut down before it works on the run (a create() among its last requests), another
    // instance takes it up, or this app once restarted.
    await this.listed(runId);
    if (this.closed) return;
    const run = await this.attach(runId);
    if (run) await this.finishIfDone(run);
  }

  /*
   * The store's run state is the truth: an item moves to `sending` only while it says `running`
   * (in the same Lua step), so no item starts once a pause is stored. BullMQ's queue pause only
   * saves workers the trip, and follows the stored state.
   */

  private async pauseNow(runId: string): Promise<void> {
    await this.context.store.updateRun(runId, { state: 'paused' }, { states: ['running'] });
    await this.followStoredState(runId);
  }

  private async resumeNow(runId: string): Promise<void> {
    const resumed = await this.context.store.updateRun(
      runId,
      { state: 'running' },
      { states: ['paused'] },
    );
    if (resumed) await this.listed(runId);
    await this.followStoredState(runId);
  }

  /**
   * Lists a run the store holds unfinished in the runs in progress: one whose `create()` failed
   * before its start listed it is in no engine's list, and a resume or a cancel must still reach
   * its items. Listing a run that is there already changes nothing.
   */
  private async listed(runId: string): Promise<void> {
    await this.client.sadd(this.activeKey, runId);
  }

  /** Pauses or resumes the run's queue as the store says. */
  private async followStoredState(runId: string): Promise<void> {
    const run = await this.attach(runId);
    const state = (await this.context.store.getRun(runId))?.state;
    if (!run) return;
    if (state === 'paused') await run.queue.pause();
    else await run.queue.resume();
  }

  private async cancelNow(runId: string): Promise<void> {
    const cancelled = await this.context.store.updateRun(
      runId,
      { state: 'cancelled' },
      { states: ['running', 'paused'] },
    );
    if (!cancelled) return;
    await this.listed(runId);
    const run = await this.attach(runId);
    if (!run) return;
    // Jobs not taken yet are removed; a job taken meanwhile finds the run cancelled.
    await run.queue.drain(true);
    await run.queue.resume();
    await this.forEachItem(runId, ['queued'], (itemId) =>
      refuseCancelledPayoutRunItem(this.context, runId, itemId),
    );
    // The drain also removed the jobs of items a dead worker left `sending` (BullMQ had put them
    // back to wait): each gets its job again, which takes it over from the journal, never sends.
    await this.addJobs(run);
    await this.finishIfDone(run);
  }

  currentRatePerSecond(runId: string): number | undefined {
    return this.runs.get(runId)?.rate;
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    clearInterval(this.tickTimer);
    this.tickTimer = undefined;
    // A tick or an attach under way makes no worker once closed: each is waited for, so that no
    // worker outlives close().
    await this.whileRedisAnswers(Promise.all([this.ticking, ...this.attaching.values()]));
    this.progress.stop();
    const runs = [...this.runs.values()];
    // BullMQ waits for the jobs in progress: their sends end and are recorded. Not while Redis
    // does not answer: BullMQ could end none, and the app's shutdown would wait for Redis.
    const workersClosed = Promise.all(runs.map((run) => run.worker.close()));
    if (!(await this.whileRedisAnswers(workersClosed))) {
      this.logger.warn(
        'Payout runs: Redis did not answer while the engine closed: its workers were closed ' +
          'without waiting for BullMQ; an item in flight is taken over from the journal by the ' +
          'next worker (docs/payout-runs.md, "Engines")',
      );
      await this.settledWithinSetup(Promise.all(runs.map((run) => run.worker.close(true))));
    }
    await this.settledWithinSetup(Promise.all(runs.map((run) => run.queue.close())));
    this.runs.clear();
    await quit(this.client);
  }

  /**
   * Whether `work` settled, waited for as long as Redis answers a `PING` within `setupTimeoutMs`
   * between two looks; false as soon as one goes unanswered (Redis down or stalled).
   */
  private async whileRedisAnswers(work: Promise<unknown>): Promise<boolean> {
    const ms = this.options.setupTimeoutMs ?? SETUP_TIMEOUT_MS;
    let settled = false;
    const done = work.then(
      () => (settled = true),
      () => (settled = true),
    );
    for (;;) {
      await this.settledWithin(done, ms);
      if (settled) return true;
      const answers = await within(this.client.ping(), ms, () => new Error('no answer')).then(
        () => true,
        () => false,
      );
      if (!answers) return settled;
    }
  }

  /** Waits for `work` to settle, at most `setupTimeoutMs`. */
  private settledWithinSetup(work: Promise<unknown>): Promise<void> {
    return this.settledWithin(work, this.options.setupTimeoutMs ?? SETUP_TIMEOUT_MS);
  }

  /** Waits for `work` to settle, at most `ms`; never rejects. */
  private async settledWithin(work: Promise<unknown>, ms: number): Promise<void> {
    await within(work, ms, () => new Error('late')).catch(() => undefined);
  }

  private get activeKey(): string {
    return `${this.prefix}:active`;
  }

  /** The run's queue and a worker for it here; `undefined` when closed or no such run. */
  private attach(runId: string): Promise<AttachedRun | undefined> {
    const known = this.runs.get(runId);
    if (known || this.closed) return Promise.resolve(known);
    let attaching = this.attaching.get(runId);
    if (!attaching) {
      attaching = this.attachNow(runId).finally(() => this.attaching.delete(runId));
      this.attaching.set(runId, attaching);
    }
    return attaching;
  }

  private async attachNow(runId: string): Promise<AttachedRun | undefined> {
    const record = await this.context.store.getRun(runId);
    if (!record || this.closed) return undefined;
    if (ofAnotherAccount(record, this.context.payments)) {
      this.othersRuns.met(runId);
      return undefined;
    }
    // A run retired meanwhile by another instance: a new queue here would write BullMQ's keys
    // again, and no instance would remove them.
    if ((await this.client.sismember(this.activeKey, runId)) === 0) return undefined;
    const queue = this.queueOf(runId);
    const rate = (await this.pace.current(runId)) ?? record.ratePerSecond;
    // The run's limits are BullMQ's, for every worker of the queue together. The first command
    // over BullMQ's own connection: bounded, so that a Redis it cannot use fails the caller.
    try {
      await this.withinSetup(queue.setGlobalConcurrency(record.concurrency), runId);
    } catch (error) {
      void queue.close().catch(() => undefined);
      throw error;
    }
    const { max, duration } = limiterOf(rate);
    await queue.setGlobalRateLimit(max, duration);
    // Closed meanwhile: close() waits for this attach, and finds no worker to close.
    if (this.closed) {
      await this.settledWithinSetup(queue.close());
      return undefined;
    }
    const worker = new Worker<ItemJobData>(
      payoutRunQueueName(runId),
      (job) =>
        this.process(runId, job).catch((error: unknown) => {
          throw this.withoutCredentialsOf(error);
        }),
      {
        connection: this.bullConnection,
        prefix: this.prefix,
        autorun: false,
        concurrency: record.concurrency,
        maxStalledCount: MAX_STALLED,
        ...(this.options.lockDurationMs === undefined
          ? {}
          : { lockDuration: this.options.lockDurationMs }),
        ...(this.options.stalledIntervalMs === undefined
          ? {}
          : { stalledInterval: this.options.stalledIntervalMs }),
      },
    );
    const warn = this.bullMQWarning(runId);
    worker.on('error', warn);
    restOnRedisRefusals(worker, () => this.closed || this.runs.get(runId) !== run);
    const attempts = this.options.jobAttempts ?? JOB_ATTEMPTS;
    worker.on('failed', (job, error) => {
      const last = (job?.attemptsMade ?? 0) >= attempts;
      if (last) run.jobsLost = true;
      this.logger.warn(
        `Payout run ${runId}: item ${job?.data.itemId ?? '?'} ${last ? 'failed its last attempt; its job is added again' : 'will be tried again'} (${error.message})`,
      );
    });
    const run: AttachedRun = {
      runId,
      queue,
      worker,
      ceiling: record.ratePerSecond,
      rate,
      jobsLost: false,
    };
    this.runs.set(runId, run);
    // Started once the run is known here: its jobs look it up.
    worker.run().catch(warn);
    await this.addJobs(run);
    return run;
  }

  /** A job per queued item; one already there under its id is left as it is. */
  private async addJobs(run: AttachedRun): Promise<void> {
    let jobs: { name: string; data: ItemJobData; opts: object }[] = [];
    const flush = async () => {
      if (jobs.length > 0) await run.queue.addBulk(jobs);
      jobs = [];
    };
    await this.forEachItem(run.runId, JOB_STATES, async (itemId, idempotencyKey) => {
      jobs.push({
        name: 'payout',
        data: { itemId },
        opts: {
          jobId: payoutRunJobId(idempotencyKey),
          attempts: this.options.jobAttempts ?? JOB_ATTEMPTS,
          backoff: { type: 'exponential', delay: this.options.jobBackoffMs ?? 1000 },
          removeOnComplete: true,
          // A job out of attempts is dropped, so its item's job can be added again (a failed
          // job would keep its id, and the item would stay queued forever).
          removeOnFail: true,
        },
      });
      if (jobs.length >= PAGE) await flush();
    });
    await flush();
  }

  /**
   * One item's job, on whichever instance BullMQ gave it to. Resolves once the item is recorded;
   * throws `RateLimitError` to put the job back untried (a 429, a paused run, a closing client).
   */
  private async process(runId: string, job: Job<ItemJobData>): Promise<void> {
    const run = this.runs.get(runId);
    const { store } = this.context;
    // Detached meanwhile (closing, or the run retired): back to the queue for a worker that has it.
    if (!run) throw Worker.RateLimitError();
    // Read once per job: held here from before the run was created anew by another account's
    // app, its jobs are that app's engine's. A pause or cancel stored after this read makes the
    // store refuse the item's start (`held` below), so the state read here needs no second read.
    const record = await store.getRun(runId);
    if (record && ofAnotherAccount(record, this.context.payments)) throw this.letGo(run);
    let item = await store.getItem(runId, job.data.itemId);
    if (!item) return;
    if (item.state === 'sending') {
      // Written `sending` by a worker that lost the job (it died, or stalled and may live on); or
      // by an earlier hold of this job that ended in a store failure (its write landed, its
      // answer was lost), which the journal says whether it sent: `queued` again when it did not.
      const senderEnded = isEndedHoldOf(job, item.sendClaim);
      await takeOverPayoutRunItem(this.context, item, { senderEnded });
      const now = senderEnded ? await store.getItem(runId, job.data.itemId) : undefined;
      if (now?.state !== 'queued') {
        await this.afterItem(run);
        return;
      }
      item = now;
    }
    if (item.state !== 'queued') return;
    if (!record) return;
    if (record.state === 'cancelled') {
      await refuseCancelledPayoutRunItem(this.context, runId, item.itemId);
      await this.afterItem(run);
      return;
    }
    if (this.closed) throw Worker.RateLimitError();
    if (record.state === 'paused') throw await this.pausedQueue(run);
    const result = await sendPayoutRunItem(this.context, runId, item.itemId, {
      sendClaim: holdClaim(job),
    });
    if (result.kind === 'foreign') throw this.letGo(run);
    if (result.kind === 'held') {
      // Paused or cancelled between the read above and the send: the store refused the start.
      const state = (await store.getRun(runId))?.state;
      if (state === 'cancelled') {
        await refuseCancelledPayoutRunItem(this.context, runId, item.itemId);
        await this.afterItem(run);
        return;
      }
      if (state === 'paused') throw await this.pausedQueue(run);
      throw Worker.RateLimitError();
    }
    if (result.kind === 'requeued') {
      if (result.rateLimited) {
        const pace = await this.pace.rateLimited(runId, run.ceiling, result.retryAfterMs);
        await this.setRate(run, pace.rate);
        await run.queue.rateLimit(pace.pauseMs);
        await store.updateRun(runId, { rateLimited: pace.rateLimited });
      }
      throw Worker.RateLimitError();
    }
    if ((result.kind === 'accepted' || result.kind === 'settled') && run.rate < run.ceiling) {
      await this.setRate(run, await this.pace.recovered(runId, run.ceiling));
    }
    await this.afterItem(run);
  }

  /**
   * The run is paused in the store (by `pause()`, or by itself after sends in doubt): its queue is
   * paused too, so that workers stop taking its jobs only to put them back. Returns the error that
   * puts this job back untried.
   */
  private async pausedQueue(run: AttachedRun): Promise<Error> {
    await run.queue.pause();
    return Worker.RateLimitError();
  }

  /**
   * Makes the run's queue follow the stored state, and gives its items their jobs again when the
   * queue has none while the store has items to send or take over. Each step alone can lose a
   * race with another instance (a pause and a resume stored and applied in opposite orders, a
   * drain): every tick puts it right.
   */
  private async reconcileQueue(run: AttachedRun): Promise<void> {
    const state = (await this.context.store.getRun(run.runId))?.state;
    if (state === undefined) return;
    const paused = await run.queue.isPaused();
    if (state === 'paused' && !paused) await run.queue.pause();
    else if (state !== 'paused' && paused) await run.queue.resume();
    const { counts } = await this.context.store.summary(run.runId);
    if (counts.queued + counts.sending === 0) return;
    // `waiting` counts the jobs of a paused queue too.
    const jobs = await run.queue.getJobCounts(
      'active',
      'waiting',
      'delayed',
      'prioritized',
      'waiting-children',
    );
    if (Object.values(jobs).every((count) => count === 0)) run.jobsLost = true;
  }

  /** Keeps BullMQ's rate limit of the run at the pace now, when it changed. */
  private async setRate(run: AttachedRun, rate: number): Promise<void> {
    const before = limiterOf(run.rate);
    run.rate = rate;
    const after = limiterOf(rate);
    if (before.max !== after.max || before.duration !== after.duration) {
      await run.queue.setGlobalRateLimit(after.max, after.duration);
    }
  }

  private async afterItem(run: AttachedRun): Promise<void> {
    this.progress.schedule(run.runId);
    await this.finishIfDone(run);
  }

  private async finishIfDone(run: AttachedRun): Promise<boolean> {
    const finished = await finishPayoutRunIfDone(this.context, run.runId, run.rate);
    if (finished) this.progress.cancel(run.runId);
    return finished;
  }

  /**
   * Every `settlementPollMs`: takes up runs started elsewhere (or before a redeploy), follows the
   * accepted and in-doubt items through the journal, and lets go of runs with nothing left.
   */
  private tick(): Promise<void> {
    if (this.ticking || this.closed) return this.ticking ?? Promise.resolve();
    this.ticking = (async () => {
      try {
        const active = new Set(await this.client.smembers(this.activeKey));
        // Each run on its own: one that cannot be attached or followed holds up no other.
        for (const runId of active) {
          if (this.closed) break;
          await this.forRun(runId, async () => {
            const run = await this.attach(runId);
            if (!run && !this.closed && !(await this.context.store.getRun(runId))) {
              await this.retireDeleted(runId);
            }
          });
        }
        for (const run of [...this.runs.values()]) {
          if (this.closed) break;
          await this.forRun(run.runId, () => this.follow(run, active));
        }
      } catch (error) {
        this.logger.warn(
          `Payout runs: Redis or the journal could not be read (${error instanceof Error ? error.message : 'error'}); trying again`,
        );
      } finally {
        this.ticking = undefined;
      }
    })();
    return this.ticking;
  }

  /** `work` for one run: its failure is logged with the run's id, and the tick goes on. */
  private async forRun(runId: string, work: () => Promise<void>): Promise<void> {
    try {
      await work();
    } catch (error) {
      this.logger.warn(
        `Payout runs: the run ${runId} could not be followed (${error instanceof Error ? error.message : 'error'}); trying again`,
      );
    }
  }

  /** One tick of an attached run: its pace, its queue, its items due, its end. */
  private async follow(run: AttachedRun, active: ReadonlySet<string>): Promise<void> {
    if (!active.has(run.runId)) {
      await this.detach(run);
      return;
    }
    const record = await this.context.store.getRun(run.runId);
    if (record && ofAnotherAccount(record, this.context.payments)) {
      this.othersRuns.met(run.runId);
      await this.detach(run);
      return;
    }
    run.rate = (await this.pace.current(run.runId)) ?? run.rate;
    await this.reconcileQueue(run);
    if (run.jobsLost) {
      run.jobsLost = false;
      await this.addJobs(run);
    }
    let unsettled = 0;
    const due: string[] = [];
    await this.forEachItem(run.runId, UNSETTLED_ITEM_STATES, (itemId) => {
      if (this.schedule.isDue(run.runId, itemId)) due.push(itemId);
      else unsettled += 1;
      return Promise.resolve();
    });
    await inBatches(due, async (itemId) => {
      if (await followPayoutRunItem(this.context, run.runId, itemId)) {
        unsettled += 1;
        this.schedule.missed(run.runId, itemId);
      } else this.schedule.forget(run.runId, itemId);
    });
    const finished = await this.finishIfDone(run);
    if (!finished) this.progress.schedule(run.runId);
    else if (unsettled === 0 || (await this.finishedLongAgo(run.runId))) {
      await this.retire(run);
    }
  }

  /** Finished more than `followInDoubtMs` ago: its in-doubt items are left to people. */
  private async finishedLongAgo(runId: string): Promise<boolean> {
    const finishedAt = (await this.context.store.getRun(runId))?.finishedAt;
    return (
      finishedAt === undefined || Date.now() - Date.parse(finishedAt) > this.context.followInDoubtMs
    );
  }

  /** Nothing left to send or follow: BullMQ's keys go, then the run leaves the list. */
  private async retire(run: AttachedRun): Promise<void> {
    await this.removeQueue(run.runId, run.queue);
    await this.detach(run);
  }

  /**
   * A run listed in progress whose record is gone (`deleteRun` while no instance held it): its
   * queue and jobs go as a finished run's do.
   */
  private async retireDeleted(runId: string): Promise<void> {
    // A deleteRun of a run in progress, or a store that lost it: the journal holds its sends.
    this.logger.warn(
      `Payout run ${runId} is listed in progress but gone from the store (deleted, or lost by ` +
        'Redis): its queue is removed; what its items sent is in the payments journal',
    );
    const queue = this.queueOf(runId);
    try {
      await this.removeQueue(runId, queue);
    } finally {
      await queue.close();
    }
  }

  /**
   * Removes the run's queue and pace, and only then the run from the list of runs in progress:
   * should a step fail or the process die, the next tick on any instance does it again
   * (`obliterate` of a removed queue changes nothing).
   */
  private async removeQueue(runId: string, queue: Queue<ItemJobData>): Promise<void> {
    await queue.obliterate({ force: true });
    await this.pace.forget(runId);
    await this.client.srem(this.activeKey, runId);
    // Created anew since it was read finished or gone (deleted, then `create()` again under its
    // id): its start listed it before this removal. Listed again, it is attached afresh, with a
    // job for each of its items, by the next tick (a start after this read lists it itself).
    let record: PayoutRunRecord | undefined;
    try {
      record = await this.context.store.getRun(runId);
    } catch (error) {
      // Unread, it may be such a run: listed again, the next tick reads it, and retires it again
      // if it is finished or gone.
      await this.listed(runId);
      throw error;
    }
    if (record && record.finishedAt === undefined) await this.listed(runId);
  }

  /** The run's queue, its errors logged from its creation on. */
  private queueOf(runId: string): Queue<ItemJobData> {
    const queue = new Queue<ItemJobData>(payoutRunQueueName(runId), {
      connection: this.bullConnection,
      prefix: this.prefix,
    });
    queue.on('error', this.bullMQWarning(runId));
    return queue;
  }

  /**
   * Logs an error of the run's queue or worker by its message (BullMQ's own print is whole), a
   * repeated one once per 10 s (a Redis outage repeats it thousands of times a second).
   */
  private bullMQWarning(runId: string): (error: Error) => void {
    const warn = throttledWarning((line) => this.logger.warn(line));
    // BullMQ's connections' errors may quote a refused command (`HELLO 3 AUTH ... <password>`).
    return (error) =>
      warn(
        `Payout run ${runId}: BullMQ: ${withoutPassword(error.message, this.client.options.password)}`,
      );
  }

  /** `work`, or a rejection once `setupTimeoutMs` passed without its answer. */
  private withinSetup<T>(work: Promise<T>, runId: string): Promise<T> {
    const ms = this.options.setupTimeoutMs ?? SETUP_TIMEOUT_MS;
    return within(
      work,
      ms,
      () =>
        new Error(
          `BullMQ did not answer within ${ms} ms for payout run ${runId} (is Redis reachable, with this password?); the engine tries again`,
        ),
    );
  }

  /**
   * `error` as BullMQ keeps it (the job's `failedReason` and `stacktrace`, the events stream) and
   * the logs show it: redacted of the account's credentials. The very error when it holds none,
   * as BullMQ's own (`RateLimitError`) do.
   */
  private withoutCredentialsOf(error: unknown): unknown {
    const redactor = this.context.payments.payouts.credentialsRedactor as
      SecretRedactor | undefined;
    if (!(error instanceof Error) || redactor === undefined) return error;
    const message = redactor.text(error.message);
    const stack = error.stack === undefined ? undefined : redactor.text(error.stack);
    if (message === error.message && stack === error.stack) return error;
    return Object.assign(new Error(message), { name: error.name, stack });
  }

  /**
   * A run found created by another account while held here: let go (its worker closes once this
   * job is back), and the job back to its queue for that account's engine.
   */
  private letGo(run: AttachedRun): Error {
    this.othersRuns.met(run.runId);
    if (this.runs.get(run.runId) === run) {
      void this.detach(run).catch((error: unknown) =>
        this.logger.warn(
          `Payout run ${run.runId}: its worker could not be closed (${error instanceof Error ? error.message : 'error'})`,
        ),
      );
    }
    return Worker.RateLimitError();
  }

  private async detach(run: AttachedRun): Promise<void> {
    this.runs.delete(run.runId);
    this.schedule.forget(run.runId);
    this.progress.cancel(run.runId);
    await run.worker.close();
    await run.queue.close();
  }

  private async forEachItem(
    runId: string,
    states: readonly PayoutRunItemState[],
    visit: (itemId: string, idempotencyKey: string) => Promise<void>,
  ): Promise<void> {
    for (let cursor: string | undefined, first = true; first || cursor; first = false) {
      const page = await this.context.store.listItems(runId, {
        states,
        limit: PAGE,
        ...(cursor === undefined ? {} : { cursor }),
      });
      for (const item of page.items) await visit(item.itemId, item.idempotencyKey);
      cursor = page.nextCursor;
    }
  }
}

/**
 * The `engine` option of `PayoutRunsModule` for runs on BullMQ, with a store every instance
 * shares: `PayoutRunsModule.forRoot({ store: new RedisPayoutRunStore({ url }), engine:
 * bullmqPayoutRunEngine({ url }) })`.
 * @throws PaymentsValidationError at once for an unknown option or one that breaks its rule, and
 *   at boot when the store is the in-memory one: other instances could not see the runs.
 */
export function bullmqPayoutRunEngine(
  options: BullMQPayoutRunEngineOptions = {},
): PayoutRunEngineFactory {
  checkEngineOptions(options);
  return (context) => {
    if (context.store instanceof InMemoryPayoutRunStore) {
      throw moduleOptionError(
        'PayoutRunsModule',
        'store',
        'isShared',
        'The BullMQ payout-run engine needs a store every instance shares: give PayoutRunsModule ' +
          'the option store: new RedisPayoutRunStore({ url }) (docs/payout-runs.md, "Engines")',
      );
    }
    return new BullMQPayoutRunEngine(context, options);
  };
}

const OPTION_NAMES: Readonly<Record<keyof BullMQPayoutRunEngineOptions, true>> = {
  url: true,
  connection: true,
  prefix: true,
  lockDurationMs: true,
  stalledIntervalMs: true,
  jobAttempts: true,
  jobBackoffMs: true,
  setupTimeoutMs: true,
};

/** The options' times and counts, each a positive integer when given. */
const POSITIVE_OPTIONS = [
  'lockDurationMs',
  'stalledIntervalMs',
  'jobAttempts',
  'jobBackoffMs',
  'setupTimeoutMs',
] as const satisfies readonly (keyof BullMQPayoutRunEngineOptions)[];

/** @throws PaymentsValidationError naming the option and its rule. */
function checkEngineOptions(options: BullMQPayoutRunEngineOptions): void {
  assertKnownOptions('BullMQPayoutRunEngine', options, OPTION_NAMES);
  for (const name of POSITIVE_OPTIONS) {
    const value = options[name];
    if (value !== undefined) {
      wholeNumberOption('BullMQPayoutRunEngine', name, value, {
        min: 1,
        unit: name.endsWith('Ms') ? ' (ms)' : '',
      });
    }
  }
  // BullMQ joins its keys with ':'; one in the prefix would mix runs of two prefixes.
  if (textOption('BullMQPayoutRunEngine', 'prefix', options.prefix)?.includes(':')) {
    throw moduleOptionError('BullMQPayoutRunEngine', 'prefix', 'matches', 'prefix cannot hold ":"');
  }
}

/** `work`, rejecting with its error's command arguments redacted (a password, item requests). */
function withoutCredentials<T>(work: Promise<T>): Promise<T> {
  return work.catch((error: unknown) => {
    throw redactCommandArguments(error);
  });
}

printsAsNameOnly(BullMQPayoutRunEngine.prototype, 'BullMQPayoutRunEngine');

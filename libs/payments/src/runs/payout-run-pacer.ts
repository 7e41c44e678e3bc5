/** Options of {@link PayoutRunPacer}. */
export interface PayoutRunPacerOptions {
  /** Sends in flight at most. */
  readonly concurrency: number;
  /** Sends started per second at most: the pace it starts at and returns to. */
  readonly ratePerSecond: number;
}

/**
 * The share of the rate that the BullMQ engine's starts are spaced for: R starts take about 40 ms
 * more than a second. Its workers do not see when their requests reach the service: they leave
 * evenly but arrive unevenly (a garbage collection, a busy core, a slow socket on either side), and
 * a limit that counts a sliding second sees R + 1 whenever a request arrives later than the one R
 * sends after it: jitter within the margin costs nothing (docs/payout-runs.md, "Pace").
 */
export const BLIND_PACE_MARGIN = 0.96;
/**
 * The share of the rate that the embedded pacer spaces starts for. It sees each send's answer, so
 * a request that may have reached the service late is counted late (see {@link PayoutRunPacer}):
 * its margin only covers the clock's millisecond and the service's second not being ours.
 */
export const PACE_MARGIN = 0.99;
/** The span R consecutive arrivals take at least: the service's second and the margin. */
const SPAN_OF_RATE_MS = 1000 / PACE_MARGIN;
/**
 * Answer times are compared with the quickest answer of the last 10 to 20 seconds: what the
 * network and the service take at the least, which no request arrives earlier than.
 */
const QUICKEST_ANSWER_WINDOW_MS = 10_000;
/**
 * How much later than its start a send is counted at most. Stalls and slow sockets hold a request
 * back for tens of milliseconds; an answer later still is the service at work after its limit
 * counted the request (a payout that waits for the mobile network), and counting it a second late
 * would halve a run's pace against a service whose answers take one to three seconds.
 */
const MAX_LATE_ARRIVAL_MS = 100;
/** The slowest pace a run falls to: one send every two seconds. */
export const MIN_RATE_PER_SECOND = 0.5;
/**
 * Multiplicative decrease on a 429: a quarter off. At the service's own limit a 429 also comes
 * from jitter alone, and halving there would cost seconds of pace for a request too many.
 */
export const DECREASE_FACTOR = 0.75;
/**
 * How far behind its schedule the pacer may catch up at once: a late timer (a busy event loop)
 * starts the sends that were due, up to this window, instead of losing their time for good.
 */
export const CATCH_UP_MS = 20;
/** Additive increase: each second of sends without a 429 adds this share of the ceiling. */
export const RECOVERY_SHARE_PER_SECOND = 0.1;
/** The longest pause a `Retry-After` imposes: beyond it the answer is taken for a mistake. */
export const MAX_PAUSE_MS = 10 * 60 * 1000;
/** The pause after a 429 without `Retry-After`. */
export const DEFAULT_PAUSE_MS = 1000;

/**
 * The pace of one run, shared by all its items (docs/payout-runs.md, "Pace"): at most
 * `concurrency` sends in flight and `ratePerSecond` starts per second, spaced evenly at
 * {@link PACE_MARGIN} of the rate, and never more than R requests that may reach the service within
 * any span of 1000 / PACE_MARGIN ms. A send counts in that span from its start until it is
 * answered (it may arrive any time until then), then at the latest time it may have arrived: its
 * start plus how much longer than the quickest recent answer it took. A send held back on either
 * side (this process or the service stalled, a slow socket) is answered late by as much, and
 * counted that much later, so the starts a second later wait for it instead of meeting a 429.
 *
 * A 429 is the service saying the whole run is too fast, so the whole run slows down (AIMD, as
 * TCP does): every send waits out the `Retry-After`, and the rate drops by a quarter (once per
 * pause: the 429s of sends already in flight are the same signal). Starts keep their schedule: a
 * timer that fires late starts what was due (within a short window) rather than losing that
 * time. Each send that is not refused then adds back a little (a tenth of the ceiling per second
 * of sends), up to `ratePerSecond`.
 */
export class PayoutRunPacer {
  private rate: number;
  private inFlight = 0;
  private nextStartAt = 0;
  /**
   * When the answered sends of about the last {@link SPAN_OF_RATE_MS} were answered (at most
   * {@link MAX_LATE_ARRIVAL_MS} past their start and the quickest answer), in order: each may have
   * reached the service until that time less the quickest answer. Kept as answer times, so that a
   * quicker answer later (the first ones wait for their connections) moves the earlier ones'
   * arrivals later too.
   */
  private readonly answers: number[] = [];
  /** Other requests under the same limit ({@link countRequestAt}): when they arrived, in order. */
  private readonly otherArrivals: number[] = [];
  /** The quickest answer (ms) in this window of {@link QUICKEST_ANSWER_WINDOW_MS}, and the last. */
  private quickestAnswer = Infinity;
  private quickestAnswerBefore = Infinity;
  private quickestAnswerWindowEndsAt = 0;
  private pausedUntil = 0;
  private waiters: ((go: boolean) => void)[] = [];
  private timer: NodeJS.Timeout | undefined;
  private stopped = false;

  constructor(private readonly options: PayoutRunPacerOptions) {
    this.rate = options.ratePerSecond;
  }

  /** Sends per second now, after any slow-down. */
  get currentRatePerSecond(): number {
    return this.rate;
  }

  /**
   * Waits for a free slot and the next start time. Resolves `true` to go (then call
   * {@link release} when the send ended), `false` when the pacer was stopped meanwhile.
   */
  acquire(): Promise<boolean> {
    if (this.stopped) return Promise.resolve(false);
    // Idle until now: the schedule starts again from here. Catching up is for starts a late timer
    // delayed, not for time nobody asked to send in: a burst then would crowd the service's second.
    if (this.inFlight === 0 && this.waiters.length === 0) {
      this.nextStartAt = Math.max(this.nextStartAt, Date.now());
    }
    return new Promise((resolve) => {
      this.waiters.push(resolve);
      this.drain();
    });
  }

  /**
   * A send ended: its slot is free. `startedAt` (ms since the epoch, when {@link acquire} let it
   * go) for a request that was sent; without it, the slot was not used.
   */
  release(startedAt?: number): void {
    this.inFlight -= 1;
    if (startedAt !== undefined) this.answered(startedAt, Date.now());
    this.drain();
  }

  /**
   * Another request under the same limit reached the service at `at` (ms since the epoch) at the
   * latest: it is counted as one of the run's sends.
   */
  countRequestAt(at: number): void {
    insertInOrder(this.otherArrivals, at);
  }

  /** A send was not refused for its pace: speed up a little. */
  onAccepted(): void {
    const step = (this.options.ratePerSecond * RECOVERY_SHARE_PER_SECOND) / this.rate;
    this.rate = Math.min(this.options.ratePerSecond, this.rate + step);
  }

  /** A send got 429: pause every send for `retryAfterMs`, and take a quarter off the rate once per pause. */
  onRateLimited(retryAfterMs: number | undefined): void {
    const now = Date.now();
    const pause = Math.min(MAX_PAUSE_MS, retryAfterMs ?? DEFAULT_PAUSE_MS);
    if (now >= this.pausedUntil) {
      this.rate = Math.max(MIN_RATE_PER_SECOND, this.rate * DECREASE_FACTOR);
    }
    this.pausedUntil = Math.max(this.pausedUntil, now + pause);
    this.nextStartAt = Math.max(this.nextStartAt, this.pausedUntil);
  }

  /** Lets no more sends start: waiting ones resolve `false`. */
  stop(): void {
    this.stopped = true;
    clearTimeout(this.timer);
    this.timer = undefined;
    for (const waiter of this.waiters.splice(0)) waiter(false);
  }

  /**
   * A request started at `startedAt` was answered at `now`: it reached the service at the latest
   * as much after its start as its answer took longer than the quickest one, up to
   * {@link MAX_LATE_ARRIVAL_MS}. The quickest of the last 10 to 20 seconds always includes every
   * send still in the span, so no arrival is taken for earlier than its start.
   */
  private answered(startedAt: number, now: number): void {
    if (now >= this.quickestAnswerWindowEndsAt) {
      this.quickestAnswerBefore = this.quickestAnswer;
      this.quickestAnswer = Infinity;
      this.quickestAnswerWindowEndsAt = now + QUICKEST_ANSWER_WINDOW_MS;
    }
    this.quickestAnswer = Math.min(this.quickestAnswer, Math.max(0, now - startedAt));
    const quickest = Math.min(this.quickestAnswer, this.quickestAnswerBefore);
    insertInOrder(this.answers, Math.min(now, startedAt + quickest + MAX_LATE_ARRIVAL_MS));
  }

  private drain(): void {
    while (this.waiters.length > 0 && this.inFlight < this.options.concurrency) {
      const now = Date.now();
      const { answers, otherArrivals } = this;
      const quickest = Math.min(this.quickestAnswer, this.quickestAnswerBefore);
      const spanStart = now - SPAN_OF_RATE_MS;
      while (answers.length > 0 && answers[0] - quickest <= spanStart) answers.shift();
      while (otherArrivals.length > 0 && otherArrivals[0] <= spanStart) otherArrivals.shift();
      const perSpan = Math.max(1, Math.floor(this.rate));
      const arrived = answers.length + otherArrivals.length;
      // Sends in flight may reach the service any time: each holds its place in the span.
      const toLeave = arrived + this.inFlight - perSpan + 1;
      // Only answers let a start go now: release() drains again.
      if (toLeave > arrived) return;
      const windowFreeAt =
        toLeave > 0 ? nthEarliest(answers, quickest, otherArrivals, toLeave) + SPAN_OF_RATE_MS : 0;
      const startAt = Math.max(this.nextStartAt, this.pausedUntil, windowFreeAt);
      if (startAt > now) {
        this.wakeAt(startAt, now);
        return;
      }
      this.inFlight += 1;
      // On schedule, not `now` + interval: a start a timer delayed is made up, within a window of
      // two intervals (at least CATCH_UP_MS); the span of R starts bounds the burst.
      const interval = 1000 / (this.rate * PACE_MARGIN);
      const window = Math.max(2 * interval, CATCH_UP_MS);
      this.nextStartAt = Math.max(now - window, this.nextStartAt) + interval;
      this.waiters.shift()?.(true);
    }
  }

  private wakeAt(at: number, now: number): void {
    if (this.timer) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.drain();
    }, at - now);
    // A paced run does not keep a process alive that has nothing else to do.
    this.timer.unref();
  }
}

/** Adds `at` to the ascending `times`, from the end, where new times go. */
function insertInOrder(times: number[], at: number): void {
  let index = times.length;
  while (index > 0 && times[index - 1] > at) index -= 1;
  times.splice(index, 0, at);
}

/**
 * The `n`th earliest (1-based) of the arrivals: `answers` less `quickest`, and `others`, both
 * ascending.
 */
function nthEarliest(answers: number[], quickest: number, others: number[], n: number): number {
  let a = 0;
  let o = 0;
  let at = 0;
  for (let taken = 0; taken < n; taken += 1) {
    if (o >= others.length || (a < answers.length && answers[a] - quickest <= others[o])) {
      at = answers[a] - quickest;
      a += 1;
    } else {
      at = others[o];
      o += 1;
    }
  }
  return at;
}

/** Options of {@link PayoutRunPacer}. */
export interface PayoutRunPacerOptions {
  /** Sends in flight at most. */
  readonly concurrency: number;
  /** Sends started per second at most: the pace it starts at and returns to. */
  readonly ratePerSecond: number;
}

/**
 * The share of the rate that starts are spaced for: R starts take about 40 ms more than a second.
 * Requests leave evenly but reach the service unevenly (a garbage collection, a busy core, a slow
 * socket on either side), and a limit that counts a sliding second sees R + 1 whenever a request
 * arrives later than the one R sends after it: jitter within the margin costs nothing
 * (docs/payout-runs.md, "Pace").
 */
export const PACE_MARGIN = 0.96;
/** The span R consecutive starts take at least: the service's second and the margin. */
const SPAN_OF_RATE_MS = 1000 / PACE_MARGIN;
/**
 * A timer this late means this process stalled: sends it had started may have left only now, and
 * are counted from now on (see {@link PayoutRunPacer}).
 */
const STALL_MS = 5;
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
 * {@link PACE_MARGIN} of the rate, and never more than R in any span of 1000 / PACE_MARGIN ms, as
 * the service's limit counts them with the margin to spare. When this process stalls (a timer
 * fires late: a long garbage collection, a starved core), the sends it had in flight may reach the
 * service only after the stall, however early they started: they are counted from the stall's
 * end, so the starts a second later wait for them instead of meeting a 429.
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
   * When the requests of the last {@link SPAN_OF_RATE_MS} reached the service at the latest, in
   * order: their starts, moved to the end of a stall for those in flight during it.
   */
  private readonly recentArrivals: number[] = [];
  private pausedUntil = 0;
  /** Starts since the pacer's timer last fired: what a stall found there may have held back. */
  private startsSinceWake = 0;
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

  /** A send ended: its slot is free. */
  release(): void {
    this.inFlight -= 1;
    this.drain();
  }

  /**
   * Another request under the same limit reached the service at `at` (ms since the epoch) at the
   * latest: it is counted as one of the run's sends.
   */
  countRequestAt(at: number): void {
    let index = this.recentArrivals.length;
    while (index > 0 && this.recentArrivals[index - 1] > at) index -= 1;
    this.recentArrivals.splice(index, 0, at);
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

  private drain(): void {
    while (this.waiters.length > 0 && this.inFlight < this.options.concurrency) {
      const now = Date.now();
      const arrivals = this.recentArrivals;
      while (arrivals.length > 0 && arrivals[0] <= now - SPAN_OF_RATE_MS) arrivals.shift();
      const perSpan = Math.max(1, Math.floor(this.rate));
      const windowFreeAt =
        arrivals.length >= perSpan ? arrivals[arrivals.length - perSpan] + SPAN_OF_RATE_MS : 0;
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
      arrivals.push(now);
      this.startsSinceWake += 1;
      this.waiters.shift()?.(true);
    }
  }

  private wakeAt(at: number, now: number): void {
    if (this.timer) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      const now = Date.now();
      if (now - at >= STALL_MS) this.stalledUntil(now);
      this.startsSinceWake = 0;
      this.drain();
    }, at - now);
    // A paced run does not keep a process alive that has nothing else to do.
    this.timer.unref();
  }

  /**
   * This process did not run until `now`: the sends started since the last wake-up may have been
   * held back with it and left only now (those started before had their turn to go out), so
   * they are counted from now.
   */
  private stalledUntil(now: number): void {
    const arrivals = this.recentArrivals;
    const held = Math.min(this.startsSinceWake, arrivals.length);
    for (let i = arrivals.length - held; i < arrivals.length; i += 1) arrivals[i] = now;
  }
}

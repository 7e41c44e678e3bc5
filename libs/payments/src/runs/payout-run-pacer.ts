/** Options of {@link PayoutRunPacer}. */
export interface PayoutRunPacerOptions {
  /** Sends in flight at most. */
  readonly concurrency: number;
  /** Sends started per second at most: the pace it starts at and returns to. */
  readonly ratePerSecond: number;
}

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
 * `concurrency` sends in flight and `ratePerSecond` starts per second, spaced evenly. A 429 is
 * the service saying the whole run is too fast, so the whole run slows down (AIMD, as TCP does):
 * every send waits out the `Retry-After`, and the rate drops by a quarter (once per pause: the
 * 429s of sends already in flight are the same signal). Starts keep their schedule: a timer that
 * fires late starts what was due (within a short window) rather than losing that time. Each send that is not refused then adds back a little
 * (a tenth of the ceiling per second of sends), up to `ratePerSecond`.
 */
export class PayoutRunPacer {
  private rate: number;
  private inFlight = 0;
  private nextStartAt = 0;
  /**
   * Start times of the last second, oldest first: however the schedule catches up, no second
   * holds more starts than the rate, as the service's limit counts them.
   */
  private readonly recentStarts: number[] = [];
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

  /** A send was not refused for its pace: speed up a little. */
  onAccepted(): void {
    const step = (this.options.ratePerSecond * RECOVERY_SHARE_PER_SECOND) / this.rate;
    this.rate = Math.min(this.options.ratePerSecond, this.rate + step);
  }

  /** A send got 429: pause every send for `retryAfterMs`, and halve the rate once per pause. */
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
      while (this.recentStarts.length > 0 && this.recentStarts[0] <= now - 1000) {
        this.recentStarts.shift();
      }
      const perSecond = Math.max(1, Math.floor(this.rate));
      const windowFreeAt =
        this.recentStarts.length >= perSecond
          ? this.recentStarts[this.recentStarts.length - perSecond] + 1000
          : 0;
      const startAt = Math.max(this.nextStartAt, this.pausedUntil, windowFreeAt);
      if (startAt > now) {
        this.timer ??= setTimeout(() => {
          this.timer = undefined;
          this.drain();
        }, startAt - now);
        // A paced run does not keep a process alive that has nothing else to do.
        this.timer.unref();
        return;
      }
      this.inFlight += 1;
      // On schedule, not `now` + interval: a start a timer delayed is made up, within a window of
      // two intervals (at least CATCH_UP_MS), so that any second holds at most about R starts.
      const interval = 1000 / this.rate;
      const window = Math.max(2 * interval, CATCH_UP_MS);
      this.nextStartAt = Math.max(now - window, this.nextStartAt) + interval;
      this.recentStarts.push(now);
      this.waiters.shift()?.(true);
    }
  }
}

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
 * How much later than its start a send is counted at most, unless this process stalled. Stalls and
 * slow sockets hold a request back for tens of milliseconds; an answer later still is the service
 * at work after its limit counted the request (a payout that waits for the mobile network), and
 * counting it at its answer would halve a run's pace against a service whose answers vary by
 * seconds.
 */
const MAX_LATE_ARRIVAL_MS = 100;
/**
 * A timer this late means this process stalled: the sends in flight may have left only now, and
 * are counted from now on, however long the stall.
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

/** A send the pacer let go; give it back to {@link PayoutRunPacer.release} when it ended. */
export interface PacedSend {
  /** When it was let go (ms since the epoch). */
  readonly startedAt: number;
}

/**
 * A send in flight: when it started, when its request went to the wire (once
 * {@link PayoutRunPacer.left} said so), and the end of a stall of this process it was held in.
 */
interface SendInFlight extends PacedSend {
  heldUntil: number;
  leftAt?: number;
}

/**
 * A request of the run that went out: an answered send, or another request under the same limit
 * ({@link PayoutRunPacer.countRequestAt}: `took` 0). When it may have reached the service at the
 * latest, and what that is from.
 */
interface CountedRequest {
  arrivedBy: number;
  readonly leftAt: number;
  readonly took: number;
  readonly heldUntil: number;
}

/**
 * The pace of one run, shared by all its items (docs/payout-runs.md, "Pace"): at most
 * `concurrency` sends in flight and `ratePerSecond` starts per second, spaced evenly at
 * {@link PACE_MARGIN} of the rate, and never more than R requests that may reach the service within
 * any span of 1000 / PACE_MARGIN ms. Each send counts at the latest time it may have arrived: until
 * its request goes to the wire ({@link left}), now, since the writes before it (the run's store,
 * the journal) may hold it back for any time; then from when it left, plus how much longer than the
 * quickest recent answer it took (or has been in flight), up to {@link MAX_LATE_ARRIVAL_MS}; and no
 * earlier than the end of a stall of this process it was in flight during. A send held back on
 * either side (a stall, a slow socket) is answered late by as much and counted that much later, so
 * the starts a second later wait for it instead of meeting a 429.
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
  private nextStartAt = 0;
  /** In the order they started. */
  private readonly inFlight: SendInFlight[] = [];
  /** The requests that went out and may still be in the span, by `arrivedBy`. */
  private readonly counted: CountedRequest[] = [];
  /** The quickest answer (ms) in this window of {@link QUICKEST_ANSWER_WINDOW_MS}, and the last. */
  private quickestAnswer = Infinity;
  private quickestAnswerBefore = Infinity;
  private quickestAnswerWindowEndsAt = 0;
  /** The quickest answer `counted` was counted with. */
  private countedWithQuickest = Infinity;
  private pausedUntil = 0;
  private waiters: ((send: PacedSend | undefined) => void)[] = [];
  private timer: NodeJS.Timeout | undefined;
  private timerAt = Infinity;
  private stopped = false;

  constructor(private readonly options: PayoutRunPacerOptions) {
    this.rate = options.ratePerSecond;
  }

  /** Sends per second now, after any slow-down. */
  get currentRatePerSecond(): number {
    return this.rate;
  }

  /**
   * Waits for a free slot and the next start time. Resolves the send to make (then call
   * {@link release} with it when it ended), or undefined when the pacer was stopped meanwhile.
   */
  acquire(): Promise<PacedSend | undefined> {
    if (this.stopped) return Promise.resolve(undefined);
    // Idle until now: the schedule starts again from here. Catching up is for starts a late timer
    // delayed, not for time nobody asked to send in: a burst then would crowd the service's second.
    if (this.inFlight.length === 0 && this.waiters.length === 0) {
      this.nextStartAt = Math.max(this.nextStartAt, Date.now());
    }
    return new Promise((resolve) => {
      this.waiters.push(resolve);
      this.drain();
    });
  }

  /**
   * `send`'s request goes to the wire now, after the writes that come before it: it counts from
   * now on, not from its start.
   */
  left(send: PacedSend): void {
    const inFlight = send as SendInFlight;
    if (inFlight.leftAt === undefined && this.inFlight.includes(inFlight)) {
      inFlight.leftAt = Date.now();
    }
  }

  /**
   * `send` ended: its slot is free. `requested`: whether a request reached the wire (not an item
   * answered from the journal, held back, or never sent), so that its answer time counts.
   */
  release(send: PacedSend, requested = true): void {
    const index = this.inFlight.indexOf(send as SendInFlight);
    if (index === -1) return;
    const [ended] = this.inFlight.splice(index, 1);
    if (requested) this.countAnswer(ended, Date.now());
    this.drain();
  }

  /**
   * Another request under the same limit reached the service at `at` (ms since the epoch) at the
   * latest: it is counted as one of the run's sends.
   */
  countRequestAt(at: number): void {
    // A time that is no time (a store's unreadable `createdAt`) would stay first in the span.
    if (!Number.isFinite(at)) return;
    this.count({ leftAt: at, took: 0, heldUntil: 0, arrivedBy: at });
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

  /** Lets no more sends start: waiting ones resolve undefined. */
  stop(): void {
    this.stopped = true;
    clearTimeout(this.timer);
    this.timer = undefined;
    this.timerAt = Infinity;
    for (const waiter of this.waiters.splice(0)) waiter(undefined);
  }

  /** Moves the window of the quickest answer on to `now`: the last one ended, or both did. */
  private moveQuickestAnswerWindow(now: number): void {
    if (now < this.quickestAnswerWindowEndsAt) return;
    const ended = now < this.quickestAnswerWindowEndsAt + QUICKEST_ANSWER_WINDOW_MS;
    this.quickestAnswerBefore = ended ? this.quickestAnswer : Infinity;
    this.quickestAnswer = Infinity;
    this.quickestAnswerWindowEndsAt = now + QUICKEST_ANSWER_WINDOW_MS;
  }

  /** The quickest answer of the last 10 to 20 seconds, with every counted request up to date. */
  private quickest(now: number): number {
    this.moveQuickestAnswerWindow(now);
    const quickest = Math.min(this.quickestAnswer, this.quickestAnswerBefore);
    // A quicker answer moves every counted arrival later; a window that ended, earlier.
    if (quickest !== this.countedWithQuickest) {
      this.countedWithQuickest = quickest;
      for (const request of this.counted) {
        request.arrivedBy = arrivedBy(request, request.took, quickest);
      }
      this.counted.sort((a, b) => a.arrivedBy - b.arrivedBy);
    }
    return quickest;
  }

  /**
   * `send`'s request was answered at `now`. One nobody said had left is counted at its answer, and
   * says nothing of how long answers take.
   */
  private countAnswer(send: SendInFlight, now: number): void {
    const { leftAt, heldUntil } = send;
    if (leftAt === undefined) {
      this.count({ leftAt: now, took: 0, heldUntil, arrivedBy: now });
      return;
    }
    const took = Math.max(0, now - leftAt);
    this.moveQuickestAnswerWindow(now);
    this.quickestAnswer = Math.min(this.quickestAnswer, took);
    const quickest = this.quickest(now);
    const request = { leftAt, took, heldUntil };
    this.count({ ...request, arrivedBy: arrivedBy(request, took, quickest) });
  }

  /** Adds `request` to {@link counted}, in order of `arrivedBy`, from the end where new ones go. */
  private count(request: CountedRequest): void {
    const { counted } = this;
    let index = counted.length;
    while (index > 0 && counted[index - 1].arrivedBy > request.arrivedBy) index -= 1;
    counted.splice(index, 0, request);
  }

  private drain(): void {
    while (this.waiters.length > 0 && this.inFlight.length < this.options.concurrency) {
      const now = Date.now();
      const quickest = this.quickest(now);
      const spanStart = now - SPAN_OF_RATE_MS;
      const { counted, inFlight } = this;
      while (counted.length > 0 && counted[0].arrivedBy <= spanStart) counted.shift();
      // A send in flight counts as if answered now; one not yet on the wire, as arriving now.
      const inFlightArrivals: number[] = [];
      for (const send of inFlight) {
        const { leftAt } = send;
        const at =
          leftAt === undefined
            ? now
            : arrivedBy({ leftAt, heldUntil: send.heldUntil }, now - leftAt, quickest);
        if (at > spanStart) inFlightArrivals.push(at);
      }
      // Sends leave in another order than they started when the writes before them take longer.
      inFlightArrivals.sort((a, b) => a - b);
      const perSpan = Math.max(1, Math.floor(this.rate));
      const toLeave = counted.length + inFlightArrivals.length - perSpan + 1;
      const windowFreeAt =
        toLeave > 0 ? nthEarliest(counted, inFlightArrivals, toLeave) + SPAN_OF_RATE_MS : 0;
      const startAt = Math.max(this.nextStartAt, this.pausedUntil, windowFreeAt);
      if (startAt > now) {
        this.wakeAt(startAt, now);
        return;
      }
      const send: SendInFlight = { startedAt: now, heldUntil: 0 };
      inFlight.push(send);
      // On schedule, not `now` + interval: a start a timer delayed is made up, within a window of
      // two intervals (at least CATCH_UP_MS); the span of R starts bounds the burst.
      const interval = 1000 / (this.rate * PACE_MARGIN);
      const window = Math.max(2 * interval, CATCH_UP_MS);
      this.nextStartAt = Math.max(now - window, this.nextStartAt) + interval;
      this.waiters.shift()?.(send);
    }
  }

  private wakeAt(at: number, now: number): void {
    if (this.timer !== undefined && this.timerAt <= at) return;
    clearTimeout(this.timer);
    this.timerAt = at;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.timerAt = Infinity;
      const woke = Date.now();
      // This process did not run until now: what it had in flight may have left only now.
      if (woke - at >= STALL_MS) for (const send of this.inFlight) send.heldUntil = woke;
      this.drain();
    }, at - now);
    // A paced run does not keep a process alive that has nothing else to do.
    this.timer.unref();
  }
}

/**
 * When a request that took `took` ms from leaving (or has been in flight that long) may have
 * reached the service at the latest: when it left plus how much longer than the quickest answer it
 * took, up to {@link MAX_LATE_ARRIVAL_MS}, and not before the end of a stall of this process it
 * was held in.
 */
function arrivedBy(
  request: { readonly leftAt: number; readonly heldUntil: number },
  took: number,
  quickest: number,
): number {
  const late = Math.min(MAX_LATE_ARRIVAL_MS, Math.max(0, took - quickest));
  return Math.max(request.heldUntil, request.leftAt + late);
}

/**
 * The `n`th earliest (1-based) of the arrivals of `counted` (by `arrivedBy`) and `inFlight`, both
 * ascending.
 */
function nthEarliest(
  counted: readonly CountedRequest[],
  inFlight: readonly number[],
  n: number,
): number {
  let c = 0;
  let f = 0;
  let at = 0;
  for (let taken = 0; taken < n; taken += 1) {
    const nextCounted = c < counted.length ? counted[c].arrivedBy : Infinity;
    const nextInFlight = f < inFlight.length ? inFlight[f] : Infinity;
    if (nextCounted <= nextInFlight) {
      at = nextCounted;
      c += 1;
    } else {
      at = nextInFlight;
      f += 1;
    }
  }
  return at;
}

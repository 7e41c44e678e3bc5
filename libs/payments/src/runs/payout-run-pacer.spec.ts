import { PACE_MARGIN, PayoutRunPacer } from './payout-run-pacer';
import type { PacedSend } from './payout-run-pacer';

/** The span R consecutive arrivals take at least. */
const SPAN = 1000 / PACE_MARGIN;

describe('PayoutRunPacer', () => {
  beforeEach(() => jest.useFakeTimers({ now: 0 }));
  afterEach(() => jest.useRealTimers());

  /** Acquires `count` slots and answers how many were granted after `ms` of fake time. */
  async function grantedWithin(pacer: PayoutRunPacer, count: number, ms: number): Promise<number> {
    let granted = 0;
    for (let i = 0; i < count; i += 1) void pacer.acquire().then((go) => (granted += go ? 1 : 0));
    await jest.advanceTimersByTimeAsync(ms);
    return granted;
  }

  /**
   * Asks for `count` sends; each one granted goes to the wire at once (`left`) and is added to
   * the result, in order.
   */
  function take(pacer: PayoutRunPacer, count: number): PacedSend[] {
    const sends: PacedSend[] = [];
    for (let i = 0; i < count; i += 1) {
      void pacer.acquire().then((send) => {
        if (!send) return;
        pacer.left(send);
        sends.push(send);
      });
    }
    return sends;
  }

  /** How many of `times` fall in the second that ends at each of them, at most. */
  function mostInASecond(times: readonly number[]): number {
    return Math.max(0, ...times.map((at) => times.filter((t) => t > at - 1000 && t <= at).length));
  }

  /**
   * A pacer at 2 per second asked for `count` sends, the first answered in 5 ms: the quickest
   * answer the pacer knows.
   */
  async function afterAQuickAnswer(count: number) {
    const pacer = new PayoutRunPacer({ concurrency: 100, ratePerSecond: 2 });
    const sends = take(pacer, count);
    await Promise.resolve();
    expect(sends).toHaveLength(1);
    await jest.advanceTimersByTimeAsync(5);
    pacer.release(sends[0]);
    return { pacer, sends };
  }

  it('bounds the sends in flight by concurrency', async () => {
    const pacer = new PayoutRunPacer({ concurrency: 2, ratePerSecond: 1000 });
    const sends = take(pacer, 5);
    await jest.advanceTimersByTimeAsync(1000);
    expect(sends).toHaveLength(2);
    pacer.release(sends[0]);
    await jest.advanceTimersByTimeAsync(10);
    expect(sends).toHaveLength(3);
    pacer.stop();
  });

  it('spaces starts by the rate: 10 per second starts 10 in a second, not more', async () => {
    const pacer = new PayoutRunPacer({ concurrency: 100, ratePerSecond: 10 });
    expect(await grantedWithin(pacer, 30, 950)).toBe(10);
    pacer.stop();
  });

  it('takes a quarter off the rate once per pause on 429s, waits out Retry-After, then recovers', async () => {
    const pacer = new PayoutRunPacer({ concurrency: 100, ratePerSecond: 20 });
    pacer.onRateLimited(2000);
    pacer.onRateLimited(2000);
    expect(pacer.currentRatePerSecond).toBe(15);
    // Nothing starts during the pause; sends start again after it.
    const sends = take(pacer, 5);
    await jest.advanceTimersByTimeAsync(1900);
    expect(sends).toHaveLength(0);
    await jest.advanceTimersByTimeAsync(200);
    expect(sends.length).toBeGreaterThan(0);
    expect(sends[0].startedAt).toBeGreaterThanOrEqual(2000);
    for (let i = 0; i < 200; i += 1) pacer.onAccepted();
    expect(pacer.currentRatePerSecond).toBe(20);
    pacer.stop();
  });

  it('makes up the starts a late timer delayed, within its catch-up window', async () => {
    const pacer = new PayoutRunPacer({ concurrency: 100, ratePerSecond: 50 });
    expect(await pacer.acquire()).toBeDefined();
    // The event loop was busy until 45 ms: the starts due at 20 and 40 ms are made up at once
    // (not lost: each a full interval after the late one), the one due at 60 ms waits its time.
    jest.setSystemTime(45);
    const sends = take(pacer, 3);
    await Promise.resolve();
    expect(sends).toHaveLength(2);
    await jest.advanceTimersByTimeAsync(30);
    expect(sends).toHaveLength(3);
    pacer.stop();
  });

  it('paces a little under the rate: R + 1 starts always span more than a second', async () => {
    const pacer = new PayoutRunPacer({ concurrency: 100, ratePerSecond: 50 });
    const starts: number[] = [];
    for (let i = 0; i < 120; i += 1) {
      void pacer.acquire().then((send) => {
        if (!send) return;
        starts.push(send.startedAt);
        pacer.release(send);
      });
    }
    await jest.advanceTimersByTimeAsync(2500);
    expect(starts.length).toBeGreaterThan(100);
    for (let i = 50; i < starts.length; i += 1) {
      expect(starts[i] - starts[i - 50]).toBeGreaterThanOrEqual(SPAN - 1);
    }
    pacer.stop();
  });

  it('starts its schedule again after idling, rather than bursting to make up the idle time', async () => {
    const pacer = new PayoutRunPacer({ concurrency: 100, ratePerSecond: 10 });
    const first = await pacer.acquire();
    pacer.release(first!);
    await jest.advanceTimersByTimeAsync(5000);
    // Nothing was asked for five seconds: one start now, the next a full interval later.
    expect(await grantedWithin(pacer, 3, 50)).toBe(1);
    pacer.stop();
  });

  it('counts a request made just before the run (the balance read) as one of its sends', async () => {
    const pacer = new PayoutRunPacer({ concurrency: 100, ratePerSecond: 2 });
    pacer.countRequestAt(Date.now());
    // Two per second: the read and the first send fill the first second's span.
    expect(await grantedWithin(pacer, 3, 1000)).toBe(1);
    await jest.advanceTimersByTimeAsync(SPAN - 1000 + 1);
    pacer.stop();
  });

  it('counts a send answered late from when it may have arrived, not from its start', async () => {
    const { pacer, sends } = await afterAQuickAnswer(4);
    // The second starts a paced interval after the first and takes 80 ms (the service or a
    // socket held it): it may have reached the service up to 75 ms after its start.
    await jest.advanceTimersByTimeAsync(SPAN / 2 - 5 + 1);
    expect(sends).toHaveLength(2);
    await jest.advanceTimersByTimeAsync(80);
    pacer.release(sends[1]);
    const secondArrivedBy = sends[1].startedAt + 75;
    // The third goes a span after the first; the fourth a span after the second's latest
    // arrival, later than its paced time and than a span after the second's start.
    await jest.advanceTimersByTimeAsync(SPAN - Date.now() + 1);
    expect(sends).toHaveLength(3);
    await jest.advanceTimersByTimeAsync(5);
    pacer.release(sends[2]);
    await jest.advanceTimersByTimeAsync(secondArrivedBy + SPAN - Date.now() - 2);
    expect(sends).toHaveLength(3);
    await jest.advanceTimersByTimeAsync(4);
    expect(sends).toHaveLength(4);
    expect(sends[3].startedAt - sends[1].startedAt).toBeGreaterThan(SPAN + 70);
    pacer.stop();
  });

  it('keeps its pace against a slow service: a send in flight counts at most 100 ms late', async () => {
    const { pacer, sends } = await afterAQuickAnswer(4);
    // The second is in flight for two seconds (a payout waiting for the mobile network): it
    // reached the service 100 ms after its start at the latest, so the third and fourth go at
    // their times instead of waiting for its answer.
    await jest.advanceTimersByTimeAsync(1200);
    expect(sends).toHaveLength(3);
    const fourthDue = sends[1].startedAt + 100 + SPAN;
    await jest.advanceTimersByTimeAsync(fourthDue - Date.now() + 2);
    expect(sends).toHaveLength(4);
    expect(sends[3].startedAt).toBeLessThan(sends[1].startedAt + 2000);
    pacer.release(sends[1]);
    pacer.stop();
  });

  it('counts what was in flight during a stall of this process from the end of the stall', async () => {
    const { pacer, sends } = await afterAQuickAnswer(4);
    await jest.advanceTimersByTimeAsync(SPAN / 2);
    expect(sends).toHaveLength(2);
    // The process stalls for 700 ms with the second in flight (its clock jumps, its timer fires
    // late): the second may have left only when the process ran again, however long after its
    // start that was.
    jest.setSystemTime(Date.now() + 700);
    while (sends.length < 3) await jest.advanceTimersByTimeAsync(10);
    const stallEnd = sends[2].startedAt;
    expect(stallEnd - sends[1].startedAt).toBeGreaterThan(700);
    pacer.release(sends[1]);
    await jest.advanceTimersByTimeAsync(5);
    pacer.release(sends[2]);
    // Two per span: the fourth waits a span from the stall's end.
    await jest.advanceTimersByTimeAsync(stallEnd + SPAN - Date.now() - 2);
    expect(sends).toHaveLength(3);
    await jest.advanceTimersByTimeAsync(4);
    expect(sends).toHaveLength(4);
    pacer.stop();
  });

  it('learns answer times only from sends that made a request', async () => {
    const pacer = new PayoutRunPacer({ concurrency: 100, ratePerSecond: 1 });
    const sends = take(pacer, 4);
    // The first takes 50 ms: the quickest answer. The second is answered from the journal in
    // 1 ms, no request made: it does not lower the quickest answer.
    await jest.advanceTimersByTimeAsync(50);
    pacer.release(sends[0]);
    while (sends.length < 2) await jest.advanceTimersByTimeAsync(1);
    await jest.advanceTimersByTimeAsync(1);
    pacer.release(sends[1], false);
    // The third takes 60 ms: 10 ms late against 50 ms, not 59 ms against 1 ms; the fourth goes a
    // span after the third's arrival.
    while (sends.length < 3) await jest.advanceTimersByTimeAsync(1);
    await jest.advanceTimersByTimeAsync(60);
    pacer.release(sends[2]);
    while (sends.length < 4) await jest.advanceTimersByTimeAsync(1);
    const gap = sends[3].startedAt - sends[2].startedAt;
    expect(gap).toBeGreaterThanOrEqual(SPAN + 10 - 1);
    expect(gap).toBeLessThan(SPAN + 30);
    pacer.stop();
  });

  it('never starts more than the rate in any second, however it catches up', async () => {
    const pacer = new PayoutRunPacer({ concurrency: 100, ratePerSecond: 5 });
    const starts: number[] = [];
    // Late timers all the way: time jumps by more than the catch-up window, and each acquisition
    // finds the pacer behind its schedule.
    for (let step = 0; step < 40; step += 1) {
      jest.setSystemTime(Date.now() + 130);
      void pacer.acquire().then((send) => {
        if (!send) return;
        starts.push(send.startedAt);
        pacer.release(send);
      });
      await Promise.resolve();
    }
    expect(starts.length).toBeGreaterThan(10);
    for (const at of starts) {
      expect(starts.filter((other) => other > at - 1000 && other <= at).length).toBeLessThanOrEqual(
        5,
      );
    }
    pacer.stop();
  });

  it('counts a send from when its request left, however long the writes before it took', async () => {
    const pacer = new PayoutRunPacer({ concurrency: 100, ratePerSecond: 10 });
    // The run's store and the journal hang now and then, for up to 400 ms: some sends go to the
    // wire at once, others later, with the sends let go after them.
    let seed = 7;
    const hold = () => {
      seed = (seed * 48271) % 2147483647;
      return seed % 3 === 0 ? seed % 401 : 1;
    };
    const leavesAt = (at: number) => at + hold();
    const departures: number[] = [];
    for (let i = 0; i < 100; i += 1) {
      void pacer.acquire().then((send) => {
        if (!send) return;
        setTimeout(
          () => {
            pacer.left(send);
            departures.push(Date.now());
            setTimeout(() => pacer.release(send), 20);
          },
          leavesAt(send.startedAt) - send.startedAt,
        );
      });
    }
    await jest.advanceTimersByTimeAsync(8000);
    expect(mostInASecond(departures)).toBeLessThanOrEqual(10);
    // Still a pace: about the rate, less what the hangs cost.
    expect(departures.length).toBeGreaterThanOrEqual(50);
    pacer.stop();
  });

  it('counts a send that never said it left at its answer, and learns no answer time from it', async () => {
    const pacer = new PayoutRunPacer({ concurrency: 100, ratePerSecond: 2 });
    const sends: PacedSend[] = [];
    for (let i = 0; i < 3; i += 1) void pacer.acquire().then((send) => send && sends.push(send));
    await Promise.resolve();
    // Answered 300 ms after its start, with no word of when it left: it may have arrived then.
    await jest.advanceTimersByTimeAsync(300);
    pacer.release(sends[0]);
    await jest.advanceTimersByTimeAsync(SPAN / 2);
    expect(sends).toHaveLength(2);
    pacer.left(sends[1]);
    await jest.advanceTimersByTimeAsync(5);
    pacer.release(sends[1]);
    // Two per span: the third waits a span from the first's answer, not from its start.
    await jest.advanceTimersByTimeAsync(300 + SPAN - Date.now() - 2);
    expect(sends).toHaveLength(2);
    await jest.advanceTimersByTimeAsync(4);
    expect(sends).toHaveLength(3);
    pacer.stop();
  });

  it('never falls below one send every two seconds', () => {
    const pacer = new PayoutRunPacer({ concurrency: 1, ratePerSecond: 1 });
    for (let i = 0; i < 30; i += 1) {
      pacer.onRateLimited(1);
      jest.advanceTimersByTime(2);
    }
    expect(pacer.currentRatePerSecond).toBe(0.5);
  });

  it('answers undefined to waiting and later acquisitions once stopped', async () => {
    const pacer = new PayoutRunPacer({ concurrency: 1, ratePerSecond: 10 });
    expect(await pacer.acquire()).toBeDefined();
    const waiting = pacer.acquire();
    pacer.stop();
    expect(await waiting).toBeUndefined();
    expect(await pacer.acquire()).toBeUndefined();
  });
});

import { PACE_MARGIN, PayoutRunPacer } from './payout-run-pacer';

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

  it('bounds the sends in flight by concurrency', async () => {
    const pacer = new PayoutRunPacer({ concurrency: 2, ratePerSecond: 1000 });
    expect(await grantedWithin(pacer, 5, 1000)).toBe(2);
    pacer.release();
    await jest.advanceTimersByTimeAsync(10);
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
    // Nothing starts during the pause.
    expect(await grantedWithin(pacer, 5, 1900)).toBe(0);
    await jest.advanceTimersByTimeAsync(200);
    for (let i = 0; i < 200; i += 1) pacer.onAccepted();
    expect(pacer.currentRatePerSecond).toBe(20);
    pacer.stop();
  });

  it('makes up the starts a late timer delayed, within its catch-up window', async () => {
    const pacer = new PayoutRunPacer({ concurrency: 100, ratePerSecond: 50 });
    expect(await pacer.acquire()).toBe(true);
    // The event loop was busy until 45 ms: the starts due at 20 and 40 ms are made up at once
    // (not lost: each a full interval after the late one), the one due at 60 ms waits its time.
    jest.setSystemTime(45);
    const started: boolean[] = [];
    [pacer.acquire(), pacer.acquire(), pacer.acquire()].forEach(
      (acquired, i) => void acquired.then((go) => (started[i] = go)),
    );
    await Promise.resolve();
    expect(started.filter(Boolean)).toHaveLength(2);
    await jest.advanceTimersByTimeAsync(30);
    expect(started.filter(Boolean)).toHaveLength(3);
    pacer.stop();
  });

  it('paces a little under the rate: R + 1 starts always span more than a second', async () => {
    const pacer = new PayoutRunPacer({ concurrency: 100, ratePerSecond: 50 });
    const starts: number[] = [];
    for (let i = 0; i < 120; i += 1) {
      void pacer.acquire().then((go) => {
        if (!go) return;
        starts.push(Date.now());
        pacer.release(Date.now());
      });
    }
    await jest.advanceTimersByTimeAsync(2500);
    expect(starts.length).toBeGreaterThan(100);
    for (let i = 50; i < starts.length; i += 1) {
      expect(starts[i] - starts[i - 50]).toBeGreaterThanOrEqual(1000 / PACE_MARGIN - 1);
    }
    pacer.stop();
  });

  it('starts its schedule again after idling, rather than bursting to make up the idle time', async () => {
    const pacer = new PayoutRunPacer({ concurrency: 100, ratePerSecond: 10 });
    expect(await pacer.acquire()).toBe(true);
    pacer.release();
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
    await jest.advanceTimersByTimeAsync(1000 / PACE_MARGIN - 1000 + 1);
    pacer.stop();
  });

  it('counts a send answered late from when it may have arrived, not from its start', async () => {
    const pacer = new PayoutRunPacer({ concurrency: 100, ratePerSecond: 2 });
    const starts: number[] = [];
    const take = () => void pacer.acquire().then((go) => go && starts.push(Date.now()));
    for (let i = 0; i < 4; i += 1) take();
    await Promise.resolve();
    expect(starts).toEqual([0]);
    // The first is answered in 5 ms: the quickest answer. The second starts a paced interval
    // later and takes 80 ms (the service or this process stalled): it may have reached the
    // service up to 75 ms after its start.
    await jest.advanceTimersByTimeAsync(5);
    pacer.release(starts[0]);
    await jest.advanceTimersByTimeAsync(1000 / (2 * PACE_MARGIN) - 5 + 1);
    expect(starts).toHaveLength(2);
    await jest.advanceTimersByTimeAsync(80);
    pacer.release(starts[1]);
    const secondArrivedBy = starts[1] + 75;
    // The third goes a span after the first; the fourth a span after the second's latest arrival,
    // later than its paced time and than a span after the second's start.
    await jest.advanceTimersByTimeAsync(1000 / PACE_MARGIN - Date.now() + 1);
    expect(starts).toHaveLength(3);
    await jest.advanceTimersByTimeAsync(5);
    pacer.release(starts[2]);
    await jest.advanceTimersByTimeAsync(secondArrivedBy + 1000 / PACE_MARGIN - Date.now() - 2);
    expect(starts).toHaveLength(3);
    await jest.advanceTimersByTimeAsync(4);
    expect(starts).toHaveLength(4);
    expect(starts[3] - starts[1]).toBeGreaterThan(1000 / PACE_MARGIN + 70);
    pacer.stop();
  });

  it('counts a slow answer at most 100 ms late: the service at work after counting it', async () => {
    const pacer = new PayoutRunPacer({ concurrency: 100, ratePerSecond: 2 });
    const starts: number[] = [];
    const take = () => void pacer.acquire().then((go) => go && starts.push(Date.now()));
    for (let i = 0; i < 4; i += 1) take();
    await Promise.resolve();
    await jest.advanceTimersByTimeAsync(5);
    pacer.release(starts[0]);
    // The second and third go a paced interval and a span after the first; the fourth waits, two
    // sends being in flight.
    await jest.advanceTimersByTimeAsync(1200);
    expect(starts).toHaveLength(3);
    // The second is answered two seconds after its start (a payout waiting for the mobile
    // network): counted as arrived 100 ms after its start at the latest, long out of the span, so
    // the fourth goes now; counted at its answer, it would wait a second more.
    await jest.advanceTimersByTimeAsync(starts[1] + 2000 - Date.now());
    pacer.release(starts[1]);
    await Promise.resolve();
    expect(starts).toHaveLength(4);
    expect(starts[3] - starts[1]).toBeLessThan(2000 + 5);
    pacer.stop();
  });

  it('holds a place in the span for each send in flight until it is answered', async () => {
    const pacer = new PayoutRunPacer({ concurrency: 100, ratePerSecond: 2 });
    const starts: number[] = [];
    const take = () => void pacer.acquire().then((go) => go && starts.push(Date.now()));
    for (let i = 0; i < 3; i += 1) take();
    // Two sends that hang for five seconds may reach the service at any moment of it.
    await jest.advanceTimersByTimeAsync(5000);
    expect(starts).toHaveLength(2);
    // Answered now, after the longest wait seen: it arrived long ago, the span is free.
    pacer.release(starts[0]);
    await Promise.resolve();
    expect(starts).toHaveLength(3);
    pacer.stop();
  });

  it('never starts more than the rate in any second, however it catches up', async () => {
    const pacer = new PayoutRunPacer({ concurrency: 100, ratePerSecond: 5 });
    const starts: number[] = [];
    // Late timers all the way: time jumps by more than the catch-up window, and each acquisition
    // finds the pacer behind its schedule.
    for (let step = 0; step < 40; step += 1) {
      jest.setSystemTime(Date.now() + 130);
      void pacer.acquire().then((go) => {
        if (!go) return;
        starts.push(Date.now());
        pacer.release(Date.now());
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

  it('never falls below one send every two seconds', () => {
    const pacer = new PayoutRunPacer({ concurrency: 1, ratePerSecond: 1 });
    for (let i = 0; i < 30; i += 1) {
      pacer.onRateLimited(1);
      jest.advanceTimersByTime(2);
    }
    expect(pacer.currentRatePerSecond).toBe(0.5);
  });

  it('answers false to waiting and later acquisitions once stopped', async () => {
    const pacer = new PayoutRunPacer({ concurrency: 1, ratePerSecond: 10 });
    expect(await pacer.acquire()).toBe(true);
    const waiting = pacer.acquire();
    pacer.stop();
    expect(await waiting).toBe(false);
    expect(await pacer.acquire()).toBe(false);
  });
});

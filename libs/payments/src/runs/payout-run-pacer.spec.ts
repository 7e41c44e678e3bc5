import { PayoutRunPacer } from './payout-run-pacer';

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

  it('halves the rate once per pause on 429s and waits out Retry-After, then recovers', async () => {
    const pacer = new PayoutRunPacer({ concurrency: 100, ratePerSecond: 20 });
    pacer.onRateLimited(2000);
    pacer.onRateLimited(2000);
    expect(pacer.currentRatePerSecond).toBe(10);
    // Nothing starts during the pause.
    expect(await grantedWithin(pacer, 5, 1900)).toBe(0);
    await jest.advanceTimersByTimeAsync(200);
    for (let i = 0; i < 200; i += 1) pacer.onAccepted();
    expect(pacer.currentRatePerSecond).toBe(20);
    pacer.stop();
  });

  it('never falls below one send every two seconds', () => {
    const pacer = new PayoutRunPacer({ concurrency: 1, ratePerSecond: 1 });
    for (let i = 0; i < 10; i += 1) {
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

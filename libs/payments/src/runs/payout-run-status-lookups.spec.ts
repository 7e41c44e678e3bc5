import { PayoutRunStatusLookups } from './payout-run-status-lookups';

describe('PayoutRunStatusLookups', () => {
  const MINUTE = 60_000;
  const since = new Date(0).toISOString();

  it('looks an item up once its webhook is overdue, then at doubling intervals up to 6 hours', () => {
    let now = 0;
    const lookups = new PayoutRunStatusLookups(10 * MINUTE, () => now);
    const at: number[] = [];
    for (now = 0; now <= 24 * 60 * MINUTE; now += MINUTE) {
      if (lookups.take('r', 'a', since)) at.push(now / MINUTE);
    }
    // 10 minutes after, then 20, 40, 80, 160, 320 minutes apart, then every 6 hours.
    expect(at).toEqual([10, 30, 70, 150, 310, 630, 990, 1350]);
  });

  it('counts from when the item entered its state, and starts again for an item it forgot', () => {
    let now = 5 * MINUTE;
    const lookups = new PayoutRunStatusLookups(10 * MINUTE, () => now);
    expect(lookups.take('r', 'a', new Date(4 * MINUTE).toISOString())).toBe(false);
    now = 14 * MINUTE;
    expect(lookups.take('r', 'a', new Date(4 * MINUTE).toISOString())).toBe(true);
    expect(lookups.take('r', 'a', new Date(4 * MINUTE).toISOString())).toBe(false);
    lookups.forget('r', 'a');
    expect(lookups.take('r', 'a', new Date(0).toISOString())).toBe(true);
  });

  it('never looks up with 0', () => {
    const lookups = new PayoutRunStatusLookups(0, () => 365 * 24 * 60 * MINUTE);
    expect(lookups.take('r', 'a', since)).toBe(false);
  });
});

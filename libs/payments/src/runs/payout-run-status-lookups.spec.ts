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

  it.each([1_000, 1_001, 1_200])(
    'looks each of %d waiting items up once per scheduled look-up, past the 1,000 it remembers',
    (items) => {
      let now = 0;
      const lookups = new PayoutRunStatusLookups(10 * MINUTE, () => now, 1_000);
      const perRead: number[] = [];
      // The engine reads each waiting item at most 5 minutes apart.
      for (now = 10 * MINUTE; now <= 65 * MINUTE; now += 5 * MINUTE) {
        let taken = 0;
        for (let item = 0; item < items; item += 1) {
          if (lookups.take('r', `i${item}`, since)) taken += 1;
        }
        perRead.push(taken);
      }
      // Due at 10 minutes, then 30 (and 70): never at every read.
      expect(perRead).toEqual([items, 0, 0, 0, items, 0, 0, 0, 0, 0, 0, 0]);
    },
  );

  it('looks up a forgotten item when reads come further apart than 5 minutes (a long settlementPollMs)', () => {
    let now = 0;
    // Room for one item; reads every 10 minutes, 7 minutes past each look-up's time.
    const lookups = new PayoutRunStatusLookups(60 * MINUTE, () => now, 1, 10 * MINUTE);
    let taken = 0;
    for (now = 7 * MINUTE; now <= 48 * 60 * MINUTE; now += 10 * MINUTE) {
      // Another item fills the room each time: `a` is forgotten between its reads.
      lookups.take('r', 'other', new Date(now).toISOString());
      if (lookups.take('r', 'a', since)) taken += 1;
    }
    expect(taken).toBeGreaterThan(0);
  });

  it('goes on with the schedule for an item first seen past its first look-ups (a restart)', () => {
    let now = 75 * MINUTE;
    const lookups = new PayoutRunStatusLookups(10 * MINUTE, () => now);
    // Due at 10, 30, 70, 150: the latest, of 70, is taken now, and the next 80 minutes after.
    expect(lookups.take('r', 'a', since)).toBe(true);
    now = 150 * MINUTE;
    expect(lookups.take('r', 'a', since)).toBe(false);
    now = 155 * MINUTE;
    expect(lookups.take('r', 'a', since)).toBe(true);
  });

  it('never looks up with 0', () => {
    const lookups = new PayoutRunStatusLookups(0, () => 365 * 24 * 60 * MINUTE);
    expect(lookups.take('r', 'a', since)).toBe(false);
  });
});

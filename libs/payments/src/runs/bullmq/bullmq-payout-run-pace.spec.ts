import { BLIND_PACE_MARGIN } from '../payout-run-pacer';
import { limiterOf } from './bullmq-payout-run-pace';

describe('limiterOf (BullMQ rate limit of a run)', () => {
  it.each([0.5, 1, 2, 7.3, 10, 20, 50, 60, 333, 500, 1000, 5000])(
    'paces %p per second under the rate by the margin, within 1%, in whole milliseconds',
    (rate) => {
      const { max, duration } = limiterOf(rate);
      expect(Number.isInteger(max) && max >= 1).toBe(true);
      expect(Number.isInteger(duration) && duration >= 10).toBe(true);
      const perSecond = (max * 1000) / duration;
      expect(perSecond).toBeLessThanOrEqual(rate * BLIND_PACE_MARGIN);
      expect(perSecond).toBeGreaterThanOrEqual(rate * BLIND_PACE_MARGIN * 0.99);
    },
  );
});

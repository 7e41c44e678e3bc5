import { PAYOUT_RUN_PACE_LIMITS, resolvePayoutRunsOptions } from './payout-runs.options';

describe('resolvePayoutRunsOptions', () => {
  it('gives the defaults', () => {
    expect(resolvePayoutRunsOptions({})).toMatchObject({
      concurrency: 4,
      ratePerSecond: 10,
      settlementPollMs: 1000,
      pauseAfterInDoubtSends: 5,
    });
  });

  it.each([
    ['concurrency', PAYOUT_RUN_PACE_LIMITS.concurrency],
    ['ratePerSecond', PAYOUT_RUN_PACE_LIMITS.ratePerSecond],
    // Node fires a longer timer after 1 ms: a slow poll would become a busy one.
    ['settlementPollMs', 2_147_483_647],
    ['progressIntervalMs', 2_147_483_647],
    ['followInDoubtMs', 2_147_483_647],
  ])('takes %s up to %i and refuses more, naming the option and its bound', (name, max) => {
    expect(resolvePayoutRunsOptions({ [name]: max })).toMatchObject({ [name]: max });
    expect(() => resolvePayoutRunsOptions({ [name]: max + 1 })).toThrow(
      `The PayoutRunsModule option ${name} must be at most ${max}`,
    );
  });

  it('refuses a key that is not an option (a typo would leave the default pace)', () => {
    const mistyped = { concurrency: 2, ratePerSecound: 1 } as Parameters<
      typeof resolvePayoutRunsOptions
    >[0];
    expect(() => resolvePayoutRunsOptions(mistyped)).toThrow(
      'The PayoutRunsModule option ratePerSecound is not an option',
    );
  });

  it.each([0, -1, 1.5, Number.NaN, '4'])('refuses concurrency %p, naming the rule', (value) => {
    expect(() => resolvePayoutRunsOptions({ concurrency: value as number })).toThrow(
      'The PayoutRunsModule option concurrency must be a positive integer',
    );
  });
});

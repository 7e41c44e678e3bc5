import { PaymentsValidationError } from '../errors';
import { PAYOUT_RUN_PACE_LIMITS, resolvePayoutRunsOptions } from './payout-runs.options';

/** The error `resolve` throws: a PaymentsValidationError of the module's options. */
function refusal(resolve: () => unknown): PaymentsValidationError {
  try {
    resolve();
  } catch (error) {
    expect(error).toBeInstanceOf(PaymentsValidationError);
    expect((error as PaymentsValidationError).target).toBe('PayoutRunsModuleOptions');
    return error as PaymentsValidationError;
  }
  throw new Error('not refused');
}

describe('resolvePayoutRunsOptions', () => {
  it('gives the defaults', () => {
    expect(resolvePayoutRunsOptions({})).toMatchObject({
      concurrency: 4,
      ratePerSecond: 10,
      settlementPollMs: 1000,
      pauseAfterInDoubtSends: 5,
      statusLookupAfterMs: 600_000,
    });
    // 0: the run never looks an item up itself.
    expect(resolvePayoutRunsOptions({ statusLookupAfterMs: 0 })).toMatchObject({
      statusLookupAfterMs: 0,
    });
  });

  it.each([
    ['concurrency', PAYOUT_RUN_PACE_LIMITS.concurrency],
    ['ratePerSecond', PAYOUT_RUN_PACE_LIMITS.ratePerSecond],
    // Node fires a longer timer after 1 ms: a slow poll would become a busy one.
    ['settlementPollMs', 2_147_483_647],
    ['progressIntervalMs', 2_147_483_647],
    ['followInDoubtMs', 2_147_483_647],
    ['statusLookupAfterMs', 2_147_483_647],
  ])('takes %s up to %i and refuses more, naming the option and its bound', (name, max) => {
    expect(resolvePayoutRunsOptions({ [name]: max })).toMatchObject({ [name]: max });
    expect(refusal(() => resolvePayoutRunsOptions({ [name]: max + 1 })).errors).toEqual([
      { field: name, rule: 'max', message: `${name} must be at most ${max}` },
    ]);
  });

  it('refuses a key that is not an option (a typo would leave the default pace)', () => {
    const mistyped = { concurrency: 2, ratePerSecound: 1 } as Parameters<
      typeof resolvePayoutRunsOptions
    >[0];
    const error = refusal(() => resolvePayoutRunsOptions(mistyped));
    expect(error.errors).toEqual([
      expect.objectContaining({ field: 'ratePerSecound', rule: 'whitelist' }),
    ]);
    expect(error.message).toContain('ratePerSecound is not an option of PayoutRunsModule');
  });

  it('names every key that is not an option at once', () => {
    const mistyped = { concurency: 2, ratePerSecound: 1 } as Parameters<
      typeof resolvePayoutRunsOptions
    >[0];
    expect(refusal(() => resolvePayoutRunsOptions(mistyped)).errors).toEqual([
      expect.objectContaining({ field: 'concurency', rule: 'whitelist' }),
      expect.objectContaining({ field: 'ratePerSecound', rule: 'whitelist' }),
    ]);
  });

  it.each([0, -1, 1.5, Number.NaN, '4'])('refuses concurrency %p, naming the rule', (value) => {
    expect(
      refusal(() => resolvePayoutRunsOptions({ concurrency: value as number })).errors,
    ).toEqual([
      {
        field: 'concurrency',
        rule: 'isPositiveInteger',
        message: 'concurrency must be a positive integer',
      },
    ]);
  });
});

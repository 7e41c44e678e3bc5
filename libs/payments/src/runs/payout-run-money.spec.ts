import type { Balances } from '../dto/lookups';
import { checkPayoutRunBalance } from './payout-run-balance';
import { fromMinorUnits, minorUnitDigits, toMinorUnits } from '../money';
import { PayoutRunTally } from './payout-run-tally';
import type { PreparedPayoutRunItem } from './payout-run-validation';

const item = (amount: number, currency: string): PreparedPayoutRunItem => ({
  itemId: 'i',
  operation: 'payouts.panAfrican',
  request: {},
  idempotencyKey: 'k',
  amount,
  currency,
  wallet: 'local',
});

const balances = (currency: string, balance: number): Balances =>
  ({
    local: { currency, balance },
    usd: { currency: 'USD', balance: 0 },
  }) as unknown as Balances;

describe('payout-run money in minor units', () => {
  it('knows the ISO 4217 minor units: KES 2, UGX and RWF 0, TND 3', () => {
    expect(['KES', 'UGX', 'RWF', 'TND', 'NGN'].map(minorUnitDigits)).toEqual([2, 0, 0, 3, 2]);
    expect(toMinorUnits(0.1, 'KES')).toBe(10);
    expect(toMinorUnits(1.005, 'KES')).toBeUndefined();
    expect(toMinorUnits(1.005, 'TND')).toBe(1005);
    expect(toMinorUnits(1000.5, 'UGX')).toBeUndefined();
    // The binary product's error grows with the amount; a decimal's own digits never pass.
    expect(toMinorUnits(100.000000001, 'KES')).toBeUndefined();
    expect(toMinorUnits(1.5e10, 'XOF')).toBe(1.5e10);
    expect(toMinorUnits(296815614.84, 'KES')).toBe(29681561484);
    expect(toMinorUnits(296815614.845, 'KES')).toBeUndefined();
    expect(toMinorUnits(6000000000000.005, 'KES')).toBeUndefined();
    expect(toMinorUnits(2_000_000_000.25, 'NGN')).toBe(200_000_000_025);
    expect(toMinorUnits(1e308, 'KES')).toBeUndefined();
    expect(toMinorUnits(5e-324, 'KES')).toBeUndefined();
    expect(toMinorUnits(1e-11, 'TND')).toBeUndefined();
    // A binary sum a hair off its decimal is that decimal.
    expect(toMinorUnits(0.1 + 0.2, 'KES')).toBe(30);
    expect(fromMinorUnits(30, 'KES')).toBe(0.3);
  });

  it('sums 1,000 × 1.005 TND to 1005 and 1,000 × 0.004 TND to 4, not rounding each addition', () => {
    const sum = (amount: number) =>
      checkPayoutRunBalance(
        Array.from({ length: 1000 }, () => item(amount, 'TND')),
        balances('TND', 10_000),
      ).check.checked[0].required;
    expect(sum(1.005)).toBe(1005);
    expect(sum(0.004)).toBe(4);
  });

  it.each([
    ['absent', undefined],
    ['null', null],
  ])(
    'reports USD items unchecked, never passed, when the USD wallet is %s; local items are checked',
    (_label, usd) => {
      const answer = { local: { currency: 'KES', balance: 50 }, usd } as unknown as Balances;
      const { check, shortfalls } = checkPayoutRunBalance(
        [{ ...item(70, 'USD'), wallet: 'USD' }, item(80, 'KES')],
        answer,
      );
      expect(check).toEqual({
        checked: [{ currency: 'KES', required: 80, available: 50 }],
        unchecked: [{ currency: 'USD', required: 70 }],
      });
      expect(shortfalls).toEqual([{ currency: 'KES', required: 80, available: 50 }]);
    },
  );

  it('keeps totals per state exactly as items move: 0.1 + 0.2 is 0.3', () => {
    const tally = new PayoutRunTally();
    tally.add('queued', 'KES', 10);
    tally.add('queued', 'KES', 20);
    tally.move('queued', 'succeeded', 'KES', 10);
    tally.move('queued', 'succeeded', 'KES', 20);
    const { counts, totals } = tally.summary();
    expect(counts.succeeded).toBe(2);
    expect(totals.byState.succeeded).toEqual({ KES: { count: 2, amount: 0.3 } });
    expect(totals.byState.queued).toEqual({});
    expect(totals.all).toEqual({ KES: { count: 2, amount: 0.3 } });
  });

  it('sums past 2^53 minor units exactly, to the number nearest the decimal', () => {
    const tally = new PayoutRunTally();
    const cents = toMinorUnits(999_999_999_999.99, 'KES') as number;
    for (let index = 0; index < 100; index += 1) tally.add('succeeded', 'KES', cents);
    // 9,999,999,999,999,900 cents: past 2^53, where adding numbers drifts by whole cents.
    expect(tally.summary().totals.succeeded).toEqual({
      KES: { count: 100, amount: 99_999_999_999_999 },
    });
    tally.add('succeeded', 'KES', 1);
    tally.move('succeeded', 'failed', 'KES', cents);
    expect(tally.summary().totals.succeeded.KES.amount).toBe(98_999_999_999_999.02);
    expect(fromMinorUnits(-12_345n, 'KES')).toBe(-123.45);
    expect(fromMinorUnits(5n, 'TND')).toBe(0.005);
    expect(fromMinorUnits(7n, 'UGX')).toBe(7);
  });
});

import type { TransactionStatus } from './dto/lookups';
import { amountsDiffer, recordFigures } from './transaction-outcome';
import { keptServiceText } from './journal/personal-data';

describe('amountsDiffer', () => {
  it.each([
    ['KES', 100, 100.004, false],
    ['KES', 100, 100.005, true],
    ['KES', 0.1 + 0.2, 0.3, false],
    ['TND', 1.234, 1.2344, false],
    ['TND', 1.234, 1.238, true],
    ['TND', 1.234, 1.2345, true],
    ['tnd ', 1.234, 1.235, true],
    ['CLF', 1.2345, 1.2346, true],
    ['UGX', 1000, 1000.4, false],
    ['UGX', 1000, 1001, true],
    [undefined, 100, 100.004, false],
    [undefined, 100, 100.01, true],
  ] as const)('in %s, %p and %p differ: %p', (currency, a, b, differ) => {
    expect(amountsDiffer(a, b, currency)).toBe(differ);
    expect(amountsDiffer(b, a, currency)).toBe(differ);
  });
});

describe('recordFigures', () => {
  /** The service's record of a payout to 0712345678 (Ada Obi) with `status` and `reason`. */
  const record = (status: string, reason: unknown) =>
    ({
      code: '9BD000000001eW',
      type: 'withdrawal',
      amount: 100,
      currency: 'KES',
      transactionDetails: {
        status,
        reason,
        phoneNumber: '+254712345678',
        accountNumber: '',
        receiver: 'Ada Obi',
        payer: '',
      },
    }) as unknown as TransactionStatus;

  /** A failed record of that payout, with `details` over its transaction details. */
  const failedWith = (details: Partial<TransactionStatus['transactionDetails']>) => {
    const failed = record('failed', '');
    return { ...failed, transactionDetails: { ...failed.transactionDetails, ...details } };
  };

  it("keeps the reason of a failure, the payee's number and name masked", () => {
    expect(
      recordFigures(record('failed', ' Payout to 0712345678 (Ada Obi) failed: DS timeout ')).reason,
    ).toBe('Payout to [personal data] ([personal data]) failed: DS timeout');
  });

  it('masks what else names someone: an email address, either party, a number the record lacks', () => {
    const withoutPhone = failedWith({
      phoneNumber: '',
      payer: 'Jane Wanjiru',
      reason: 'Payer Jane Wanjiru (jw.1987@mail.example) paid 254 712 345 678: declined',
    });
    expect(recordFigures(withoutPhone).reason).toBe(
      'Payer [personal data] ([personal data]) paid [personal data]: declined',
    );
  });

  it("makes spaces of what a request's text may not hold: escapes, NUL, bidi overrides", () => {
    expect(recordFigures(record('failed', 'DS timeout\u001b[2J\u0000\u202Eevil')).reason).toBe(
      'DS timeout [2J  evil',
    );
  });

  it('keeps no reason of a success, an empty one, or one that is not text', () => {
    expect(recordFigures(record('success', 'Sent to Ada')).reason).toBeUndefined();
    expect(recordFigures(record('failed', '  ')).reason).toBeUndefined();
    expect(recordFigures(record('failed', 42)).reason).toBeUndefined();
  });

  it('keeps at most 200 characters of it', () => {
    const kept = recordFigures(record('failed', 'x'.repeat(500))).reason;
    expect(kept).toBe(`${'x'.repeat(200)}…`);
  });

  it('masks an email address whole when a name runs up to it', () => {
    const named = failedWith({
      payer: 'Mr Ali',
      reason: 'Refused for Mr Ali@mail.example, try later',
    });
    expect(recordFigures(named).reason).toBe('Refused for Mr [personal data], try later');
  });

  it("masks each party's name whole when both are given, a name of short words too", () => {
    const both = failedWith({
      payer: 'Li Na',
      reason: 'Payment from Li Na to Ada Obi failed',
    });
    expect(recordFigures(both).reason).toBe(
      'Payment from [personal data] to [personal data] failed',
    );
  });

  it('masks a number the record lacks whatever marks stand between its digits', () => {
    for (const written of [
      '0733\u00a0111\u00a0222',
      '0733\u2013111\u2013222',
      '0733/111/222',
      '0733_111_222',
      '0733,111,222',
      '0733\t111\t222',
      '٠٧٣٣١١١٢٢٢',
    ]) {
      expect(recordFigures(record('failed', `Payout to ${written} failed`)).reason).toBe(
        'Payout to [personal data] failed',
      );
    }
  });

  it('makes spaces of bidi marks, zero-width characters and line or paragraph separators', () => {
    expect(
      recordFigures(record('failed', 'DS\u200ftimeout\u200e\u061c\u2028user\u2029gone\u200b'))
        .reason,
    ).toBe('DS timeout   user gone');
  });

  it("reads a long reason's first 1,000 characters only, less the word they cut", () => {
    const reason = `${'DS timeout '.repeat(90)}user 0733 111 2${'2'.repeat(10_000)} jw@mail.example`;
    const kept = recordFigures(record('failed', reason)).reason ?? '';
    expect(kept).toBe(`${'DS timeout '.repeat(90).slice(0, 200)}…`);
    // What the cut leaves of a number ends with it: no part of one is kept at the end.
    const cutInNumber = `${'a'.repeat(990)} 0733 111 2${'2'.repeat(100)}`;
    expect(recordFigures(record('failed', cutInNumber)).reason).toBe(`${'a'.repeat(200)}…`);
    expect(keptServiceText(cutInNumber, {}, 2_000)).toBe(`${'a'.repeat(990)}…`);
  });

  it('keeps a reason when the record names parties with texts far longer than the reason', () => {
    const hostile = failedWith({
      payer: 'Ali '.repeat(3_000),
      accountNumber: 'i'.repeat(20_000),
      reason: 'DS timeout Ali',
    });
    expect(recordFigures(hostile).reason).toBe('DS timeout [personal data]');
  });
});

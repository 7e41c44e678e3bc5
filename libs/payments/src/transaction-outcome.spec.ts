import type { TransactionStatus } from './dto/lookups';
import { amountsDiffer, recordFigures } from './transaction-outcome';

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

  it("keeps the reason of a failure, the payee's number and name masked", () => {
    expect(
      recordFigures(record('failed', ' Payout to 0712345678 (Ada Obi) failed: DS timeout ')).reason,
    ).toBe('Payout to [personal data] ([personal data]) failed: DS timeout');
  });

  it('masks what else names someone: an email address, either party, a number the record lacks', () => {
    const withoutPhone: TransactionStatus = {
      ...record('failed', ''),
      transactionDetails: {
        ...record('failed', '').transactionDetails,
        phoneNumber: '',
        payer: 'Jane Wanjiru',
        reason: 'Payer Jane Wanjiru (jw.1987@mail.example) paid 254 712 345 678: declined',
      },
    };
    expect(recordFigures(withoutPhone).reason).toBe(
      'Payer [personal data] [personal data] ([personal data]) paid [personal data]: declined',
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
});

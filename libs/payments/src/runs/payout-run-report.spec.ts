import { csvCell, payoutRunCsv } from './payout-run-report';

describe('payout-run CSV report', () => {
  it('guards formulas at the start of a cell and anywhere after a separator of any locale', () => {
    expect(csvCell('emp-1')).toBe('emp-1');
    expect(csvCell('=1+1')).toBe("'=1+1");
    expect(csvCell('-5')).toBe("'-5");
    expect(csvCell('emp;=1+1')).toBe(`"'emp;=1+1"`);
    expect(csvCell('emp, -1')).toBe(`"'emp, -1"`);
    expect(csvCell('emp;\t@SUM(A1)')).toBe(`"'emp;\t@SUM(A1)"`);
    expect(csvCell('a\r\n=b')).toBe(`"'a\r\n=b"`);
    expect(csvCell('x";+1')).toBe(`"'x"";+1"`);
    // A separator alone is quoted, not guarded: the reason reads as the service wrote it.
    expect(csvCell('a,b')).toBe(`"a,b"`);
    expect(csvCell('a\tb')).toBe(`"a\tb"`);
    expect(csvCell('failed: webhook, status failed')).toBe(`"failed: webhook, status failed"`);
    expect(csvCell('say "hi"')).toBe(`"say ""hi"""`);
    expect(csvCell(12.5)).toBe('12.5');
  });

  it('writes one line per item, header first', () => {
    const csv = payoutRunCsv([
      {
        runId: 'r',
        itemId: 'emp-1',
        operation: 'payouts.mpesa',
        idempotencyKey: 'run-r-abc',
        amount: 100,
        currency: 'KES',
        state: 'failed',
        reason: 'failed: webhook, status failed',
        sends: 1,
        updatedAt: 'now',
      },
    ]);
    expect(csv.split('\r\n')).toEqual([
      'item_id,operation,state,amount,currency,reference,idempotency_key,sends,reason',
      `emp-1,payouts.mpesa,failed,100,KES,,run-r-abc,1,"failed: webhook, status failed"`,
      '',
    ]);
  });
});

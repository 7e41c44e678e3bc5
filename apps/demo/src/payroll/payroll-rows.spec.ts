import { PAYROLL_SAMPLE_CSV } from './payroll.page';
import { payrollProblems, readPayrollCsv } from './payroll-rows';

function readOk(text: string) {
  const read = readPayrollCsv(text);
  if (!read.ok) throw new Error(`refused: ${JSON.stringify(read.problems)}`);
  return read.file;
}

function problemsOf(text: string) {
  const read = readPayrollCsv(text);
  if (read.ok) throw new Error('accepted');
  return read.problems;
}

describe('readPayrollCsv', () => {
  it('turns rows into run items: kind to operation, amount to a number, empty cells left out', () => {
    const file = readOk(
      'itemId,KIND,phoneNumber,amount,narration,walletType,allowDuplicate\n' +
        'E1,mpesa,0712345678,1500.50,"Salary, March",,\n' +
        'E2,merchant,+254712345678,750,Rent,USD,yes\n',
    );

    expect(file.items).toEqual([
      {
        itemId: 'E1',
        operation: 'payouts.mpesa',
        request: { phoneNumber: '0712345678', amount: 1500.5, narration: 'Salary, March' },
      },
      {
        itemId: 'E2',
        operation: 'payouts.merchant',
        request: {
          phoneNumber: '+254712345678',
          amount: 750,
          narration: 'Rent',
          walletType: 'USD',
        },
        allowDuplicate: true,
      },
    ]);
  });

  it('leaves an amount that is not a plain decimal, and an unknown kind, to the library', () => {
    const file = readOk('itemId,kind,amount\nE1,bank,"1,500"\n');

    expect(file.items).toEqual([
      { itemId: 'E1', operation: undefined, request: { amount: '1,500' } },
    ]);
  });

  it('reads the sample file of the page', () => {
    const file = readOk(PAYROLL_SAMPLE_CSV);

    expect(file.items.map((item) => item.operation)).toEqual([
      'payouts.mpesa',
      'payouts.mpesa',
      'payouts.mpesa',
      'payouts.merchant',
      'payouts.panAfrican',
    ]);
  });

  it('refuses an unknown, a repeated or a missing column, naming the header line', () => {
    expect(problemsOf('\n\nitemId,ammount,itemId\n')).toEqual([
      expect.objectContaining({ field: 'ammount', rule: 'knownColumn', lines: [3] }),
      expect.objectContaining({ field: 'itemId', rule: 'unique', lines: [3] }),
      expect.objectContaining({ field: 'kind', rule: 'required', lines: [3] }),
    ]);
  });

  it('hints at the separator when the header was written with semicolons', () => {
    expect(problemsOf('itemId;kind;amount\n')[0].message).toMatch(/separator must be a comma/);
  });

  it('refuses a line whose cells do not match the header, and an unclear allowDuplicate', () => {
    expect(problemsOf('itemId,kind,allowDuplicate\nE1,mpesa\nE2,mpesa,maybe\n')).toEqual([
      expect.objectContaining({ itemId: '#0', rule: 'columnCount', lines: [2] }),
      expect.objectContaining({
        itemId: 'E2',
        field: 'allowDuplicate',
        rule: 'isBoolean',
        lines: [3],
      }),
    ]);
  });

  it('refuses bad CSV with its line, and an empty file', () => {
    expect(problemsOf('itemId,kind\nE1,"mpesa\n')).toEqual([
      expect.objectContaining({ field: 'file', rule: 'csv', lines: [2] }),
    ]);
    expect(problemsOf('')).toEqual([expect.objectContaining({ rule: 'required', lines: [] })]);
  });
});

describe('payrollProblems', () => {
  it("puts the library's problems on the file's lines and calls operation kind", () => {
    const file = readOk('itemId,kind,amount\n\nE1,mpesa,5\n,mpesa,100\nE1,bank,100\n');

    expect(
      payrollProblems(file, [
        { itemId: 'E1', field: 'amount', rule: 'min', message: 'amount must be at least 10' },
        { itemId: '#1', field: 'itemId', rule: 'isNotEmpty', message: 'no id' },
        { itemId: 'E1', field: 'operation', rule: 'isIn', message: 'operation must be one of…' },
        { itemId: '-', field: 'items', rule: 'arraySize', message: 'too many' },
      ]),
    ).toEqual([
      // Two rows share the id: the problem cannot tell which one it is about.
      expect.objectContaining({ itemId: 'E1', field: 'amount', lines: [3, 5] }),
      expect.objectContaining({ itemId: '#1', lines: [4] }),
      expect.objectContaining({
        field: 'kind',
        rule: 'isIn',
        message: 'kind must be one of mpesa, pan-african, merchant',
      }),
      expect.objectContaining({ itemId: '-', lines: [] }),
    ]);
  });
});

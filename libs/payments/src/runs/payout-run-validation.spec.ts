import type { PaymentsDefaults } from '../payments-options.interface';
import { prepareRequest } from '../request-rules';
import { payoutRunItemKey, validatePayoutRunItems } from './payout-run-validation';
import type { PreparePayout } from './payout-run-validation';

const keyOf = (itemId: string) => payoutRunItemKey('a secret of the tests', 'r1', itemId);

const defaults: PaymentsDefaults = {
  username: 'acme',
  callbackUrl: 'https://shop.example/hook',
  walletType: 'local',
};

/** The rules and defaults alone; the runner's own checks are the service's (payout-runs specs). */
const prepare: PreparePayout = (operation, request) => prepareRequest(operation, request, defaults);

const mpesa = (itemId: string, phoneNumber: string, amount = 100) => ({
  itemId,
  operation: 'payouts.mpesa',
  request: { phoneNumber, amount, narration: 'Salary' },
});

describe('validatePayoutRunItems', () => {
  it('prepares every item with the library rules and defaults, keyed by the run and item', () => {
    const result = validatePayoutRunItems(
      keyOf,
      [
        mpesa('a', '0712345678'),
        {
          itemId: 'b',
          operation: 'payouts.merchant',
          request: {
            amount: 50,
            phoneNumber: '+254712345678',
            narration: 'Stock',
            businessAccount: '123456',
            businessNumber: 'N/A',
          },
        },
      ],
      prepare,
      false,
    );
    expect(result).toMatchObject({
      ok: true,
      items: [
        { itemId: 'a', idempotencyKey: keyOf('a'), amount: 100, currency: 'KES', wallet: 'local' },
        {
          itemId: 'b',
          idempotencyKey: keyOf('b'),
          request: { username: 'acme', callbackUrl: 'https://shop.example/hook' },
        },
      ],
    });
  });

  it('reports every rule every item breaks, as the library names fields and rules', () => {
    const result = validatePayoutRunItems(
      keyOf,
      [
        mpesa('a', '12', 5),
        { itemId: 'b', operation: 'payouts.card', request: {} },
        mpesa('has space', '0712345678'),
        mpesa('x'.repeat(300), '0712345679'),
        { operation: 'payouts.mpesa', request: {} },
      ],
      prepare,
      false,
    );
    expect(result.ok).toBe(false);
    const problems = result.ok
      ? []
      : result.problems.map(({ itemId, field, rule }) => [itemId, field, rule]);
    expect(problems).toEqual(
      expect.arrayContaining([
        ['a', 'phoneNumber', 'isKenyanPhoneNumber'],
        ['a', 'amount', 'min'],
        ['b', 'operation', 'isIn'],
        ['has space', 'itemId', 'isPayoutRunItemId'],
        ['x'.repeat(300), 'itemId', 'isPayoutRunItemId'],
        ['#4', 'itemId', 'isNotEmpty'],
      ]),
    );
  });

  it('reads each field of an item once, and reports an item that cannot be read as the item', () => {
    let reads = 0;
    const shifting = {
      ...mpesa('unused', '0712345678'),
      // Answers one id to the first read and another after: the key must be the checked id's.
      get itemId(): string {
        reads += 1;
        return reads === 1 ? 'a' : 'b';
      },
    };
    const unreadable = {
      ...mpesa('unused', '0712345679'),
      get itemId(): string {
        throw new Error('unreadable');
      },
    };
    expect(validatePayoutRunItems(keyOf, [shifting], prepare, false)).toMatchObject({
      ok: true,
      items: [{ itemId: 'a', idempotencyKey: keyOf('a') }],
    });
    expect(
      validatePayoutRunItems(keyOf, [mpesa('ok', '0712345670'), unreadable], prepare, false),
    ).toEqual({
      ok: false,
      problems: [
        { itemId: '#1', field: 'item', rule: 'isReadable', message: 'the item could not be read' },
      ],
    });
  });

  it('refuses an item field the run does not read, and an allowDuplicate that is not a boolean', () => {
    const result = validatePayoutRunItems(
      keyOf,
      [
        { ...mpesa('a', '0712345678'), idempotencyKey: 'salary-a' },
        { ...mpesa('b', '0712345679'), allowDuplicates: true },
        { ...mpesa('c', '0712345670'), allowDuplicate: 'no' },
        { ...mpesa('d', '0712345671'), allowDuplicate: false },
      ],
      prepare,
      false,
    );
    expect(result.ok ? [] : result.problems.map((p) => [p.itemId, p.field, p.rule])).toEqual([
      ['a', 'idempotencyKey', 'whitelist'],
      ['b', 'allowDuplicates', 'whitelist'],
      ['c', 'allowDuplicate', 'isBoolean'],
    ]);
  });

  it('refuses duplicate ids and look-alike payouts (one number, two spellings) unless allowed', () => {
    const items = [mpesa('a', '0712345678'), mpesa('a', '0712345670'), mpesa('c', '+254712345678')];
    const refused = validatePayoutRunItems(keyOf, items, prepare, false);
    expect(refused.ok ? [] : refused.problems.map((p) => [p.itemId, p.rule])).toEqual([
      ['a', 'unique'],
      ['c', 'duplicatePayout'],
    ]);

    const marked = validatePayoutRunItems(
      keyOf,
      [items[0], { ...items[2], allowDuplicate: true }],
      prepare,
      false,
    );
    expect(marked.ok).toBe(true);
    expect(validatePayoutRunItems(keyOf, [items[0], items[2]], prepare, true).ok).toBe(true);
  });

  it('takes one account in any case or spacing, and a wallet number in any spelling, as one receiver', () => {
    const merchant = (itemId: string, businessAccount: string, businessNumber: string) => ({
      itemId,
      operation: 'payouts.merchant',
      request: {
        amount: 50,
        phoneNumber: '+254712345678',
        narration: 'Stock',
        businessAccount,
        businessNumber,
      },
    });
    const wallet = (itemId: string, accountNumber: string) => ({
      itemId,
      operation: 'payouts.panAfrican',
      request: {
        amount: 900,
        currency: 'NGN',
        phoneNumber: '+2348031234567',
        accountNumber,
        accountName: 'phone',
        accountHolderName: 'Ada',
        networkCode: 'NET',
        channelId: 'CH',
        narration: 'Pay',
        transactionChannel: 'phone',
        providerName: 'Provider',
        providerCode: 'P',
      },
    });
    const result = validatePayoutRunItems(
      keyOf,
      [
        merchant('m1', '888880', 'ACC-1'),
        merchant('m2', '888880', 'acc-1'),
        merchant('m3', '888880', ' ACC -1'),
        merchant('m4', '888880', 'ACC-2'),
        wallet('w1', '+2348031234567'),
        wallet('w2', '08031234567'),
        wallet('w3', '+2347031234567'),
        wallet('w4', '+234 (0) 803 123 4567'),
        wallet('w5', '0803/123/4567'),
      ],
      prepare,
      false,
    );
    expect(result.ok ? [] : result.problems.map((p) => [p.itemId, p.rule])).toEqual([
      ['m2', 'duplicatePayout'],
      ['m3', 'duplicatePayout'],
      ['w2', 'duplicatePayout'],
      ['w4', 'duplicatePayout'],
      ['w5', 'duplicatePayout'],
    ]);
  });

  it('takes one wallet paid by an M-Pesa and a pan-African payout as one receiver, and a network in any case as one', () => {
    const panAfrican = (itemId: string, fields: Record<string, unknown>) => ({
      itemId,
      operation: 'payouts.panAfrican',
      request: {
        amount: 4500,
        currency: 'KES',
        phoneNumber: '+254722000111',
        accountNumber: '+254722000111',
        accountName: 'phone',
        accountHolderName: 'Wanjiru',
        networkCode: 'd4a5b3e5-mpesa',
        channelId: 'CH',
        narration: 'Pay',
        transactionChannel: 'phone',
        providerName: 'M-Pesa',
        providerCode: 'MPESA',
        ...fields,
      },
    });
    const bank = { accountName: 'bank', transactionChannel: 'bank', accountNumber: '0123456789' };
    const result = validatePayoutRunItems(
      keyOf,
      [
        mpesa('m1', '0722000111', 4500),
        panAfrican('p1', {}),
        // Another currency: another country's number, not this wallet.
        panAfrican('p2', { currency: 'UGX', phoneNumber: '+256722000111' }),
        panAfrican('b1', { ...bank, networkCode: 'BANK-A' }),
        panAfrican('b2', { ...bank, networkCode: 'bank-a' }),
        panAfrican('b3', { ...bank, networkCode: 'BANK-B' }),
      ],
      prepare,
      false,
    );
    expect(result.ok ? [] : result.problems.map((p) => [p.itemId, p.rule])).toEqual([
      ['p1', 'duplicatePayout'],
      ['b2', 'duplicatePayout'],
    ]);
  });

  it('derives unguessable keys: the same for the same run and item, 22 characters after the run', () => {
    const key = payoutRunItemKey('a secret of the tests', 'payroll-2026-03', 'emp-1');
    expect(key).toMatch(/^run-payroll-2026-03-[A-Za-z0-9_-]{22}$/);
    expect(payoutRunItemKey('a secret of the tests', 'payroll-2026-03', 'emp-1')).toBe(key);
    expect(payoutRunItemKey('another secret of tests', 'payroll-2026-03', 'emp-1')).not.toBe(key);
    expect(key).not.toContain('emp-1');
  });

  it('refuses item ids a spreadsheet could read as a formula or a second cell', () => {
    const result = validatePayoutRunItems(
      keyOf,
      [
        mpesa('emp;=1+1', '0712345678'),
        mpesa('=HYPERLINK(1)', '0712345679'),
        mpesa('ok.1:a-b_c', '0712345670'),
      ],
      prepare,
      false,
    );
    expect(result.ok ? [] : result.problems.map((p) => [p.itemId, p.rule])).toEqual([
      ['emp;=1+1', 'isPayoutRunItemId'],
      ['=HYPERLINK(1)', 'isPayoutRunItemId'],
    ]);
  });

  it('refuses amounts with more decimals than the currency has (KES 2, UGX 0, TND 3)', () => {
    const pan = (itemId: string, currency: string, amount: number, accountNumber: string) => ({
      itemId,
      operation: 'payouts.panAfrican',
      request: {
        amount,
        currency,
        phoneNumber: '+256712345678',
        accountNumber,
        accountName: 'bank',
        accountHolderName: 'Jane',
        networkCode: 'NET',
        channelId: 'CH',
        narration: 'Pay',
        transactionChannel: 'bank',
        providerName: 'Provider',
        providerCode: 'P',
      },
    });
    const result = validatePayoutRunItems(
      keyOf,
      [
        mpesa('kes-ok', '0712345678', 100.5),
        mpesa('kes-bad', '0712345679', 100.005),
        pan('ugx-bad', 'UGX', 1000.5, '1'),
        pan('tnd-ok', 'TND', 10.125, '2'),
      ],
      prepare,
      false,
    );
    expect(
      result.ok
        ? []
        : result.problems.filter((p) => p.field === 'amount').map((p) => [p.itemId, p.rule]),
    ).toEqual([
      ['kes-bad', 'decimals'],
      ['ugx-bad', 'decimals'],
    ]);
  });

  it('takes an amount a binary sum left a hair off its decimals as that decimal, for the wire and the duplicate check', () => {
    const sum = 250.7 + 0.1;
    expect(sum).not.toBe(250.8);
    const accepted = validatePayoutRunItems(
      keyOf,
      [mpesa('sum', '0712345678', sum)],
      prepare,
      false,
    );
    expect(accepted.ok && accepted.items.map((item) => [item.amount, item.request])).toEqual([
      [250.8, expect.objectContaining({ amount: 250.8 })],
    ]);

    const twice = validatePayoutRunItems(
      keyOf,
      [mpesa('one', '0712345678', 250.8), mpesa('two', '0712345678', sum)],
      prepare,
      false,
    );
    expect(twice.ok ? [] : twice.problems.map((p) => [p.itemId, p.rule])).toEqual([
      ['two', 'duplicatePayout'],
    ]);
  });
});

import type { PaymentsDefaults } from '../payments-options.interface';
import { validatePayoutRunItems } from './payout-run-validation';

const defaults: PaymentsDefaults = {
  username: 'acme',
  callbackUrl: 'https://shop.example/hook',
  walletType: 'local',
};

const mpesa = (itemId: string, phoneNumber: string, amount = 100) => ({
  itemId,
  operation: 'payouts.mpesa',
  request: { phoneNumber, amount, narration: 'Salary' },
});

describe('validatePayoutRunItems', () => {
  it('prepares every item with the library rules and defaults, keyed run-<runId>-<itemId>', () => {
    const result = validatePayoutRunItems(
      'r1',
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
      defaults,
      false,
    );
    expect(result).toMatchObject({
      ok: true,
      items: [
        { itemId: 'a', idempotencyKey: 'run-r1-a', amount: 100, currency: 'KES', wallet: 'local' },
        {
          itemId: 'b',
          idempotencyKey: 'run-r1-b',
          request: { username: 'acme', callbackUrl: 'https://shop.example/hook' },
        },
      ],
    });
  });

  it('reports every rule every item breaks, as the library names fields and rules', () => {
    const result = validatePayoutRunItems(
      'r1',
      [
        mpesa('a', '12', 5),
        { itemId: 'b', operation: 'payouts.card', request: {} },
        mpesa('has space', '0712345678'),
        mpesa('x'.repeat(300), '0712345679'),
        { operation: 'payouts.mpesa', request: {} },
      ],
      defaults,
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
        ['has space', 'itemId', 'isIdempotencyKey'],
        ['x'.repeat(300), 'itemId', 'isIdempotencyKey'],
        ['#4', 'itemId', 'isNotEmpty'],
      ]),
    );
  });

  it('refuses duplicate ids and look-alike payouts (one number, two spellings) unless allowed', () => {
    const items = [mpesa('a', '0712345678'), mpesa('a', '0712345670'), mpesa('c', '+254712345678')];
    const refused = validatePayoutRunItems('r1', items, defaults, false);
    expect(refused.ok ? [] : refused.problems.map((p) => [p.itemId, p.rule])).toEqual([
      ['a', 'unique'],
      ['c', 'duplicatePayout'],
    ]);

    const marked = validatePayoutRunItems(
      'r1',
      [items[0], { ...items[2], allowDuplicate: true }],
      defaults,
      false,
    );
    expect(marked.ok).toBe(true);
    expect(validatePayoutRunItems('r1', [items[0], items[2]], defaults, true).ok).toBe(true);
  });
});

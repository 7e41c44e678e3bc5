import { PaymentsValidationError } from '../errors';
import { parsePaymentWebhook, paymentWebhookKind } from './payment-webhook-event';

// The service's own webhook examples (docs/wire-contract.md), recorded once for all tests.
import KENYA_FAILURE from '../../spec-support/real-service/webhooks/kenya-failure.json';
import KENYA_SUCCESS from '../../spec-support/real-service/webhooks/kenya-success.json';
import PAN_AFRICAN_FAILURE from '../../spec-support/real-service/webhooks/pan-african-failure.json';
import PAN_AFRICAN_SUCCESS from '../../spec-support/real-service/webhooks/pan-african-success.json';

describe('parsePaymentWebhook', () => {
  it('parses the Kenyan success example into every field, derived ones included', () => {
    expect(parsePaymentWebhook(KENYA_SUCCESS)).toStrictEqual({
      transactionReference: '9BD103739849eR',
      resultCode: 0,
      remarks: 'Successfully processes m-pesa transaction',
      thirdPartyTransId: 'UB9C46DH3Q',
      amount: 10,
      transactionDate: '2026-02-09 10:37:50.286784611 +0000 UTC',
      forwardUrl: 'https://your-server.com/callback',
      orderId: '',
      userId: '00000000-0000-4000-a000-000000000001',
      customerName: '',
      success: true,
      web3TransactionReference: '',
      succeeded: true,
      kind: 'collection',
      name: 'collection.succeeded',
      _raw: KENYA_SUCCESS,
    });
  });

  it('parses the Kenyan failure example; free-text dates stay strings', () => {
    expect(parsePaymentWebhook(KENYA_FAILURE)).toStrictEqual({
      transactionReference: '9BD104311505eR',
      resultCode: 1,
      remarks: 'Transaction failed with message: [Request Cancelled by user.]',
      transactionDate: 'November',
      forwardUrl: 'https://your-server.com/callback',
      orderId: '',
      success: false,
      status: '',
      succeeded: false,
      kind: 'collection',
      name: 'collection.failed',
      _raw: KENYA_FAILURE,
    });
  });

  it.each([
    ['pan-African success', PAN_AFRICAN_SUCCESS, 'payout', true, 'payout.succeeded'],
    ['pan-African failure', PAN_AFRICAN_FAILURE, 'collection', false, 'collection.failed'],
  ] as const)('parses the %s example', (_label, body, kind, succeeded, name) => {
    const event = parsePaymentWebhook(body);

    expect(event).toMatchObject({ kind, succeeded, name, resultCode: body.result_code });
    expect(event.transactionDate).toBe(body.transaction_date);
    expect(event._raw).toBe(body);
  });

  it.each([
    ['9BD103739849eR', 'collection'],
    ['9BD141203407eW', 'payout'],
    ['9BD12041887.eS', 'transfer'],
    ['9BD120418870eT', 'topup'],
    ['TX-1001', 'unknown'],
    ['9BD103739849ER', 'unknown'],
  ])('reads the kind of %s as %s', (reference, kind) => {
    expect(paymentWebhookKind(reference)).toBe(kind);
  });

  it('names transfers, and leaves top-ups and unknown kinds unnamed', () => {
    const transfer = { transaction_reference: '9BD12041887.eS', result_code: 0, success: true };
    expect(parsePaymentWebhook(transfer).name).toBe('transfer.succeeded');
    expect(parsePaymentWebhook({ ...transfer, success: false }).name).toBe('transfer.failed');
    const topup = parsePaymentWebhook({ ...transfer, transaction_reference: '9BD1eT' });
    expect(topup).toMatchObject({ kind: 'topup', succeeded: true });
    expect('name' in topup).toBe(false);
    expect(parsePaymentWebhook({ transaction_reference: 'X' }).kind).toBe('unknown');
  });

  it.each([
    ['result_code 0 without success', { result_code: 0 }, false],
    ['success without result_code', { success: true }, false],
    ['a string result_code', { result_code: '0', success: true }, false],
    ['a string success', { result_code: 0, success: 'true' }, false],
    ['result_code 0 and success true', { result_code: 0, success: true }, true],
  ])('succeeded is false unless result_code === 0 && success === true: %s', (_l, keys, ok) => {
    expect(parsePaymentWebhook({ transaction_reference: 'R1eR', ...keys }).succeeded).toBe(ok);
  });

  describe('idempotencyKey', () => {
    const body = {
      ...KENYA_SUCCESS,
      forward_url: 'https://shop.example/hook?malipo_key=from-forward',
    };

    it('is the malipo_key of the delivery URL', () => {
      const event = parsePaymentWebhook(body, { url: '/hook?a=1&malipo_key=from-url' });
      expect(event.idempotencyKey).toBe('from-url');
    });

    it('falls back to the malipo_key of forward_url', () => {
      expect(parsePaymentWebhook(body, { url: '/hook' }).idempotencyKey).toBe('from-forward');
      expect(parsePaymentWebhook(body).idempotencyKey).toBe('from-forward');
    });

    it('is absent without a usable key', () => {
      expect('idempotencyKey' in parsePaymentWebhook(KENYA_SUCCESS, { url: '/hook' })).toBe(false);
      const odd = { ...KENYA_SUCCESS, forward_url: 'not a url' };
      expect(parsePaymentWebhook(odd).idempotencyKey).toBeUndefined();
      const empty = parsePaymentWebhook(KENYA_SUCCESS, { url: '/hook?malipo_key=' });
      expect(empty.idempotencyKey).toBeUndefined();
      const long = parsePaymentWebhook(KENYA_SUCCESS, { url: `/h?malipo_key=${'k'.repeat(256)}` });
      expect(long.idempotencyKey).toBeUndefined();
    });
  });

  it('leaves out fields of an unexpected type and keeps every key in _raw', () => {
    const body = {
      transaction_reference: 'R2eW',
      amount: '10',
      result_code: null,
      success: 1,
      remarks: { nested: true },
      phone_number: 254700000000,
      brand_new_key: ['kept'],
    };
    const event = parsePaymentWebhook(body);

    expect(event).toStrictEqual({
      transactionReference: 'R2eW',
      succeeded: false,
      kind: 'payout',
      name: 'payout.failed',
      _raw: body,
    });
  });

  it('does not read inherited keys', () => {
    const body = JSON.parse(
      '{"transaction_reference":"R3eR","__proto__":{"success":true}}',
    ) as object;
    expect(parsePaymentWebhook(body).success).toBeUndefined();
  });

  it.each<[string, unknown]>([
    ['an array', [KENYA_SUCCESS]],
    ['null', null],
    ['a string', 'transaction_reference'],
    ['a number', 42],
    ['no reference', { ...KENYA_SUCCESS, transaction_reference: undefined }],
    ['an empty reference', { ...KENYA_SUCCESS, transaction_reference: '' }],
    ['a numeric reference', { ...KENYA_SUCCESS, transaction_reference: 9103739849 }],
    ['a 129-character reference', { ...KENYA_SUCCESS, transaction_reference: 'R'.repeat(129) }],
  ])('refuses %s with a PaymentsValidationError', (_label, body) => {
    expect(() => parsePaymentWebhook(body)).toThrow(PaymentsValidationError);
  });

  it('accepts a 128-character reference', () => {
    expect(parsePaymentWebhook({ transaction_reference: 'R'.repeat(128) }).kind).toBe('unknown');
  });
});

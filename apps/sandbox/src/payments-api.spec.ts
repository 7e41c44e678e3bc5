import { OPERATION_CASES } from '../../../test/support/fixtures';
import { basicAuth, setUpSandbox, wireBody } from '../test/sandbox-test-kit';

const COLLECTION_KEYS = [
  'message',
  'payment_method',
  'reference',
  'result',
  'status',
  'success',
  'tracking_id',
  'transaction_reference',
];
const PAYOUT_KEYS = ['amount', 'channel', 'message', 'status', 'success', 'transaction_reference'];

/** What the contract fixes for each fixture's response. */
const EXPECTED: Record<string, Record<string, unknown>> = {
  'collections.mpesa': { status: 'PENDING', payment_method: 'MOBILE_MONEY_KE' },
  'collections.card': { status: 'PENDING', payment_method: 'card' },
  'collections.panAfrican': { status: 'PENDING', payment_method: 'MOBILE_MONEY' },
  'payouts.mpesa': { status: 'QUEUED', channel: 'MOBILE_MONEY_KE', amount: 1000 },
  'payouts.panAfrican': { status: 'QUEUED', channel: 'BANK', amount: 20000 },
  'payouts.merchant': { status: 'QUEUED', channel: 'PAYBILL', amount: 750 },
};

describe('sandbox payments API', () => {
  const env = setUpSandbox();

  describe('authentication', () => {
    it.each([
      ['missing', null],
      ['wrong password', basicAuth('sandbox', 'wrong')],
      ['wrong username', basicAuth('someone', 'sandbox-secret')],
      ['not Basic', 'Bearer sandbox-secret'],
    ])('answers 401 UNAUTHORIZED for %s credentials', async (_label, authorization) => {
      const res = await env.client.post('/api/v2/payments', wireBody('collections.mpesa'), {
        authorization,
      });

      expect(res.status).toBe(401);
      expect(res.json).toEqual({
        success: false,
        message: expect.any(String),
        code: 'UNAUTHORIZED',
      });
      expect(res.headers.get('www-authenticate')).toMatch(/^Basic /);
      expect(await env.client.transactions()).toEqual([]);
    });
  });

  describe('the six operations accept the fixture wire bodies', () => {
    it.each(OPERATION_CASES.map((c) => [c.operation, c] as const))('%s', async (name, c) => {
      const res = await env.client.post(c.path, { ...c.wire, callback_url: env.receiver.url });

      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toMatch(/^application\/json/);
      const body = res.json;
      expect(body).toMatchObject({ success: true, ...EXPECTED[name] });
      expect(body.message).toEqual(expect.any(String));
      expect(body.transaction_reference).toMatch(/^SBX-/);
      if (c.kind === 'payout') {
        expect(Object.keys(body).sort()).toEqual(PAYOUT_KEYS);
      } else {
        const keys =
          c.kind === 'card' ? [...COLLECTION_KEYS, 'checkout_url'].sort() : COLLECTION_KEYS;
        expect(Object.keys(body).sort()).toEqual(keys);
        expect(body.tracking_id).toEqual(expect.any(String));
        expect(body.reference).toBe(body.transaction_reference);
      }
      if (c.kind === 'card') {
        expect(body.checkout_url).toBe(`${env.sandbox.url}/checkout/${body.transaction_reference}`);
      }

      const [transaction] = await env.client.transactions();
      expect(transaction).toMatchObject({
        reference: body.transaction_reference,
        operation: name,
        kind: c.kind === 'payout' ? 'payout' : 'collection',
        amount: c.wire.amount,
        callbackUrl: env.receiver.url,
      });
    });

    it('answers a pan-African bank collection with the bank account to pay into', async () => {
      const res = await env.client.post(
        '/api/v3/payments',
        wireBody('collections.panAfrican', {
          account_name: 'bank',
          transaction_channel: 'bank',
          callback_url: env.receiver.url,
        }),
      );

      expect(res.status).toBe(200);
      expect(res.json.payment_method).toBe('BANK_TRANSFER');
      expect(res.json.bank_account).toEqual({
        name: expect.any(String),
        branch_code: expect.any(String),
        account_number: expect.any(String),
        account_name: expect.any(String),
        account_reference: res.json.transaction_reference,
      });
      expect(res.json.checkout_url).toBeUndefined();
    });

    it('gives a pan-African collection with redirect_url a checkout_url', async () => {
      const res = await env.client.post(
        '/api/v3/payments',
        wireBody('collections.panAfrican', {
          redirect_url: 'https://shop.example.com/back',
          callback_url: env.receiver.url,
        }),
      );

      expect(res.json.checkout_url).toBe(
        `${env.sandbox.url}/checkout/${res.json.transaction_reference}`,
      );
    });

    it.each([
      ['payouts.panAfrican', '/api/v2/payments', { account_name: 'phone' }, 'MOBILE_MONEY'],
      ['payouts.merchant', '/api/v3/withdrawal', { business_number: 'N/A' }, 'TILL'],
    ] as const)('answers %s %j with channel %s', async (operation, path, overrides, channel) => {
      const res = await env.client.post(
        path,
        wireBody(operation, { ...overrides, callback_url: env.receiver.url }),
      );

      expect(res.status).toBe(200);
      expect(res.json.channel).toBe(channel);
    });

    it('takes the currency from the body, else KES, and the wallet from wallet_type', async () => {
      await env.client.post(
        '/api/v2/payments',
        wireBody('payouts.panAfrican', { callback_url: env.receiver.url }),
      );
      await env.client.post(
        '/api/v2/withdrawal',
        wireBody('payouts.mpesa', { wallet_type: undefined, callback_url: env.receiver.url }),
      );

      const [panAfrican, mpesa] = await env.client.transactions();
      expect(panAfrican).toMatchObject({ currency: 'NGN', walletType: 'USD' });
      expect(mpesa).toMatchObject({ currency: 'KES', walletType: 'local' });
    });
  });

  describe('validation of the wire body', () => {
    it.each([
      ['collections.mpesa', '/api/v2/payments', { amount: 9 }, 'amount must be at least 10'],
      [
        'collections.mpesa',
        '/api/v2/payments',
        { amount: 250_001 },
        'amount must be at most 250000',
      ],
      ['collections.mpesa', '/api/v2/payments', { amount: '1500' }, 'amount must be a number'],
      ['collections.card', '/api/v2/payments', { amount: 99 }, 'amount must be at least 100'],
      ['payouts.mpesa', '/api/v2/withdrawal', { amount: 5 }, 'amount must be at least 10'],
      ['payouts.merchant', '/api/v3/withdrawal', { amount: 0 }, 'amount must be greater than 0'],
      [
        'collections.panAfrican',
        '/api/v3/payments',
        { amount: -1 },
        'amount must be greater than 0',
      ],
      [
        'collections.mpesa',
        '/api/v2/payments',
        { phone_number: '+255712345678' },
        'phone_number must be a Kenyan phone number',
      ],
      [
        'payouts.mpesa',
        '/api/v2/withdrawal',
        { phone_number: '712345678' },
        'phone_number must be a Kenyan phone number',
      ],
      [
        'payouts.merchant',
        '/api/v3/withdrawal',
        { phone_number: '0712345678' },
        'phone_number must be a Kenyan phone number with country code',
      ],
      [
        'collections.panAfrican',
        '/api/v3/payments',
        { phone_number: '233241234567' },
        'phone_number must be a phone number with country code',
      ],
      [
        'collections.panAfrican',
        '/api/v3/payments',
        { account_name: 'wallet' },
        'account_name must be one of "bank", "phone"',
      ],
      [
        'payouts.panAfrican',
        '/api/v2/payments',
        { transaction_channel: 'card' },
        'transaction_channel must be one of "bank", "phone"',
      ],
      [
        'payouts.panAfrican',
        '/api/v2/payments',
        { currency: 'ngn' },
        'currency must be a 3-letter upper-case currency code',
      ],
      [
        'payouts.mpesa',
        '/api/v2/withdrawal',
        { wallet_type: 'EUR' },
        'wallet_type must be one of "local", "USD"',
      ],
      [
        'payouts.merchant',
        '/api/v3/withdrawal',
        { business_account: '88-88' },
        'business_account must contain digits only',
      ],
      [
        'collections.card',
        '/api/v2/payments',
        { callback_url: 'ftp://merchant.example.com/hook' },
        'callback_url must be an http or https URL',
      ],
      [
        'collections.panAfrican',
        '/api/v3/payments',
        { redirect_url: 'not a url' },
        'redirect_url must be an http or https URL',
      ],
      ['collections.mpesa', '/api/v2/payments', { narration: undefined }, 'narration is required'],
      ['collections.mpesa', '/api/v2/payments', { username: '' }, 'username must be a non-empty'],
      [
        'payouts.panAfrican',
        '/api/v2/payments',
        { provider_code: null },
        'provider_code is required',
      ],
      [
        'collections.mpesa',
        '/api/v2/payments',
        { channel: 'bitcoin' },
        'channel must be "MOBILE_MONEY_KE", "card" or absent',
      ],
      [
        'payouts.mpesa',
        '/api/v2/withdrawal',
        { channel: 'card' },
        'channel must be "MOBILE_MONEY_KE"',
      ],
    ] as const)('%s on %s with %j: 400 "%s"', async (operation, path, overrides, message) => {
      const res = await env.client.post(path, wireBody(operation, overrides));

      expect(res.status).toBe(400);
      expect(res.json).toEqual({
        success: false,
        message: expect.any(String),
        code: 'VALIDATION_ERROR',
      });
      // The message starts with the offending key.
      expect(res.json.message).toMatch(new RegExp(`^${message.split(' ')[0]} `));
      expect(res.json.message).toContain(message);
      expect(await env.client.transactions()).toEqual([]);
    });

    it('lists every problem of a body in one message', async () => {
      const res = await env.client.post(
        '/api/v2/payments',
        wireBody('collections.mpesa', { amount: 1, phone_number: 'x' }),
      );

      expect(res.json.message).toBe(
        'amount must be at least 10; phone_number must be a Kenyan phone number, 0XXXXXXXXX or +254XXXXXXXXX',
      );
    });

    it('refuses a body that is not a JSON object', async () => {
      const res = await env.client.post('/api/v2/payments', [1, 2]);

      expect(res.status).toBe(400);
      expect(res.json).toMatchObject({
        code: 'VALIDATION_ERROR',
        message: 'body must be a JSON object',
      });
    });

    it('answers malformed JSON with a 400 JSON error, and logs the request', async () => {
      const res = await env.client.post('/api/v2/payments', undefined, { raw: '{"amount": ' });

      expect(res.status).toBe(400);
      expect(res.headers.get('content-type')).toMatch(/^application\/json/);
      expect(res.json).toMatchObject({ success: false, code: 'BAD_REQUEST' });
      expect(await env.client.requests()).toEqual([
        expect.objectContaining({ method: 'POST', path: '/api/v2/payments' }),
      ]);
    });
  });

  describe('unknown routes', () => {
    it.each([
      ['POST', '/api/v4/payments'],
      ['GET', '/api/v2/payments'],
      ['GET', '/nothing-here'],
    ])('answers %s %s with a 404 JSON error', async (method, path) => {
      const res = await env.client.get(path, { method });

      expect(res.status).toBe(404);
      expect(res.json).toEqual({ success: false, message: expect.any(String), code: 'NOT_FOUND' });
    });
  });

  it('logs every API request with its method, path, idempotency key and time', async () => {
    await env.client.post(
      '/api/v2/payments',
      wireBody('collections.mpesa', { callback_url: env.receiver.url }),
      {
        idempotencyKey: 'log-1',
      },
    );
    await env.client.post('/api/v3/withdrawal', {}, { authorization: null });

    const log = await env.client.requests();
    expect(log).toEqual([
      { method: 'POST', path: '/api/v2/payments', idempotencyKey: 'log-1', at: expect.any(String) },
      { method: 'POST', path: '/api/v3/withdrawal', idempotencyKey: null, at: expect.any(String) },
    ]);
    expect(Number.isNaN(Date.parse(log[0].at))).toBe(false);
  });
});

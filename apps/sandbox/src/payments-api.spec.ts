import {
  basicAuth,
  BETA_AUTH,
  examplePath,
  setUpSandbox,
  wireBody,
} from '../test/sandbox-test-kit';
import type { ExampleOperation } from '../test/wire-examples';
import { GH_MTN, NG_GTBANK, TZ_CRDB_ID, WIRE_EXAMPLES } from '../test/wire-examples';

const COLLECTION_REF = /^9BD\d{9}eR$/;
const PAYOUT_REF = /^9BD\d{9}eW$/;
const TRANSFER_REF = /^9BD\d{9}eS$/;

/** The real error body. */
const error = (status: number, message: unknown = expect.any(String)) => ({
  status,
  success: false,
  message,
});

/** The exact answers of the real service, keys in its order. */
const EXPECTED: Record<ExampleOperation, (url: string) => Record<string, unknown>> = {
  'collections.mpesa': () => ({
    payment_method: 'mobile',
    status: 'SUCCESS',
    transaction_reference: expect.stringMatching(COLLECTION_REF),
    success: true,
    message: 'Processed successfully',
    trackingId: '',
    reference: '',
    result: null,
  }),
  'collections.card': (url) => ({
    payment_method: 'mobile',
    status: 'SUCCESS',
    checkout_url: expect.stringMatching(new RegExp(`^${url}/checkout/9BD\\d{9}eR$`)),
    transaction_reference: expect.stringMatching(COLLECTION_REF),
    success: true,
    message: 'Payment request sent successfully',
    trackingId: '',
    reference: '',
    result: null,
  }),
  'collections.panAfrican': () => ({
    payment_method: 'mobile',
    status: 'SUCCESS',
    transaction_reference: expect.stringMatching(COLLECTION_REF),
    success: true,
    message: 'processing',
    trackingId: '',
    reference: '',
    result: null,
  }),
  'payouts.mpesa': () => PAYOUT,
  'payouts.panAfrican': () => PAYOUT,
  'payouts.merchant': () => PAYOUT,
  'transfers.send': () => ({
    transaction_reference: expect.stringMatching(TRANSFER_REF),
    success: true,
    message: 'Transaction request sent successfully',
    trackingId: '',
    reference: '',
    result: null,
  }),
};
const PAYOUT = {
  success: true,
  correlator_id: expect.stringMatching(PAYOUT_REF),
  message: 'Transaction request sent successfully',
  status: 'SUCCESS',
  channel: '',
  amount: 0,
};

const OPERATIONS = Object.keys(WIRE_EXAMPLES) as ExampleOperation[];
const referenceOf = (body: Record<string, unknown>) =>
  (body.transaction_reference ?? body.correlator_id) as string;

describe('sandbox payments API', () => {
  // No webhook during a test: the specs read transactions while they are still pending.
  const env = setUpSandbox({ webhookDelayMs: 60_000 });

  describe('authentication', () => {
    it.each([
      ['missing', null],
      ['wrong password', basicAuth('sandbox', 'wrong')],
      ['wrong username', basicAuth('someone', 'sandbox-secret')],
      ['another account with this password', basicAuth('beta', 'sandbox-secret')],
      ['not Basic', 'Bearer sandbox-secret'],
    ])('answers 401 with the real error body for %s credentials', async (_label, authorization) => {
      const res = await env.client.send('collections.mpesa', {}, { authorization });

      expect(res.status).toBe(401);
      expect(res.json).toEqual(error(401));
      expect(res.headers.get('www-authenticate')).toMatch(/^Basic /);
      expect(await env.client.transactions()).toEqual([]);
    });

    it('accepts the credentials of the second account, and books on it', async () => {
      const res = await env.client.send('payouts.mpesa', {}, { authorization: BETA_AUTH });

      expect(res.status).toBe(200);
      const [transaction] = await env.client.transactions();
      expect(transaction.account).toBe('beta');
      const [sandbox, beta] = await env.client.accounts();
      expect(sandbox).toMatchObject({ username: 'sandbox', local: 1_000_000 });
      expect(beta).toMatchObject({ username: 'beta', local: 1_000_000 - 1000 });
    });
  });

  describe('the money operations answer in the real shapes', () => {
    it.each(OPERATIONS)('%s', async (operation) => {
      const res = await env.client.send(
        operation,
        operation === 'transfers.send' ? {} : { callback_url: env.receiver.url },
      );

      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toMatch(/^application\/json/);
      const expected = EXPECTED[operation](env.sandbox.url);
      expect(res.json).toEqual(expected);
      // The real key order, too.
      expect(Object.keys(res.json)).toEqual(Object.keys(expected));

      const [transaction] = await env.client.transactions();
      expect(transaction).toMatchObject({
        reference: referenceOf(res.json),
        operation,
        account: 'sandbox',
        amount: WIRE_EXAMPLES[operation].body.amount,
        status: operation === 'transfers.send' ? 'success' : 'pending',
        callbackUrl: operation === 'transfers.send' ? null : env.receiver.url,
      });
      if (operation === 'collections.card') {
        expect(res.json.checkout_url).toBe(
          `${env.sandbox.url}/checkout/${res.json.transaction_reference}`,
        );
      }
    });

    it('answers a pan-African bank collection with the bank account and no message', async () => {
      const res = await env.client.send('collections.panAfrican', {
        account_name: 'bank',
        transaction_channel: 'bank',
        network_code: NG_GTBANK.id,
        channel_id: NG_GTBANK.channelIds[0],
        phone_number: '+2348031234567',
        currency: 'NGN',
        amount: 1800,
        callback_url: env.receiver.url,
      });

      expect(res.status).toBe(200);
      const reference = res.json.transaction_reference as string;
      expect(res.json).toEqual({
        payment_method: 'mobile',
        status: 'SUCCESS',
        bank_account: {
          name: 'Sandbox Bank',
          branch_code: '',
          account_number: `0${reference.slice(3, 12)}`,
          account_name: 'Malipo Sandbox Collections',
          account_reference: reference,
        },
        transaction_reference: expect.stringMatching(COLLECTION_REF),
        success: true,
        trackingId: '',
        reference: '',
        result: null,
      });
    });

    it('gives a pan-African collection with redirect_url a checkout_url', async () => {
      const res = await env.client.send('collections.panAfrican', {
        redirect_url: 'https://shop.example.com/back',
        callback_url: env.receiver.url,
      });

      expect(res.json.checkout_url).toBe(
        `${env.sandbox.url}/checkout/${res.json.transaction_reference}`,
      );
    });

    it('dispatches channel "phone" on /api/v2/payments to the pan-African payout', async () => {
      const res = await env.client.post(
        '/api/v2/payments',
        wireBody('payouts.panAfrican', {
          network_code: GH_MTN.id,
          channel_id: GH_MTN.channelIds[0],
          account_name: 'phone',
          transaction_channel: 'phone',
          channel: 'phone',
          provider_name: GH_MTN.name,
          provider_code: GH_MTN.code,
          currency: 'GHS',
          amount: 100,
          wallet_type: undefined,
        }),
      );

      expect(res.status).toBe(200);
      expect(res.json).toEqual(PAYOUT);
      expect((await env.client.transactions())[0]).toMatchObject({
        operation: 'payouts.panAfrican',
        walletType: 'local',
        currency: 'GHS',
      });
    });

    it('counts characters as code points: 255 emoji are 255 characters', async () => {
      const res = await env.client.send('collections.mpesa', { narration: '😀'.repeat(255) });

      expect(res.status).toBe(200);
    });

    it('counts a URL in code points too: 2,022 of them are within 2,048', async () => {
      const callback = `https://m.example.com/${'😀'.repeat(2_000)}`;
      const res = await env.client.send('collections.mpesa', { callback_url: callback });

      expect(res.status).toBe(200);
    });

    it('gives every transaction its own reference', async () => {
      const references = new Set<string>();
      for (let i = 0; i < 20; i += 1) {
        references.add(referenceOf((await env.client.send('collections.mpesa')).json));
      }

      expect(references.size).toBe(20);
    });

    it('keeps callback_url verbatim, query string included', async () => {
      const callback = `${env.receiver.url}?order=7&malipo_key=0b9f1f6e-2b7e-4c3a-9b7e-1a2b3c4d5e6f`;

      await env.client.send('collections.mpesa', { callback_url: callback });

      expect((await env.client.transactions())[0].callbackUrl).toBe(callback);
    });

    it('takes the wallet from wallet_type: "USD", else the local wallet', async () => {
      await env.client.send('payouts.panAfrican');
      await env.client.send('payouts.mpesa');

      const [panAfrican, mpesa] = await env.client.transactions();
      expect(panAfrican).toMatchObject({ currency: 'NGN', walletType: 'USD' });
      expect(mpesa).toMatchObject({ currency: 'KES', walletType: 'local' });
    });
  });

  describe('strict validation of the wire body', () => {
    it.each(OPERATIONS)('%s refuses an unknown key', async (operation) => {
      const res = await env.client.send(operation, { tracking_id: 'x' });

      expect(res.status).toBe(400);
      expect(res.json).toEqual(error(400, 'tracking_id is not an accepted key'));
    });

    it.each(
      OPERATIONS.flatMap((operation) =>
        Object.keys(WIRE_EXAMPLES[operation].body)
          // Not the optional keys, nor the channel that dispatches the shared path (below).
          .filter((key) => key !== 'wallet_type')
          .filter((key) => !(operation === 'transfers.send' && key === 'phone_number'))
          .filter((key) => !(key === 'channel' && examplePath(operation) === '/api/v2/payments'))
          .map((key) => [operation, key] as const),
      ),
    )('%s refuses a body without %s', async (operation, key) => {
      const res = await env.client.send(operation, { [key]: undefined });

      expect(res.status).toBe(400);
      expect(res.json).toEqual(error(400, `${key} is required`));
      expect(await env.client.transactions()).toEqual([]);
    });

    it.each([
      ['collections.mpesa', { currency: 'UGX' }, 'currency must be "KES"'],
      ['collections.card', { currency: 'USD' }, 'currency must be "KES"'],
      ['payouts.mpesa', { currency: 'kes' }, 'currency must be "KES"'],
      ['payouts.merchant', { currency: 'TZS' }, 'currency must be "KES"'],
      ['collections.card', { payment_method: 'mobile' }, 'payment_method must be "card"'],
      ['payouts.mpesa', { channel: 'MPESA' }, 'channel must be "MOBILE_MONEY_KE"'],
      ['payouts.merchant', { channel: 'PAYBILL' }, 'channel must be "bank"'],
      ['payouts.merchant', { transaction_channel: 'phone' }, 'transaction_channel must be "bank"'],
      [
        'payouts.mpesa',
        { wallet_type: 'local' },
        'wallet_type must be "USD" (leave it out for the local wallet)',
      ],
      [
        'payouts.panAfrican',
        { wallet_type: 'usd' },
        'wallet_type must be "USD" (leave it out for the local wallet)',
      ],
      [
        'payouts.panAfrican',
        { channel: 'phone' },
        'channel must equal transaction_channel ("bank")',
      ],
      ['transfers.send', { currency: 'NGN' }, 'currency must be one of "KES", "USD"'],
    ] as const)('%s with %j: 400 "%s"', async (operation, overrides, message) => {
      const res = await env.client.send(operation, overrides);

      expect(res.status).toBe(400);
      expect(res.json).toEqual(error(400, message));
    });

    it.each([
      ['collections.mpesa', '+254712345678'],
      ['collections.mpesa', '254712345678'],
      ['collections.card', '+254712345678'],
      ['payouts.mpesa', '+254712345678'],
      ['payouts.mpesa', '712345678'],
    ] as const)('%s refuses phone %s as the real service does', async (operation, phone) => {
      const res = await env.client.send(operation, { phone_number: phone });

      expect(res.status).toBe(400);
      expect(res.json).toEqual(
        error(
          400,
          `phone_number must be a Kenyan number 0XXXXXXXXX: number (${phone}) is not valid kenyan number`,
        ),
      );
    });

    it.each([
      ['collections.mpesa', { amount: 9 }, 'amount must be at least 10'],
      ['collections.mpesa', { amount: 250_001 }, 'amount must be at most 250000'],
      ['collections.mpesa', { amount: '1500' }, 'amount must be a number'],
      ['collections.card', { amount: 99 }, 'amount must be at least 100'],
      ['payouts.mpesa', { amount: 5 }, 'amount must be at least 10'],
      ['payouts.mpesa', { amount: 250_001 }, 'amount must be at most 250000'],
      ['payouts.merchant', { amount: 0 }, 'amount must be greater than 0'],
      ['collections.panAfrican', { amount: -1 }, 'amount must be greater than 0'],
      ['transfers.send', { amount: 0 }, 'amount must be greater than 0'],
      [
        'payouts.merchant',
        { phone_number: '0712345678' },
        'phone_number must be a Kenyan number with country code, +254XXXXXXXXX',
      ],
      [
        'collections.panAfrican',
        { phone_number: '233241234567' },
        'phone_number must be a phone number with country code, + and 7 to 15 digits',
      ],
      [
        'transfers.send',
        { phone_number: '0700000001' },
        'phone_number must be a phone number with country code, + and 7 to 15 digits',
      ],
      [
        'collections.panAfrican',
        { account_name: 'wallet' },
        'account_name must be one of "bank", "phone"',
      ],
      [
        'payouts.panAfrican',
        { transaction_channel: 'card' },
        'transaction_channel must be one of "bank", "phone"',
      ],
      [
        'payouts.panAfrican',
        { currency: 'ngn' },
        'currency must be a 3-letter upper-case currency code',
      ],
      [
        'payouts.merchant',
        { business_account: '88-88' },
        'business_account must be 1 to 32 digits',
      ],
      [
        'payouts.merchant',
        { business_account: '1'.repeat(33) },
        'business_account must be 1 to 32 digits',
      ],
      ['payouts.mpesa', { narration: ' \t ' }, 'narration must be a non-empty string'],
      [
        'collections.mpesa',
        { narration: '😀'.repeat(256) },
        'narration must be at most 255 characters',
      ],
      [
        'collections.card',
        { callback_url: 'ftp://merchant.example.com/hook' },
        'callback_url must be an http or https URL',
      ],
      [
        'collections.panAfrican',
        { redirect_url: 'not a url' },
        'redirect_url must be an http or https URL',
      ],
      ['collections.mpesa', { username: '' }, 'username must be a non-empty string'],
      ['payouts.panAfrican', { provider_code: null }, 'provider_code is required'],
      [
        'transfers.send',
        { receiver_username: 'nobody' },
        'receiver_username (nobody) is not a known account',
      ],
      [
        'transfers.send',
        { receiver_username: 'sandbox' },
        'receiver_username must be another account than the sender (sandbox)',
      ],
    ] as const)('%s with %j: 400 "%s"', async (operation, overrides, message) => {
      const res = await env.client.send(operation, overrides);

      expect(res.status).toBe(400);
      expect(res.json).toEqual(error(400, message));
      expect(await env.client.transactions()).toEqual([]);
    });

    it.each([
      [
        { channel: undefined },
        'channel is required: it must be "MOBILE_MONEY_KE", "card", "bank" or "phone" on /api/v2/payments',
      ],
      [
        { channel: 'MPESA' },
        'channel must be "MOBILE_MONEY_KE", "card", "bank" or "phone" on /api/v2/payments',
      ],
    ])('dispatches /api/v2/payments on channel: %j is 400', async (overrides, message) => {
      const res = await env.client.send('collections.mpesa', overrides);

      expect(res.status).toBe(400);
      expect(res.json).toEqual(error(400, message));
    });

    it('lists every problem of a body in one message, unknown keys first', async () => {
      const res = await env.client.send('collections.mpesa', {
        amount: 1,
        phone_number: 'x',
        wallet_type: 'USD',
      });

      expect(res.json.message).toBe(
        'wallet_type is not an accepted key; amount must be at least 10; phone_number must be a Kenyan number 0XXXXXXXXX: number (x) is not valid kenyan number',
      );
    });

    it('refuses a body that is not a JSON object', async () => {
      const res = await env.client.post('/api/v2/payments', [1, 2]);

      expect(res.status).toBe(400);
      expect(res.json).toEqual(error(400, 'body must be a JSON object'));
    });

    it('answers malformed JSON with a 400 real error body, and logs the request', async () => {
      const res = await env.client.post('/api/v2/payments', undefined, { raw: '{"amount": ' });

      expect(res.status).toBe(400);
      expect(res.headers.get('content-type')).toMatch(/^application\/json/);
      expect(res.json).toEqual(error(400, expect.stringMatching(/^Malformed request body/)));
      expect(await env.client.requests()).toEqual([
        expect.objectContaining({ method: 'POST', path: '/api/v2/payments' }),
      ]);
    });
  });

  describe('pan-African requests must name a discovered network', () => {
    it.each([
      [
        'collections.panAfrican',
        { network_code: 'MTN-GH' },
        'network_code (MTN-GH) is not a known network id: take it from GET /v2/networks/grouped',
      ],
      [
        'collections.panAfrican',
        { channel_id: NG_GTBANK.channelIds[0] },
        `channel_id (${NG_GTBANK.channelIds[0]}) must be one of the channel_ids of network MTN Mobile Money (GH)`,
      ],
      [
        'collections.panAfrican',
        { account_name: 'bank', transaction_channel: 'bank' },
        'transaction_channel must be "phone", the account_number_type of network MTN Mobile Money (GH); account_name must be "phone", the account_number_type of network MTN Mobile Money (GH)',
      ],
      [
        'collections.panAfrican',
        { amount: 50_001 },
        'amount must be at most 50000, the max_amount of network MTN Mobile Money (GH)',
      ],
      [
        'collections.panAfrican',
        { amount: 0.5 },
        'amount must be at least 1, the min_amount of network MTN Mobile Money (GH)',
      ],
      [
        'payouts.panAfrican',
        { amount: 99 },
        'amount must be at least 100, the min_amount of network Guaranty Trust Bank (NG)',
      ],
      [
        'payouts.panAfrican',
        { amount: 10_000_001 },
        'amount must be at most 10000000, the max_amount of network Guaranty Trust Bank (NG)',
      ],
      [
        'payouts.panAfrican',
        { provider_name: 'GTBank', provider_code: '58' },
        'provider_name must be "Guaranty Trust Bank", the name of network Guaranty Trust Bank (NG); provider_code must be "058", the code of network Guaranty Trust Bank (NG)',
      ],
      [
        'collections.panAfrican',
        {
          network_code: TZ_CRDB_ID,
          channel_id: 'c6ba7c23-3036-4d58-b5b7-2e73ab876f17',
          account_name: 'bank',
          transaction_channel: 'bank',
          amount: 20_000,
        },
        'network_code: network CRDB Bank (TZ) does not serve transaction_type receipt',
      ],
    ] as const)('%s with %j: 400 "%s"', async (operation, overrides, message) => {
      const res = await env.client.send(operation, overrides);

      expect(res.status).toBe(400);
      expect(res.json).toEqual(error(400, message));
      expect(await env.client.transactions()).toEqual([]);
    });

    it('accepts the bounds min_amount and max_amount themselves', async () => {
      const min = await env.client.send('collections.panAfrican', { amount: GH_MTN.minAmount });
      const max = await env.client.send('collections.panAfrican', { amount: GH_MTN.maxAmount });

      expect([min.status, max.status]).toEqual([200, 200]);
    });
  });

  describe('the magic narration "REJECT"', () => {
    it.each(OPERATIONS)(
      '%s: HTTP 200 with the real error body, status 400, and nothing done',
      async (operation) => {
        const res = await env.client.send(operation, { narration: 'REJECT' });

        expect(res.status).toBe(200);
        expect(res.json).toEqual(
          error(400, 'request rejected: narration "REJECT" (sandbox magic value)'),
        );
        expect(await env.client.transactions()).toEqual([]);
        expect((await env.client.accounts()).map((a) => a.local)).toEqual([1_000_000, 1_000_000]);
      },
    );

    it('is not kept under its Idempotency-Key: a corrected retry runs', async () => {
      const rejected = await env.client.send(
        'payouts.mpesa',
        { narration: 'REJECT' },
        { idempotencyKey: 'reject-1' },
      );
      const corrected = await env.client.send('payouts.mpesa', {}, { idempotencyKey: 'reject-1' });

      expect(rejected.json.success).toBe(false);
      expect(corrected.status).toBe(200);
      expect(corrected.json.success).toBe(true);
    });

    it('is only the exact narration', async () => {
      const res = await env.client.send('collections.mpesa', { narration: 'reject' });

      expect(res.json.success).toBe(true);
    });
  });

  describe('unknown routes', () => {
    it.each([
      ['POST', '/api/v4/payments'],
      ['GET', '/api/v2/payments'],
      ['POST', '/api/v1/status/9BD000000001eR'],
      ['GET', '/api/v2/networks/grouped'],
      ['GET', '/nothing-here'],
    ])('answers %s %s with a 404 real error body', async (method, path) => {
      const res = await env.client.get(path, { method });

      expect(res.status).toBe(404);
      expect(res.json).toEqual(error(404));
    });
  });

  it('logs every API request with its method, path, idempotency key and time', async () => {
    await env.client.send('collections.mpesa', {}, { idempotencyKey: 'log-1' });
    await env.client.post('/api/v3/withdrawal', {}, { authorization: null });
    await env.client.lookup('/api/v1/status/9BD000000001eR');

    const log = await env.client.requests();
    expect(log).toEqual([
      { method: 'POST', path: '/api/v2/payments', idempotencyKey: 'log-1', at: expect.any(String) },
      { method: 'POST', path: '/api/v3/withdrawal', idempotencyKey: null, at: expect.any(String) },
      {
        method: 'GET',
        path: '/api/v1/status/9BD000000001eR',
        idempotencyKey: null,
        at: expect.any(String),
      },
    ]);
    expect(Number.isNaN(Date.parse(log[0].at))).toBe(false);
  });
});

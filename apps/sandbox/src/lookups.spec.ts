import { NETWORKS } from './networks';
import { BETA_AUTH, setUpSandbox, waitUntil } from '../test/sandbox-test-kit';
import { GH_MTN, NG_GTBANK, TZ_CRDB_ID } from '../test/wire-examples';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
const idsOf = (networks: { id: string }[]) => networks.map((n) => n.id);
const error = (status: number, message: unknown = expect.any(String)) => ({
  status,
  success: false,
  message,
});

describe('sandbox network discovery: GET /v2/networks/grouped', () => {
  const env = setUpSandbox({}, { resetBeforeEach: false });
  const discover = (query: string) => env.client.lookup(`/v2/networks/grouped?${query}`);

  it('answers the real shape: defaults, mobile networks and banks of the country', async () => {
    const res = await discover('transaction_type=receipt&dial_code=%2B233');

    expect(res.status).toBe(200);
    expect(Object.keys(res.json)).toEqual(['defaults', 'mobile', 'banks']);
    expect(res.json.defaults).toEqual([]);
    expect(res.json.mobile).toHaveLength(2);
    expect(res.json.banks).toHaveLength(2);
    expect(res.json.mobile[0]).toEqual({
      id: GH_MTN.id,
      code: GH_MTN.code,
      updated_at: '0001-01-01T00:00:00Z',
      status: 'active',
      account_number_type: 'phone',
      country: 'GH',
      name: GH_MTN.name,
      channel_ids: [...GH_MTN.channelIds],
      selected_channel_id: GH_MTN.channelIds[1],
      country_account_number_type: 'GHPHONE',
      min_amount: GH_MTN.minAmount,
      max_amount: GH_MTN.maxAmount,
    });
    for (const bank of res.json.banks) {
      expect(bank).toMatchObject({ account_number_type: 'bank', country: 'GH' });
    }
  });

  it.each([
    ['+254', 'KE'],
    ['+256', 'UG'],
    ['+255', 'TZ'],
    ['+234', 'NG'],
    ['+233', 'GH'],
    ['+27', 'ZA'],
    ['+250', 'RW'],
  ])('lists mobile networks and banks for %s (%s)', async (dialCode, country) => {
    const res = await discover(
      `transaction_type=withdrawal&dial_code=${encodeURIComponent(dialCode)}`,
    );

    expect(res.status).toBe(200);
    expect(res.json.mobile.length).toBeGreaterThanOrEqual(2);
    expect(res.json.banks.length).toBeGreaterThanOrEqual(2);
    for (const network of [...res.json.mobile, ...res.json.banks]) {
      expect(network.country).toBe(country);
      expect(network.id).toMatch(UUID);
      expect(network.channel_ids).toContain(network.selected_channel_id);
      for (const channel of network.channel_ids) expect(channel).toMatch(UUID);
      expect(network.min_amount).toBeLessThan(network.max_amount);
    }
  });

  it('answers the same ids every time, and every id is unique', async () => {
    const first = await discover('transaction_type=withdrawal&dial_code=%2B234');
    const second = await discover('transaction_type=withdrawal&dial_code=%2B234');

    expect(second.json).toEqual(first.json);
    expect(idsOf(first.json.banks)).toContain(NG_GTBANK.id);
    const ids = NETWORKS.flatMap((n) => [n.id, ...n.channelIds]);
    expect(new Set(ids).size).toBe(ids.length);
  });

  it('lists withdrawal-only networks for withdrawal only', async () => {
    const receipt = await discover('transaction_type=receipt&dial_code=%2B255');
    const withdrawal = await discover('transaction_type=withdrawal&dial_code=%2B255');

    expect(idsOf(receipt.json.banks)).not.toContain(TZ_CRDB_ID);
    expect(idsOf(withdrawal.json.banks)).toContain(TZ_CRDB_ID);
  });

  it('answers empty lists for an unknown dial code', async () => {
    const res = await discover('transaction_type=receipt&dial_code=%2B999');

    expect(res.status).toBe(200);
    expect(res.json).toEqual({ defaults: [], mobile: [], banks: [] });
  });

  it.each([
    ['', 'transaction_type is required; dial_code is required'],
    ['dial_code=%2B254', 'transaction_type is required'],
    ['transaction_type=receipt', 'dial_code is required'],
    [
      'transaction_type=deposit&dial_code=%2B254',
      'transaction_type must be "receipt" or "withdrawal"',
    ],
    [
      'transaction_type=receipt&dial_code=+254',
      'dial_code ( 254) must be + and 1 to 4 digits, URL-encoded (%2B234)',
    ],
    [
      'transaction_type=receipt&dial_code=254',
      'dial_code (254) must be + and 1 to 4 digits, URL-encoded (%2B234)',
    ],
    [
      'transaction_type=receipt&dial_code=%2B254&country=KE',
      'country is not an accepted query parameter',
    ],
    [
      'transaction_type=receipt&transaction_type=withdrawal&dial_code=%2B254',
      'transaction_type must be given once',
    ],
  ])('answers ?%s with 400 "%s"', async (query, message) => {
    const res = await discover(query);

    expect(res.status).toBe(400);
    expect(res.json).toEqual(error(400, message));
  });

  it('needs Basic authentication', async () => {
    const res = await env.client.lookup(
      '/v2/networks/grouped?transaction_type=receipt&dial_code=%2B254',
      { authorization: null },
    );

    expect(res.status).toBe(401);
    expect(res.json).toEqual(error(401));
  });
});

describe('sandbox transaction status: GET /api/v1/status/{reference}', () => {
  /** How long a transaction stays pending before it settles by itself. */
  const DELAY_MS = 1_000;
  const env = setUpSandbox({ webhookDelayMs: DELAY_MS });
  /**
   * Whether a look-up done now was surely done before the settlement: less than DELAY_MS after
   * `started`, taken before the request (the settlement is scheduled after it). On a machine
   * stalled that long the pending state is not checked; on any other it is.
   */
  const beforeSettlement = (started: number) => {
    const inTime = Date.now() - started < DELAY_MS;
    if (!inTime) console.log('looked up after the webhook delay (a busy machine): not checked');
    return inTime;
  };
  const status = (reference: string, authorization?: string | null) =>
    env.client.lookup(`/api/v1/status/${reference}`, { authorization });
  const settled = (reference: string) =>
    waitUntil(() => env.receiver.for(reference).length > 0).then(() => status(reference));

  it('answers the real shape, pending before the outcome and success after it', async () => {
    const started = Date.now();
    const res = await env.client.send('collections.mpesa', { callback_url: env.receiver.url });
    const reference = res.json.transaction_reference as string;

    const pending = await status(reference);
    const wasPending = beforeSettlement(started);

    expect(pending.status).toBe(200);
    expect(Object.keys(pending.json)).toEqual([
      'id',
      'account_id',
      'billing_currency',
      'currency',
      'code',
      'conversion_rate',
      'amount',
      'billing_currency_amount',
      'balance',
      'type',
      'transaction_details',
      'transaction_category',
      'user_id',
      'request_metadata',
      'created_at',
    ]);
    if (wasPending) {
      expect(pending.json).toEqual({
        id: expect.stringMatching(UUID),
        account_id: '',
        billing_currency: '',
        currency: 'KES',
        code: reference,
        conversion_rate: 0,
        amount: 1500,
        billing_currency_amount: 0,
        balance: 1_000_000,
        type: 'receipt',
        transaction_details: {
          payer: '0712345678',
          merchant_id: '',
          phone_number: '0712345678',
          processed_at: { seconds: expect.any(Number), nanos: expect.any(Number) },
          reason: '',
          channel: 'mobile',
          account_number: '00000000-0000-4000-a000-000000000001',
          status: 'pending',
          receiver: 'sandbox',
          email_address: 'sandbox@sandbox.example.com',
        },
        transaction_category: 'fiat',
        user_id: '',
        request_metadata: null,
        created_at: expect.any(String),
      });
    }

    const done = await settled(reference);
    const [webhook] = env.receiver.for(reference);

    expect(done.json.transaction_details).toMatchObject({
      status: 'success',
      reason: webhook.body.remarks,
      merchant_id: `${reference}:${webhook.body.third_party_trans_id}`,
    });
    // The same amount as the webhook's.
    expect(done.json.amount).toBe(webhook.body.amount);
    expect(done.json.balance).toBe(1_000_000 + 1500);
    expect(done.json.id).toBe(pending.json.id);
  });

  it('goes from pending to failed for a failing payout, with type withdrawal', async () => {
    const started = Date.now();
    const res = await env.client.send('payouts.mpesa', {
      amount: 666,
      callback_url: env.receiver.url,
    });
    const reference = res.json.correlator_id as string;

    const pending = await status(reference);
    const wasPending = beforeSettlement(started);
    const done = await settled(reference);

    expect(pending.json).toMatchObject({ type: 'withdrawal', amount: 666, code: reference });
    if (wasPending) expect(pending.json.transaction_details.status).toBe('pending');
    expect(done.json.transaction_details).toMatchObject({
      status: 'failed',
      reason: 'Transaction failed with message: [Request Cancelled by user.]',
      merchant_id: '',
    });
    // The record keeps the amount a failure's webhook does not carry.
    expect(done.json.amount).toBe(666);
    expect(env.receiver.for(reference)[0].body).not.toHaveProperty('amount');
  });

  it('shows the USD wallet of a USD payout in the billing fields', async () => {
    const res = await env.client.send('payouts.panAfrican', { callback_url: env.receiver.url });

    const answer = await status(res.json.correlator_id);

    expect(answer.json).toMatchObject({
      currency: 'NGN',
      amount: 20000,
      billing_currency: 'USD',
      conversion_rate: 130,
      billing_currency_amount: 153.85,
      balance: 10_000 - 153.85,
      type: 'withdrawal',
    });
    expect(answer.json.transaction_details).toMatchObject({
      channel: 'bank',
      account_number: '0123456789',
      receiver: 'Ada Obi',
    });
  });

  it('answers a transfer with type transfer, settled at once', async () => {
    const res = await env.client.send('transfers.send');

    const answer = await status(res.json.transaction_reference);

    expect(answer.json).toMatchObject({ type: 'transfer', amount: 300, currency: 'KES' });
    expect(answer.json.transaction_details).toMatchObject({
      status: 'success',
      receiver: 'beta',
      payer: 'sandbox',
    });
  });

  it.each([
    ['an unknown reference', '9BD000000000eR'],
    ['a reference that looks like nothing', 'nope'],
  ])('answers 404 for %s', async (_label, reference) => {
    const res = await status(reference);

    expect(res.status).toBe(404);
    expect(res.json).toEqual(error(404, `transaction ${reference} not found`));
  });

  it("answers 404 for another account's transaction", async () => {
    const res = await env.client.send('collections.mpesa');

    const other = await status(res.json.transaction_reference, BETA_AUTH);

    expect(other.status).toBe(404);
  });

  it('needs Basic authentication', async () => {
    const res = await env.client.send('collections.mpesa');

    expect((await status(res.json.transaction_reference, null)).status).toBe(401);
  });
});

describe('sandbox balances: GET /api/v1/accounts/{username}/all_balances', () => {
  const env = setUpSandbox({ initialBalances: { local: 13_000, USD: 50 } });
  const balances = (username: string, authorization?: string | null) =>
    env.client.lookup(`/api/v1/accounts/${username}/all_balances`, { authorization });

  it('answers both wallets in the real shape, converted at usdRate', async () => {
    const res = await balances('sandbox');

    expect(res.status).toBe(200);
    expect(res.json).toEqual({
      fiat_balance: { balance: 13_000, converted_balance: 100, currency: 'KES' },
      onchain_balance: { balance: 50, converted_balance: 6500, currency: 'USD' },
    });
  });

  it('follows the ledger: a payout debits, and either account can be read', async () => {
    await env.client.send('payouts.mpesa', { amount: 1300 });

    expect((await balances('sandbox')).json.fiat_balance).toEqual({
      balance: 11_700,
      converted_balance: 90,
      currency: 'KES',
    });
    expect((await balances('beta', BETA_AUTH)).json.fiat_balance.balance).toBe(13_000);
    expect((await balances('beta')).json.fiat_balance.balance).toBe(13_000);
  });

  it('answers 404 for an unknown username', async () => {
    const res = await balances('nobody');

    expect(res.status).toBe(404);
    expect(res.json).toEqual(error(404, 'account nobody not found'));
  });

  it('needs Basic authentication', async () => {
    expect((await balances('sandbox', null)).status).toBe(401);
  });
});

import { BETA_AUTH, setUpSandbox, wireBody } from '../test/sandbox-test-kit';

describe('sandbox transfers: POST /api/v2/p2p', () => {
  const env = setUpSandbox({ initialBalances: { local: 5000, USD: 100 } });
  const wallets = async () =>
    Object.fromEntries((await env.client.accounts()).map((a) => [a.username, [a.local, a.USD]]));

  it('debits the sender (the account of the credentials) and credits the receiver', async () => {
    const res = await env.client.send('transfers.send', { amount: 1200 });

    expect(res.status).toBe(200);
    expect(res.json).toEqual({
      transaction_reference: expect.stringMatching(/^9BD\d{9}eS$/),
      success: true,
      message: 'Transaction request sent successfully',
      trackingId: '',
      reference: '',
      result: null,
    });
    expect(await wallets()).toEqual({ sandbox: [3800, 100], beta: [6200, 100] });
    expect(await env.client.transaction(res.json.transaction_reference)).toMatchObject({
      operation: 'transfers.send',
      kind: 'transfer',
      type: 'transfer',
      account: 'sandbox',
      receiverUsername: 'beta',
      status: 'success',
      amount: 1200,
      walletType: 'local',
      debited: 1200,
      callbackUrl: null,
      settlement: 'immediate',
    });
  });

  it('goes the other way with the second account’s credentials', async () => {
    const res = await env.client.post(
      '/api/v2/p2p',
      wireBody('transfers.send', { receiver_username: 'sandbox', amount: 500 }),
      { authorization: BETA_AUTH },
    );

    expect(res.status).toBe(200);
    expect(await wallets()).toEqual({ sandbox: [5500, 100], beta: [4500, 100] });
  });

  it('moves USD-wallet money at usdRate with wallet_type "USD"', async () => {
    const res = await env.client.send('transfers.send', { amount: 1300, wallet_type: 'USD' });

    expect(res.status).toBe(200);
    expect(await wallets()).toEqual({ sandbox: [5000, 90], beta: [5000, 110] });
  });

  it('converts a transfer in USD at usdRate, from either wallet', async () => {
    const local = await env.client.send('transfers.send', { amount: 10, currency: 'USD' });
    const usd = await env.client.send('transfers.send', {
      amount: 10,
      currency: 'USD',
      wallet_type: 'USD',
    });

    expect([local.status, usd.status]).toEqual([200, 200]);
    expect(await wallets()).toEqual({ sandbox: [3700, 90], beta: [6300, 110] });
  });

  it('takes only the required keys, and currency "KES"', async () => {
    const minimal = await env.client.send('transfers.send', { phone_number: undefined });
    const withCurrency = await env.client.send('transfers.send', { currency: 'KES' });

    expect([minimal.status, withCurrency.status]).toEqual([200, 200]);
  });

  it('refuses a transfer beyond the wallet with 402, and moves nothing', async () => {
    const res = await env.client.send('transfers.send', { amount: 5000.01 });

    expect(res.status).toBe(402);
    expect(res.json).toEqual({
      status: 402,
      success: false,
      message: 'Insufficient funds in the local wallet: needs 5000.01, has 5000',
    });
    expect(await wallets()).toEqual({ sandbox: [5000, 100], beta: [5000, 100] });
    expect(await env.client.transactions()).toEqual([]);
  });

  it.each([
    [{ receiver_username: 'gamma' }, 'receiver_username (gamma) is not a known account'],
    [{ callback_url: 'http://127.0.0.1:9/hook' }, 'callback_url is not an accepted key'],
    [{ username: 'sandbox' }, 'username is not an accepted key'],
    [{ amount: -5 }, 'amount must be greater than 0'],
    [{ narration: undefined }, 'narration is required'],
    [{ wallet_type: 'local' }, 'wallet_type must be "USD" (leave it out for the local wallet)'],
  ])('answers %j with 400 "%s"', async (overrides, message) => {
    const res = await env.client.send('transfers.send', overrides);

    expect(res.status).toBe(400);
    expect(res.json).toEqual({ status: 400, success: false, message });
    expect(await wallets()).toEqual({ sandbox: [5000, 100], beta: [5000, 100] });
  });

  it('replays a transfer for a repeated Idempotency-Key and moves the money once', async () => {
    const first = await env.client.send('transfers.send', {}, { idempotencyKey: 'p2p-1' });
    const second = await env.client.send('transfers.send', {}, { idempotencyKey: 'p2p-1' });

    expect(second.json).toEqual(first.json);
    expect(await wallets()).toEqual({ sandbox: [4700, 100], beta: [5300, 100] });
  });
});

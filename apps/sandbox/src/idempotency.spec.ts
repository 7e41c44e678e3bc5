import {
  BETA_AUTH,
  SandboxClient,
  setUpSandbox,
  startFastSandbox,
  wireBody,
} from '../test/sandbox-test-kit';

describe('sandbox idempotency', () => {
  const env = setUpSandbox();

  const payout = (idempotencyKey: string | undefined, overrides: Record<string, unknown> = {}) =>
    env.client.post(
      '/api/v2/withdrawal',
      wireBody('payouts.mpesa', { callback_url: env.receiver.url, ...overrides }),
      { idempotencyKey },
    );

  it('replays the first answer for a repeated key and executes once', async () => {
    const first = await payout('key-1');
    const second = await payout('key-1');

    expect(first.status).toBe(200);
    expect(second.status).toBe(200);
    expect(second.text).toBe(first.text);
    expect(second.headers.get('idempotent-replayed')).toBe('true');
    const transactions = await env.client.transactions();
    expect(transactions).toHaveLength(1);
    expect(transactions[0]).toMatchObject({
      reference: first.json.correlator_id,
      idempotencyKey: 'key-1',
    });
    expect((await env.client.wallets()).local).toBe(1_000_000 - 1000);
    // Both attempts reached the API.
    expect((await env.client.requests()).map((r) => r.idempotencyKey)).toEqual(['key-1', 'key-1']);
  });

  it('treats the same body with another key order as the same request', async () => {
    const body = wireBody('payouts.mpesa', { callback_url: env.receiver.url });
    const reordered = Object.fromEntries(Object.entries(body).reverse());

    const first = await env.client.post('/api/v2/withdrawal', body, { idempotencyKey: 'order' });
    const second = await env.client.post('/api/v2/withdrawal', reordered, {
      idempotencyKey: 'order',
    });

    expect(second.json).toEqual(first.json);
    expect(await env.client.transactions()).toHaveLength(1);
  });

  it('answers 409 for a key reused with another body or path', async () => {
    await payout('key-2');

    const other = await payout('key-2', { amount: 2000 });
    const otherPath = await env.client.post(
      '/api/v3/withdrawal',
      wireBody('payouts.merchant', { callback_url: env.receiver.url }),
      { idempotencyKey: 'key-2' },
    );

    for (const res of [other, otherPath]) {
      expect(res.status).toBe(409);
      expect(res.json).toEqual({
        status: 409,
        success: false,
        message: 'Idempotency-Key was already used with a different request',
      });
    }
    expect(await env.client.transactions()).toHaveLength(1);
  });

  it('does not keep 4xx answers, so a corrected retry with the same key runs', async () => {
    const invalid = await payout('key-3', { amount: 1 });
    const tooLarge = await payout('key-3', { amount: 2_000_000 });
    const unauthorized = await env.client.post(
      '/api/v2/withdrawal',
      wireBody('payouts.mpesa', { callback_url: env.receiver.url }),
      { idempotencyKey: 'key-3', authorization: null },
    );
    const corrected = await payout('key-3');

    expect(invalid.status).toBe(400);
    expect(tooLarge.status).toBe(400);
    expect(unauthorized.status).toBe(401);
    expect(corrected.status).toBe(200);
    expect(await env.client.transactions()).toHaveLength(1);
  });

  it('does not keep a 402, so the payout can succeed once funds allow', async () => {
    const tight = await startFastSandbox({ initialBalances: { local: 500, USD: 0 } });
    try {
      const tightClient = new SandboxClient(tight);
      const body = wireBody('payouts.mpesa', { amount: 400, callback_url: env.receiver.url });
      await tightClient.post('/api/v2/withdrawal', body, { idempotencyKey: 'a' });

      const refused = await tightClient.post('/api/v2/withdrawal', body, { idempotencyKey: 'b' });
      await tightClient.control('POST', '/__sandbox/reset');
      const retried = await tightClient.post('/api/v2/withdrawal', body, { idempotencyKey: 'b' });

      expect(refused.status).toBe(402);
      expect(retried.status).toBe(200);
    } finally {
      await tight.close();
    }
  });

  it('keeps the keys of the two accounts apart', async () => {
    const sandbox = await payout('shared-key');
    const beta = await env.client.post(
      '/api/v2/withdrawal',
      wireBody('payouts.mpesa', { callback_url: env.receiver.url }),
      { idempotencyKey: 'shared-key', authorization: BETA_AUTH },
    );

    expect(beta.status).toBe(200);
    expect(beta.json.correlator_id).not.toBe(sandbox.json.correlator_id);
    expect((await env.client.transactions()).map((t) => t.account)).toEqual(['sandbox', 'beta']);
  });

  it('executes every request without a key', async () => {
    await payout(undefined);
    await payout(undefined);

    expect(await env.client.transactions()).toHaveLength(2);
  });

  it('refuses an over-long key', async () => {
    const res = await payout('k'.repeat(256));

    expect(res.status).toBe(400);
    expect(res.json).toEqual({
      status: 400,
      success: false,
      message: 'Idempotency-Key must be 1 to 255 characters',
    });
  });
});

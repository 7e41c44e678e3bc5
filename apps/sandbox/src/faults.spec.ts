import { setUpSandbox, wireBody } from '../test/sandbox-test-kit';

describe('sandbox fault injection', () => {
  const env = setUpSandbox();

  const fault = async (body: unknown) => {
    const res = await env.client.control('POST', '/__sandbox/faults', body);
    expect(res.status).toBe(200);
  };
  const collect = (options: { idempotencyKey?: string; authorization?: null } = {}) =>
    env.client.post(
      '/api/v2/payments',
      wireBody('collections.mpesa', { callback_url: env.receiver.url }),
      options,
    );
  const merchantPayout = () =>
    env.client.post(
      '/api/v3/withdrawal',
      wireBody('payouts.merchant', { callback_url: env.receiver.url }),
    );
  const statusOf = async (request: Promise<{ status: number }>) => {
    try {
      return (await request).status;
    } catch {
      return 'reset';
    }
  };

  it('answers the next request with the injected status and default body, then recovers', async () => {
    await fault({ status: 503 });

    const faulted = await collect();
    const next = await collect();

    expect(faulted.status).toBe(503);
    expect(faulted.json).toEqual({ status: 503, success: false, message: 'Injected fault' });
    expect(next.status).toBe(200);
    expect(await env.client.transactions()).toHaveLength(1);
    expect((await env.client.requests()).map((r) => r.fault)).toEqual(['status 503', undefined]);
  });

  it('faults before authentication, as the network would', async () => {
    await fault({ status: 502 });

    expect((await collect({ authorization: null })).status).toBe(502);
  });

  it('sends a string body raw, as HTML unless a content type is given', async () => {
    await fault({ status: 502, body: '<html><body>Bad gateway</body></html>' });
    await fault({ status: 500, body: 'oops', contentType: 'text/plain' });
    await fault({ status: 500, body: { error: 'custom' } });

    const html = await collect();
    const text = await collect();
    const json = await collect();

    expect(html.status).toBe(502);
    expect(html.headers.get('content-type')).toMatch(/^text\/html/);
    expect(html.text).toBe('<html><body>Bad gateway</body></html>');
    expect(text.headers.get('content-type')).toBe('text/plain');
    expect(text.text).toBe('oops');
    expect(json.json).toEqual({ error: 'custom' });
  });

  it('can answer 200 with a body the contract does not allow', async () => {
    await fault({ status: 200, body: { success: true, status: 'SUCCESS' } });

    const res = await env.client.post(
      '/api/v2/payments',
      wireBody('collections.card', { callback_url: env.receiver.url }),
    );

    expect(res.status).toBe(200);
    expect(res.json.checkout_url).toBeUndefined();
  });

  it('resets the connection without answering', async () => {
    await fault({ reset: true });

    await expect(collect()).rejects.toThrow();
    expect(await env.client.transactions()).toEqual([]);
    expect((await env.client.requests())[0]).toMatchObject({ fault: 'reset' });
    expect((await collect()).status).toBe(200);
  });

  it('delays a request, then handles it normally', async () => {
    await fault({ delayMs: 150 });

    const started = Date.now();
    const res = await collect();

    expect(Date.now() - started).toBeGreaterThanOrEqual(140);
    expect(res.status).toBe(200);
    expect(await env.client.transactions()).toHaveLength(1);
    expect((await env.client.requests())[0]).toMatchObject({ fault: 'delay 150ms' });
  });

  it('delays, then faults, when delayMs comes with a status', async () => {
    await fault({ delayMs: 100, status: 504 });

    const started = Date.now();
    const res = await collect();

    expect(Date.now() - started).toBeGreaterThanOrEqual(90);
    expect(res.status).toBe(504);
    expect(await env.client.transactions()).toEqual([]);
  });

  it('afterExecute: executes and stores the answer, then loses it', async () => {
    await fault({ status: 503, afterExecute: true });

    const lost = await collect({ idempotencyKey: 'lost-1' });
    const [transaction] = await env.client.transactions();
    const retried = await collect({ idempotencyKey: 'lost-1' });

    expect(lost.status).toBe(503);
    expect(transaction).toMatchObject({ idempotencyKey: 'lost-1', operation: 'collections.mpesa' });
    expect(retried.status).toBe(200);
    expect(retried.json.transaction_reference).toBe(transaction.reference);
    expect(await env.client.transactions()).toHaveLength(1);
    expect((await env.client.requests())[0]).toMatchObject({ fault: 'status 503 + after execute' });
  });

  it('afterExecute with reset: executes, then drops the connection', async () => {
    await fault({ reset: true, afterExecute: true });

    await expect(collect()).rejects.toThrow();

    expect(await env.client.transactions()).toHaveLength(1);
  });

  it('applies a fault with a path only to requests on that path', async () => {
    await fault({ status: 500, path: '/api/v3/withdrawal' });

    const other = await collect();
    const matched = await merchantPayout();
    const after = await merchantPayout();

    expect([other.status, matched.status, after.status]).toEqual([200, 500, 200]);
  });

  it('applies a fault to `count` requests', async () => {
    await fault({ status: 500, count: 2 });

    const statuses = [await collect(), await collect(), await collect()].map((r) => r.status);

    expect(statuses).toEqual([500, 500, 200]);
  });

  it('queues faults in the order they were posted', async () => {
    await fault({ status: 500 });
    await fault({ status: 502 });
    expect((await env.client.get('/__sandbox/faults')).json.queued).toHaveLength(2);

    const statuses = [await collect(), await collect(), await collect()].map((r) => r.status);

    expect(statuses).toEqual([500, 502, 200]);
  });

  it('applies to the GET look-ups, by route template or concrete path', async () => {
    await fault({ status: 502, path: '/api/v1/status/{reference}' });
    await fault({ status: 504, path: '/api/v1/accounts/beta/all_balances' });
    await fault({ status: 503, path: '/v2/networks/grouped' });

    const status = await env.client.lookup('/api/v1/status/9BD000000001eR');
    const balances = await env.client.lookup('/api/v1/accounts/sandbox/all_balances');
    const networks = await env.client.lookup(
      '/v2/networks/grouped?transaction_type=receipt&dial_code=%2B254',
    );
    const again = await env.client.lookup('/api/v1/accounts/sandbox/all_balances');

    expect([status.status, balances.status, networks.status, again.status]).toEqual([
      502, 504, 503, 200,
    ]);
    expect(status.json).toEqual({ status: 502, success: false, message: 'Injected fault' });
    expect((await env.client.requests()).map((r) => [r.method, r.fault])).toEqual([
      ['GET', 'status 502'],
      ['GET', 'status 504'],
      ['GET', 'status 503'],
      ['GET', undefined],
    ]);
  });

  it('fails every request at rate 1 until the faults are cleared', async () => {
    const res = await env.client.control('POST', '/__sandbox/faults/random', {
      rate: 1,
      statuses: [503],
    });
    expect(res.status).toBe(200);

    const statuses = [await collect(), await merchantPayout()].map((r) => r.status);
    expect(statuses).toEqual([503, 503]);
    expect((await env.client.requests()).map((r) => r.fault)).toEqual([
      'random status 503',
      'random status 503',
    ]);
    expect(await env.client.transactions()).toEqual([]);

    const cleared = await env.client.control('DELETE', '/__sandbox/faults');
    expect(cleared.json).toMatchObject({ queued: [], random: null });
    expect((await collect()).status).toBe(200);
  });

  it('mixes statuses and resets at random, reproducibly with a seed', async () => {
    const run = async () => {
      await env.client.reset();
      await env.client.control('POST', '/__sandbox/faults/random', {
        rate: 1,
        statuses: [500, 502],
        reset: true,
        seed: 42,
      });
      const outcomes: Array<number | string> = [];
      for (let i = 0; i < 8; i += 1) outcomes.push(await statusOf(collect()));
      return outcomes;
    };

    const first = await run();
    const second = await run();

    expect(first).toEqual(second);
    expect(first.every((o) => o === 500 || o === 502 || o === 'reset')).toBe(true);
    expect(new Set(first).size).toBeGreaterThan(1);
  });

  it('never faults at rate 0', async () => {
    await env.client.control('POST', '/__sandbox/faults/random', { rate: 0 });

    expect((await collect()).status).toBe(200);
  });

  it.each([
    ['/__sandbox/faults', {}],
    ['/__sandbox/faults', { status: 'boom' }],
    ['/__sandbox/faults', { status: 503, reset: true }],
    ['/__sandbox/faults', { status: 503, count: 0 }],
    ['/__sandbox/faults', { status: 503, path: '/api/v9/nothing' }],
    ['/__sandbox/faults', { status: 503, path: '/api/v1/status' }],
    ['/__sandbox/faults', { delayMs: 10, afterExecute: true }],
    ['/__sandbox/faults/random', { rate: 2 }],
    ['/__sandbox/faults/random', { rate: 0.5, statuses: [] }],
  ])('refuses an invalid fault %s %j with 400', async (path, body) => {
    const res = await env.client.control('POST', path, body);

    expect(res.status).toBe(400);
    expect(res.json).toEqual({ status: 400, success: false, message: expect.any(String) });
  });
});

import { setUpSandbox, wireBody } from '../test/sandbox-test-kit';

describe('sandbox hosted checkout', () => {
  const env = setUpSandbox({}, { resetBeforeEach: false });

  const cardCollection = async (overrides: Record<string, unknown> = {}) => {
    const res = await env.client.post(
      '/api/v2/payments',
      wireBody('collections.card', { callback_url: env.receiver.url, ...overrides }),
    );
    expect(res.status).toBe(200);
    return res.json as { transaction_reference: string; checkout_url: string };
  };
  const submit = (url: string) => fetch(url, { method: 'POST', redirect: 'manual' });
  /**
   * Waits for the webhook of an M-Pesa collection made now, which settles by itself after the
   * sandbox's webhook delay: a settlement of anything made before it, on the same delay, would
   * have come first. No guess of how long the machine takes.
   */
  const afterAutomaticSettlements = async () => {
    const mpesa = await env.client.post(
      '/api/v2/payments',
      wireBody('collections.mpesa', { callback_url: env.receiver.url }),
    );
    await env.receiver.waitFor(mpesa.json.transaction_reference as string);
  };

  it('serves a page with the amount, narration, reference and the Pay/Decline forms', async () => {
    const { transaction_reference: ref, checkout_url } = await cardCollection();
    expect(checkout_url).toBe(`${env.sandbox.url}/checkout/${ref}`);

    const page = await fetch(checkout_url);
    const html = await page.text();

    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toMatch(/^text\/html/);
    expect(html).toContain('KES 2,500.00');
    expect(html).toContain('Order 43');
    expect(html).toContain(ref);
    expect(html).toContain(
      `<form method="post" action="/checkout/${ref}/pay"><button id="pay" type="submit">Pay</button></form>`,
    );
    expect(html).toContain(
      `<form method="post" action="/checkout/${ref}/decline"><button id="decline" type="submit">Decline</button></form>`,
    );
  });

  it('escapes the narration', async () => {
    const { checkout_url } = await cardCollection({ narration: '<script>alert(1)</script>' });

    const html = await (await fetch(checkout_url)).text();

    expect(html).not.toContain('<script>');
    expect(html).toContain('&lt;script&gt;');
  });

  it('does not settle a card collection by itself', async () => {
    const { transaction_reference: ref } = await cardCollection();

    await afterAutomaticSettlements();

    expect(env.receiver.for(ref)).toEqual([]);
    expect(await env.client.transaction(ref)).toMatchObject({
      status: 'pending',
      settlement: 'checkout',
    });
  });

  it('settles success on Pay, fires the webhook and shows the result page', async () => {
    const { transaction_reference: ref, checkout_url } = await cardCollection();
    const before = await env.client.wallets();

    const res = await submit(`${checkout_url}/pay`);

    expect(res.status).toBe(200);
    expect(await res.text()).toContain('Payment successful');
    const [webhook] = await env.receiver.waitFor(ref);
    expect(webhook.body).toMatchObject({
      transaction_reference: ref,
      result_code: 0,
      remarks: 'Successfully processed card payment',
      success: true,
      amount: 2500,
      forward_url: env.receiver.url,
    });
    expect(webhook.body).not.toHaveProperty('status');
    expect(await env.client.transaction(ref)).toMatchObject({ status: 'success' });
    expect((await env.client.wallets()).local).toBe(before.local + 2500);
  });

  it('settles failed on Decline and fires a Kenyan failure webhook', async () => {
    const { transaction_reference: ref, checkout_url } = await cardCollection();

    const res = await submit(`${checkout_url}/decline`);

    expect(res.status).toBe(200);
    expect(await res.text()).toContain('Payment declined');
    const [webhook] = await env.receiver.waitFor(ref);
    expect(webhook.body).toMatchObject({
      result_code: 1,
      remarks: 'Transaction failed with message: [Request Cancelled by user.]',
      success: false,
      status: '',
    });
  });

  it('answers 409 when the payment is already settled, and hides the forms', async () => {
    const { checkout_url } = await cardCollection();
    await submit(`${checkout_url}/pay`);

    const again = await submit(`${checkout_url}/pay`);
    const decline = await submit(`${checkout_url}/decline`);
    const page = await (await fetch(checkout_url)).text();

    expect(again.status).toBe(409);
    expect(again.headers.get('content-type')).toMatch(/^text\/html/);
    expect(decline.status).toBe(409);
    expect(page).not.toContain('id="pay"');
  });

  it('answers 404 for an unknown reference or one that is no checkout', async () => {
    const mpesa = await env.client.post(
      '/api/v2/payments',
      wireBody('collections.mpesa', { callback_url: env.receiver.url }),
    );

    for (const ref of ['9BD000000000eR', mpesa.json.transaction_reference as string]) {
      expect((await fetch(`${env.sandbox.url}/checkout/${ref}`)).status).toBe(404);
      expect((await submit(`${env.sandbox.url}/checkout/${ref}/pay`)).status).toBe(404);
    }
  });

  it('redirects a pan-African collection with redirect_url back to it with the outcome', async () => {
    const res = await env.client.post(
      '/api/v3/payments',
      wireBody('collections.panAfrican', {
        redirect_url: 'https://shop.example.com/return?order=7',
        callback_url: env.receiver.url,
      }),
    );
    const ref = res.json.transaction_reference as string;
    expect(res.json.checkout_url).toBe(`${env.sandbox.url}/checkout/${ref}`);
    await afterAutomaticSettlements();
    expect(await env.client.transaction(ref)).toMatchObject({ status: 'pending' });

    const paid = await submit(`${res.json.checkout_url}/pay`);

    expect(paid.status).toBe(303);
    expect(paid.headers.get('location')).toBe(
      `https://shop.example.com/return?order=7&reference=${ref}&status=success`,
    );
    const [webhook] = await env.receiver.waitFor(ref);
    expect(webhook.body).toMatchObject({
      result_code: 0,
      remarks: 'complete',
      success: true,
      amount: 50,
      customer_name: '+233241234567',
    });
  });

  it('redirects with status failed on Decline, and fires a pan-African failure', async () => {
    const res = await env.client.post(
      '/api/v3/payments',
      wireBody('collections.panAfrican', {
        redirect_url: 'http://localhost:3000/back',
        callback_url: env.receiver.url,
      }),
    );

    const declined = await submit(`${res.json.checkout_url}/decline`);

    expect(declined.status).toBe(303);
    expect(declined.headers.get('location')).toBe(
      `http://localhost:3000/back?reference=${res.json.transaction_reference}&status=failed`,
    );
    const [webhook] = await env.receiver.waitFor(res.json.transaction_reference);
    expect(webhook.body).toMatchObject({
      result_code: 3000,
      remarks: 'other: declined by the customer',
      success: false,
      status: 'failed',
    });
  });
});

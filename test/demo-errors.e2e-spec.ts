import type { RunningDemo } from '../apps/demo/src/demo';
import { startDemo } from '../apps/demo/src/demo';
import { OPERATION_CASES, successBody } from '../libs/payments/spec-support/operation-cases';
import { RecordingServer } from '../libs/payments/spec-support/recording-server';
import type { Reply } from '../libs/payments/spec-support/recording-server';

const PASSWORD = 'demo-e2e-secret-pw';

describe('demo: error mapping and webhook hygiene (provider on loopback)', () => {
  let provider: RecordingServer;
  let demo: RunningDemo;

  beforeAll(async () => {
    provider = await RecordingServer.start();
    demo = await startDemo({
      port: 0,
      logger: false,
      environment: {
        PAYMENTS_API_USERNAME: 'demo-user',
        PAYMENTS_API_PASSWORD: PASSWORD,
        PAYMENTS_BASE_URL: provider.url,
        PAYMENTS_DEFAULT_USERNAME: 'demo-shop',
        PAYMENTS_MAX_RETRIES: '1',
      },
    });
  });
  afterEach(() => provider.reset());
  afterAll(async () => {
    await demo.close();
    await provider.close();
  });

  const post = (path: string, body: unknown, headers: Record<string, string> = {}) =>
    fetch(`${demo.url}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headers },
      body: typeof body === 'string' ? body : JSON.stringify(body),
    });
  const mpesaOrder = { amount: 1500, phoneNumber: '0712345678', narration: 'Order 42' };

  it('starts an order and sends the library request with the demo defaults', async () => {
    provider.reply({ status: 200, body: successBody('collection') });

    const response = await post('/orders/collections/mpesa', mpesaOrder);
    const order = (await response.json()) as {
      id: string;
      status: string;
      transactionReference: string;
    };

    expect(response.status).toBe(201);
    expect(order).toMatchObject({ status: 'PENDING', transactionReference: '9BD103350408eR' });
    expect(provider.requests[0].json).toEqual({
      amount: 1500,
      narration: 'Order 42',
      phone_number: '0712345678',
      username: 'demo-shop',
      callback_url: `${demo.url}/webhooks/payments?malipo_key=${order.id}`,
      channel: 'MOBILE_MONEY_KE',
      currency: 'KES',
    });
    expect(provider.requests[0].headers['idempotency-key']).toBe(order.id);
  });

  it('answers 400 for invalid input and sends nothing', async () => {
    const response = await post('/orders/payouts/merchant', {
      ...OPERATION_CASES[5].request,
      phoneNumber: '0712345678',
      amount: -1,
    });
    const body = (await response.json()) as { message: string[] };

    expect(response.status).toBe(400);
    expect(body.message.join(' ')).toMatch(/phoneNumber/);
    expect(body.message.join(' ')).toMatch(/amount must be greater than 0/);
    expect(provider.requests).toHaveLength(0);
  });

  it('turns a provider 401 into a 502 with a safe message', async () => {
    provider.reply({ status: 401, body: { success: false, message: `bad password ${PASSWORD}` } });

    const response = await post('/orders/collections/mpesa', mpesaOrder);
    const text = await response.text();

    expect(response.status).toBe(502);
    expect(JSON.parse(text)).toEqual({
      statusCode: 502,
      error: 'Bad Gateway',
      message: 'The payment provider refused our credentials',
      operation: 'collections.mpesa',
      code: 'AUTHENTICATION_FAILED',
      mayHaveExecuted: false,
    });
    expect(text).not.toContain(PASSWORD);
    expect(text).not.toContain('stack');
  });

  it('turns provider 5xx after retries into a 502 and marks the order ERROR', async () => {
    provider.fallback = () => ({ status: 503, body: { message: 'down', code: 'E_DOWN' } });

    const response = await post('/orders/collections/mpesa', mpesaOrder);
    const body = (await response.json()) as Record<string, unknown>;

    expect(response.status).toBe(502);
    expect(body).toMatchObject({
      operation: 'collections.mpesa',
      code: 'SERVICE_ERROR',
      mayHaveExecuted: true,
      idempotencyKey: expect.any(String),
    });
    expect(JSON.stringify(body)).not.toContain('down');
    expect(provider.requests).toHaveLength(2);
    const orders = (await (await fetch(`${demo.url}/orders`)).json()) as {
      status: string;
      operation: string;
    }[];
    expect(
      orders.filter((o) => o.operation === 'collections.mpesa').map((o) => o.status),
    ).toContain('ERROR');
  });

  it('does not retry an ambiguous payout (the demo sets retryAmbiguous: false)', async () => {
    provider.fallback = () => ({ status: 503, body: { message: 'down' } });

    const response = await post('/orders/payouts/mpesa', OPERATION_CASES[3].request);

    expect(response.status).toBe(502);
    expect(await response.json()).toMatchObject({
      operation: 'payouts.mpesa',
      mayHaveExecuted: true,
    });
    expect(provider.requests).toHaveLength(1);
  });

  describe('webhook endpoint', () => {
    /** The service's record of a reference, as the status look-up answers it. */
    const statusOf = (reference: string, outcome: string, amount = 1500): Reply => ({
      status: 200,
      body: {
        code: reference,
        amount,
        currency: 'KES',
        type: 'receipt',
        transaction_details: { status: outcome },
      },
    });
    const kenyaSuccess = (reference: string) => ({
      transaction_reference: reference,
      result_code: 0,
      remarks: 'Successfully processes m-pesa transaction',
      amount: 1500,
      success: true,
      extra_key: 'kept',
    });

    async function pendingOrder(reference: string): Promise<{ id: string }> {
      provider.reply({
        status: 200,
        body: { ...successBody('collection'), transaction_reference: reference },
      });
      return (await (await post('/orders/collections/mpesa', mpesaOrder)).json()) as { id: string };
    }
    const orderStatus = async (id: string) =>
      (await (await fetch(`${demo.url}/orders/${id}`)).json()) as {
        status: string;
        events: unknown[];
      };

    it('settles the order once, after the status look-up confirms it; a copy changes nothing', async () => {
      const reference = `9BD${Date.now()}eR`;
      const order = await pendingOrder(reference);
      provider.fallback = (request) => statusOf(request.path.split('/').pop() ?? '', 'success');

      const first = await post('/webhooks/payments', kenyaSuccess(reference));
      const again = await post('/webhooks/payments', kenyaSuccess(reference));

      expect([first.status, again.status]).toEqual([200, 200]);
      expect(await first.json()).toEqual({ received: true, duplicate: false, handled: 1 });
      expect(await again.json()).toEqual({ received: true, duplicate: true, handled: 0 });
      // One look-up: the copy is judged against the final record remembered from the first.
      expect(provider.requests.slice(1).map((r) => `${r.method} ${r.path}`)).toEqual([
        `GET /api/v1/status/${reference}`,
      ]);
      expect(await orderStatus(order.id)).toMatchObject({
        status: 'SUCCESS',
        events: [expect.objectContaining({ event: 'collection.succeeded', status: 'SUCCESS' })],
      });
    });

    it('refuses a forged success the look-up contradicts, and runs no handler', async () => {
      const reference = `9BD${Date.now()}eR`;
      const order = await pendingOrder(reference);
      provider.fallback = () => statusOf(reference, 'failed');

      const forged = await post('/webhooks/payments', kenyaSuccess(reference));

      expect(forged.status).toBe(409);
      expect(await orderStatus(order.id)).toMatchObject({ status: 'PENDING', events: [] });
    });

    it('acknowledges a confirmed event of an unknown reference without failing', async () => {
      provider.fallback = () => statusOf('9BD000000001eR', 'success');
      const response = await post('/webhooks/payments', kenyaSuccess('9BD000000001eR'));
      expect(response.status).toBe(200);
      expect(await response.json()).toEqual({ received: true, duplicate: false, handled: 1 });
    });

    it('answers 400 to malformed JSON and to a payload without its reference', async () => {
      expect((await post('/webhooks/payments', '{"transaction_reference": ')).status).toBe(400);
      expect((await post('/webhooks/payments', { result_code: 0, success: true })).status).toBe(
        400,
      );
      expect(provider.requests).toHaveLength(0);
    });

    it('refuses a body over the size limit', async () => {
      const response = await post('/webhooks/payments', {
        ...kenyaSuccess('X'),
        pad: 'x'.repeat(70 * 1024),
      });
      expect(response.status).toBe(413);
    });
  });

  it('serves OpenAPI docs of the demo endpoints', async () => {
    const document = (await (await fetch(`${demo.url}/docs-json`)).json()) as {
      paths: Record<string, unknown>;
      components: { schemas: Record<string, { properties: object }> };
    };
    expect(Object.keys(document.paths)).toEqual(
      expect.arrayContaining([
        '/orders/collections/mpesa',
        '/orders/collections/card',
        '/orders/collections/pan-african',
        '/orders/payouts/mpesa',
        '/orders/payouts/pan-african',
        '/orders/payouts/merchant',
        '/orders/{id}',
        '/webhooks/payments',
      ]),
    );
    expect(Object.keys(document.components.schemas.MpesaCollectionRequest.properties)).toEqual([
      'username',
      'amount',
      'phoneNumber',
      'narration',
      'callbackUrl',
    ]);
    expect((await fetch(`${demo.url}/docs`)).status).toBe(200);
  });
});

import { startDemo, RunningDemo } from '../apps/demo/src/demo';
import { OPERATION_CASES, successBody } from './support/fixtures';
import { RecordingServer } from './support/recording-server';

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
    expect(order).toMatchObject({ status: 'PENDING', transactionReference: 'TX-1001' });
    expect(provider.requests[0].json).toEqual({
      amount: 1500,
      narration: 'Order 42',
      phone_number: '0712345678',
      username: 'demo-shop',
      callback_url: `${demo.url}/webhooks/payments`,
      channel: 'MOBILE_MONEY_KE',
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
      message: 'The payment provider rejected our credentials',
      operation: 'collections.mpesa',
      providerStatus: 401,
    });
    expect(text).not.toContain(PASSWORD);
    expect(text).not.toContain('stack');
  });

  it('turns provider 5xx after retries into a 502 and marks the order ERROR', async () => {
    provider.fallback = () => ({ status: 503, body: { message: 'down', code: 'E_DOWN' } });

    const response = await post('/orders/payouts/mpesa', OPERATION_CASES[3].request);
    const body = (await response.json()) as Record<string, unknown>;

    expect(response.status).toBe(502);
    expect(body).toMatchObject({ operation: 'payouts.mpesa', providerStatus: 503, code: 'E_DOWN' });
    expect(provider.requests).toHaveLength(2);
    const orders = (await (await fetch(`${demo.url}/orders`)).json()) as {
      status: string;
      operation: string;
    }[];
    expect(orders.filter((o) => o.operation === 'payouts.mpesa').map((o) => o.status)).toContain(
      'ERROR',
    );
  });

  describe('webhook endpoint', () => {
    async function pendingOrder(): Promise<{ id: string }> {
      provider.reply({
        status: 200,
        body: { ...successBody('collection'), transaction_reference: `TX-${Math.random()}` },
      });
      return (await (await post('/orders/collections/mpesa', mpesaOrder)).json()) as { id: string };
    }
    const orderStatus = async (id: string) =>
      (await (await fetch(`${demo.url}/orders/${id}`)).json()) as {
        status: string;
        events: unknown[];
      };

    it('settles the order once; a duplicate or contradicting delivery changes nothing', async () => {
      const order = await pendingOrder();
      const { transactionReference: reference } = (await (
        await fetch(`${demo.url}/orders/${order.id}`)
      ).json()) as { transactionReference: string };
      const payload = {
        transaction_reference: reference,
        status: 'SUCCESS',
        success: true,
        event: 'payment.completed',
        extra_key: 'kept',
      };

      const first = await post('/webhooks/payments', payload);
      const again = await post('/webhooks/payments', payload);
      const contradicting = await post('/webhooks/payments', {
        ...payload,
        status: 'FAILED',
        event: 'payment.failed',
      });

      expect([first.status, again.status, contradicting.status]).toEqual([200, 200, 200]);
      expect(await first.json()).toEqual({ received: true, duplicate: false, handled: 1 });
      expect(await again.json()).toEqual({ received: true, duplicate: true, handled: 0 });
      expect(await orderStatus(order.id)).toMatchObject({
        status: 'SUCCESS',
        events: [expect.objectContaining({ status: 'SUCCESS' })],
      });
    });

    it('acknowledges an unknown reference without failing', async () => {
      const response = await post('/webhooks/payments', {
        transaction_reference: 'TX-NOPE',
        status: 'SUCCESS',
        event: 'payment.completed',
      });
      expect(response.status).toBe(200);
      expect(await response.json()).toEqual({ received: true, duplicate: false, handled: 1 });
    });

    it('answers 400 to malformed JSON and to a payload missing its keys', async () => {
      expect((await post('/webhooks/payments', '{"transaction_reference": ')).status).toBe(400);
      expect((await post('/webhooks/payments', { status: 'SUCCESS' })).status).toBe(400);
      expect(
        (
          await post('/webhooks/payments', {
            transaction_reference: 'X',
            status: 'SUCCESS',
            event: 'other',
          })
        ).status,
      ).toBe(400);
    });

    it('refuses a body over the size limit', async () => {
      const response = await post('/webhooks/payments', {
        transaction_reference: 'X',
        status: 'SUCCESS',
        event: 'payment.completed',
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

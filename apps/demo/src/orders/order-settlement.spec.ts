import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { type RunningDemo, startDemo } from '../demo';
import type { Order } from './order';

/** The service on loopback: accepts calls as the real one does and answers status look-ups. */
class Provider {
  /** Bodies of the calls received. */
  readonly calls: Record<string, unknown>[] = [];
  /** Answer of the next call: accepted with this reference, or a 502 (the answer is lost). */
  next: { reference: string } | 'lost' = { reference: '9BD100000001eR' };
  private readonly records = new Map<string, { status: string; amount: number }>();

  private constructor(private readonly server: Server) {}

  static async start(): Promise<Provider> {
    let handle: (req: IncomingMessage, res: ServerResponse) => void = () => undefined;
    const server = createServer((req, res) => handle(req, res));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const provider = new Provider(server);
    handle = (req, res) => provider.handle(req, res);
    return provider;
  }

  get url(): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  /** What the status look-up says of `reference`. */
  settle(reference: string, status: string, amount: number): void {
    this.records.set(reference, { status, amount });
  }

  close(): Promise<void> {
    this.server.closeAllConnections();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }

  private handle(req: IncomingMessage, res: ServerResponse): void {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const reply = (status: number, body: unknown) => {
        res.writeHead(status, { 'content-type': 'application/json' });
        res.end(JSON.stringify(body));
      };
      const lookup = /^\/api\/v1\/status\/([^/?]+)$/.exec(req.url ?? '');
      if (req.method === 'GET' && lookup) {
        const record = this.records.get(decodeURIComponent(lookup[1]));
        if (!record) return reply(404, { status: 404, success: false, message: 'not found' });
        return reply(200, {
          id: '00000000-0000-4000-a000-000000000001',
          currency: 'KES',
          code: decodeURIComponent(lookup[1]),
          amount: record.amount,
          type: 'receipt',
          // The phone number of the calls below, as the service writes it.
          transaction_details: { status: record.status, phone_number: '+254712345678' },
          // Created when the call executed: a record older than the call is another call's.
          created_at: new Date().toISOString(),
        });
      }
      this.calls.push(
        JSON.parse(Buffer.concat(chunks).toString('utf8')) as Record<string, unknown>,
      );
      if (this.next === 'lost') return reply(502, { message: 'bad gateway' });
      const { reference } = this.next;
      // The real acceptance answers: "SUCCESS" means accepted, not paid.
      return reference.endsWith('eW')
        ? reply(200, {
            success: true,
            correlator_id: reference,
            message: 'Transaction request sent successfully',
            status: 'SUCCESS',
            channel: '',
            amount: 0,
          })
        : reply(200, {
            payment_method: 'mobile',
            status: 'SUCCESS',
            transaction_reference: reference,
            success: true,
            message: 'Processed successfully',
            trackingId: '',
            reference: '',
            result: null,
          });
    });
  }
}

describe('demo: orders settle from confirmed webhooks only', () => {
  let provider: Provider;
  let demo: RunningDemo;

  beforeAll(async () => {
    provider = await Provider.start();
    demo = await startDemo({
      port: 0,
      logger: false,
      environment: {
        PAYMENTS_API_USERNAME: 'demo-user',
        PAYMENTS_API_PASSWORD: 'demo-password',
        PAYMENTS_BASE_URL: provider.url,
        PAYMENTS_DEFAULT_USERNAME: 'demo-shop',
        PAYMENTS_MAX_RETRIES: '0',
      },
    });
  });
  afterAll(async () => {
    await demo.close();
    await provider.close();
  });

  const post = async (path: string, body: unknown) => {
    const response = await fetch(`${demo.url}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    return { status: response.status, body: (await response.json()) as Record<string, unknown> };
  };
  const order = async (id: string) =>
    (await (await fetch(`${demo.url}/orders/${id}`)).json()) as Order;
  const latestOrder = async () => {
    const orders = (await (await fetch(`${demo.url}/orders`)).json()) as Order[];
    return orders[orders.length - 1];
  };
  /** The callback URL the library sent for the last call (it carries `malipo_key`). */
  const lastCallbackUrl = () => String(provider.calls[provider.calls.length - 1].callback_url);
  /** A webhook of the real Kenyan shape, posted to the callback URL as the service does. */
  const webhook = (callbackUrl: string, reference: string, succeeded: boolean, amount: number) =>
    fetch(callbackUrl, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        transaction_reference: reference,
        result_code: succeeded ? 0 : 1,
        remarks: succeeded ? 'Successfully processes m-pesa transaction' : 'Request Cancelled',
        amount,
        transaction_date: '2026-02-09 10:37:50.286784611 +0000 UTC',
        forward_url: callbackUrl,
        order_id: '',
        success: succeeded,
      }),
    });
  const mpesa = (amount: number) => ({ amount, phoneNumber: '0712345678', narration: 'Order' });
  const mpesaPayout = (amount: number) => ({ amount, phoneNumber: '0712345678', narration: 'Out' });

  it('shows an accepted collection as PENDING, passes the order id as idempotency key, and settles it by webhook', async () => {
    provider.next = { reference: '9BD100000001eR' };
    const started = await post('/orders/collections/mpesa', mpesa(1500));

    expect(started.status).toBe(201);
    expect(started.body).toMatchObject({
      status: 'PENDING',
      transactionReference: '9BD100000001eR',
    });
    const id = String(started.body.id);
    expect(started.body.idempotencyKey).toBe(id);
    const callbackUrl = lastCallbackUrl();
    expect(new URL(callbackUrl).searchParams.get('malipo_key')).toBe(id);

    provider.settle('9BD100000001eR', 'success', 1500);
    expect((await webhook(callbackUrl, '9BD100000001eR', true, 1500)).status).toBe(200);

    expect(await order(id)).toMatchObject({
      status: 'SUCCESS',
      events: [expect.objectContaining({ event: 'collection.succeeded', status: 'SUCCESS' })],
    });
  });

  it('settles FAILED from a failure webhook', async () => {
    provider.next = { reference: '9BD100000002eR' };
    const id = String((await post('/orders/collections/mpesa', mpesa(200))).body.id);
    provider.settle('9BD100000002eR', 'failed', 200);

    await webhook(lastCallbackUrl(), '9BD100000002eR', false, 200);

    expect(await order(id)).toMatchObject({
      status: 'FAILED',
      events: [expect.objectContaining({ event: 'collection.failed' })],
    });
  });

  it('refuses a webhook the service does not confirm and leaves the order PENDING', async () => {
    provider.next = { reference: '9BD100000003eR' };
    const id = String((await post('/orders/collections/mpesa', mpesa(300))).body.id);
    provider.settle('9BD100000003eR', 'failed', 300);

    expect((await webhook(lastCallbackUrl(), '9BD100000003eR', true, 300)).status).toBe(409);

    expect(await order(id)).toMatchObject({ status: 'PENDING', events: [] });
  });

  it('settles a payout whose answer was lost, matched by its idempotency key', async () => {
    provider.next = 'lost';
    const started = await post('/orders/payouts/mpesa', mpesaPayout(2000));

    expect(started.status).toBe(502);
    expect(started.body).toMatchObject({ mayHaveExecuted: true });
    const lost = await latestOrder();
    expect(lost).toMatchObject({ status: 'ERROR', mayHaveExecuted: true });
    expect(lost.transactionReference).toBeUndefined();

    provider.settle('9BD100000004eW', 'success', 2000);
    expect((await webhook(lastCallbackUrl(), '9BD100000004eW', true, 2000)).status).toBe(200);

    expect(await order(lost.id)).toMatchObject({
      status: 'SUCCESS',
      transactionReference: '9BD100000004eW',
      events: [expect.objectContaining({ event: 'payout.succeeded' })],
    });
  });

  it('does not settle an order from a key whose amount disagrees', async () => {
    provider.next = 'lost';
    await post('/orders/payouts/mpesa', mpesaPayout(5000));
    const lost = await latestOrder();

    // A genuine, confirmed payout of 5, posted with the key of the 5000 order: it contradicts the
    // journal's entry of that key (another amount), so it is refused and runs no handler.
    provider.settle('9BD100000005eW', 'success', 5);
    expect((await webhook(lastCallbackUrl(), '9BD100000005eW', true, 5)).status).toBe(409);

    expect(await order(lost.id)).toMatchObject({ status: 'ERROR', events: [] });
  });

  it('flags an order whose one call the service executed twice', async () => {
    provider.next = { reference: '9BD100000006eW' };
    const id = String((await post('/orders/payouts/mpesa', mpesaPayout(700))).body.id);
    const callbackUrl = lastCallbackUrl();
    provider.settle('9BD100000006eW', 'success', 700);
    provider.settle('9BD100000007eW', 'success', 700);

    await webhook(callbackUrl, '9BD100000006eW', true, 700);
    await webhook(callbackUrl, '9BD100000007eW', true, 700);

    expect(await order(id)).toMatchObject({
      status: 'SUCCESS',
      transactionReference: '9BD100000006eW',
      duplicateReferences: ['9BD100000007eW'],
    });
  });
});

import { INestApplication, Injectable } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { OnPaymentEvent } from './on-payment-event.decorator';
import { parsePaymentWebhook, PaymentWebhookEvent } from './payment-webhook-event';
import { PaymentsWebhookDispatcher } from './payments-webhook.dispatcher';
import { PaymentsWebhookModule } from './payments-webhook.module';
import type { PaymentsWebhookStore } from './payments-webhook.store';

@Injectable()
class PaymentHandlers {
  readonly completed: PaymentWebhookEvent[] = [];
  readonly everything: PaymentWebhookEvent[] = [];
  failNext = false;
  slow = false;

  @OnPaymentEvent('payment.completed')
  async onCompleted(event: PaymentWebhookEvent) {
    if (this.slow) await new Promise((resolve) => setTimeout(resolve, 100));
    if (this.failNext) {
      this.failNext = false;
      throw new Error('database down');
    }
    this.completed.push(event);
  }

  @OnPaymentEvent()
  onAny(event: PaymentWebhookEvent) {
    this.everything.push(event);
  }
}

class MapStore implements PaymentsWebhookStore {
  readonly keys = new Map<string, number>();
  has(key: string) {
    return Promise.resolve(this.keys.has(key));
  }
  add(key: string) {
    this.keys.set(key, Date.now());
    return Promise.resolve();
  }
}

const DELIVERY = {
  transaction_reference: 'TX-1',
  status: 'SUCCESS',
  success: true,
  amount: 1500,
  currency: 'KES',
  message: 'Payment completed',
  channel: 'MOBILE_MONEY_KE',
  event: 'payment.completed',
  occurred_at: '2026-11-21T10:00:00.000Z',
  extra_key: { kept: true },
};

describe('PaymentsWebhookModule', () => {
  let app: INestApplication;
  let handlers: PaymentHandlers;
  let store: MapStore;
  let url: string;

  beforeEach(async () => {
    store = new MapStore();
    const moduleRef = await Test.createTestingModule({
      imports: [PaymentsWebhookModule.forRoot({ path: 'hooks/pay', store })],
      providers: [PaymentHandlers],
    }).compile();
    app = moduleRef.createNestApplication({ logger: false });
    await app.listen(0, '127.0.0.1');
    url = `${await app.getUrl()}/hooks/pay`;
    handlers = app.get(PaymentHandlers);
  });
  afterEach(() => app.close());

  const deliver = (body: unknown) =>
    fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: typeof body === 'string' ? body : JSON.stringify(body),
    });

  it('parses the payload into a typed camelCase event with _raw, and runs the matching handlers', async () => {
    const response = await deliver(DELIVERY);

    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ received: true, duplicate: false, handled: 2 });
    expect(handlers.completed).toEqual([
      {
        event: 'payment.completed',
        transactionReference: 'TX-1',
        status: 'SUCCESS',
        success: true,
        amount: 1500,
        currency: 'KES',
        message: 'Payment completed',
        channel: 'MOBILE_MONEY_KE',
        occurredAt: '2026-11-21T10:00:00.000Z',
        _raw: DELIVERY,
      },
    ]);
    expect(handlers.everything).toHaveLength(1);
    expect([...store.keys.keys()]).toEqual(['TX-1:payment.completed']);
  });

  it('dispatches by event name', async () => {
    await deliver({ ...DELIVERY, event: 'payout.failed', status: 'FAILED' });

    expect(handlers.completed).toEqual([]);
    expect(handlers.everything.map((e) => e.event)).toEqual(['payout.failed']);
  });

  it('acknowledges a repeated delivery without running the handlers again', async () => {
    await deliver(DELIVERY);
    const again = await deliver(DELIVERY);

    expect(await again.json()).toEqual({ received: true, duplicate: true, handled: 0 });
    expect(handlers.completed).toHaveLength(1);
  });

  it('runs a handler once when its provider is also reachable through an alias', async () => {
    const moduleRef = await Test.createTestingModule({
      imports: [PaymentsWebhookModule.forRoot()],
      providers: [PaymentHandlers, { provide: 'HANDLERS_ALIAS', useExisting: PaymentHandlers }],
    }).compile();
    await moduleRef.init();

    const result = await moduleRef
      .get(PaymentsWebhookDispatcher)
      .dispatch(parsePaymentWebhook(DELIVERY));

    expect(result).toEqual({ duplicate: false, handled: 2 });
    expect(moduleRef.get(PaymentHandlers).completed).toHaveLength(1);
  });

  it('runs the handlers once for concurrent copies, also with an async store', async () => {
    const dispatcher = app.get(PaymentsWebhookDispatcher);
    const event = parsePaymentWebhook(DELIVERY);

    const results = await Promise.all([dispatcher.dispatch(event), dispatcher.dispatch(event)]);

    expect(results.map((r) => r.duplicate).sort()).toEqual([false, true]);
    expect(handlers.completed).toHaveLength(1);
  });

  it('answers 401 and runs nothing when verify rejects the delivery', async () => {
    const moduleRef = await Test.createTestingModule({
      imports: [
        PaymentsWebhookModule.forRoot({
          path: 'hooks/signed',
          verify: ({ headers }) => headers['x-webhook-secret'] === 'shared-secret',
        }),
      ],
      providers: [PaymentHandlers],
    }).compile();
    const signed = moduleRef.createNestApplication({ logger: false });
    await signed.listen(0, '127.0.0.1');
    const signedUrl = `${await signed.getUrl()}/hooks/signed`;
    const post = (secret: string) =>
      fetch(signedUrl, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-webhook-secret': secret },
        body: JSON.stringify(DELIVERY),
      });
    try {
      expect((await post('wrong')).status).toBe(401);
      expect(signed.get(PaymentHandlers).completed).toEqual([]);
      expect((await post('shared-secret')).status).toBe(200);
      expect(signed.get(PaymentHandlers).completed).toHaveLength(1);
    } finally {
      await signed.close();
    }
  });

  it('runs the handlers once for concurrent identical deliveries', async () => {
    handlers.slow = true;
    const responses = await Promise.all([deliver(DELIVERY), deliver(DELIVERY), deliver(DELIVERY)]);

    expect(responses.map((r) => r.status)).toEqual([200, 200, 200]);
    expect(handlers.completed).toHaveLength(1);
  });

  it('answers 500 when a handler fails and handles the re-delivery', async () => {
    handlers.failNext = true;

    expect((await deliver(DELIVERY)).status).toBe(500);
    expect(store.keys.size).toBe(0);
    expect(await (await deliver(DELIVERY)).json()).toEqual({
      received: true,
      duplicate: false,
      handled: 2,
    });
    expect(handlers.completed).toHaveLength(1);
  });

  it.each<[string, unknown, string]>([
    [
      'a missing reference',
      { ...DELIVERY, transaction_reference: undefined },
      'transaction_reference',
    ],
    ['an empty status', { ...DELIVERY, status: '' }, 'status'],
    ['an unknown event', { ...DELIVERY, event: 'payment.maybe' }, 'event'],
    ['a string amount', { ...DELIVERY, amount: '1500' }, 'amount'],
    ['an array body', [DELIVERY], 'body'],
  ])('answers 400 naming the field for %s', async (_label, body, field) => {
    const response = await deliver(body);
    const payload = (await response.json()) as { errors: { field: string }[] };

    expect(response.status).toBe(400);
    expect(payload.errors.map((e) => e.field)).toContain(field);
    expect(handlers.everything).toEqual([]);
  });

  it('answers 400 to malformed JSON', async () => {
    expect((await deliver('{"transaction_reference": ')).status).toBe(400);
  });

  it('reads camelCase keys when a sender uses them', async () => {
    await deliver({ transactionReference: 'TX-2', status: 'SUCCESS', event: 'payment.completed' });
    expect(handlers.completed[0]).toMatchObject({ transactionReference: 'TX-2' });
  });
});

import { Body, Controller, Injectable, Param, Post, UseFilters } from '@nestjs/common';
import type { INestApplication } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { CALLBACK_URL, OPERATION_CASES, successBody } from '../spec-support/operation-cases';
import { RecordingServer } from '../spec-support/recording-server';
import { CollectionsService } from './collections.service';
import { createPaymentsClient } from './create-payments-client';
import { MpesaCollectionRequest } from './dto/collection-requests';
import { PaymentsValidationError, ServiceAPIError } from './errors';
import { PaymentsExceptionFilter } from './payments-exception.filter';
import { PaymentsModule } from './payments.module';
import { InjectPayouts } from './payments.decorators';
import { PayoutsService } from './payouts.service';
import { FakePayments, PaymentsTestingModule } from './testing';

const [MPESA_COLLECTION, , , MPESA_PAYOUT] = OPERATION_CASES;
const PAYOUT = MPESA_PAYOUT.request;
const REUSED = { field: 'idempotencyKey', rule: 'reused' };

/** The rejection of `promise`, which must reject. */
async function rejection(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    () => {
      throw new Error('the call was not refused');
    },
    (error: unknown) => error,
  );
}

describe('a caller-supplied idempotency key names one request (over loopback HTTP)', () => {
  let server: RecordingServer;

  beforeAll(async () => {
    server = await RecordingServer.start();
  });
  beforeEach(() => {
    server.fallback = (request) => ({
      status: 200,
      body: successBody(request.path.includes('withdrawal') ? 'payout' : 'collection'),
    });
  });
  afterEach(() => server.reset());
  afterAll(() => server.close());

  const client = () =>
    createPaymentsClient({
      apiUsername: 'u',
      apiPassword: 'calls-spec-password',
      baseUrl: server.url,
      maxRetries: 0,
    });

  it('refuses the key with another amount, and sends nothing', async () => {
    const payments = client();
    await payments.payouts.mpesa(PAYOUT, { idempotencyKey: 'refund-42' });

    const error = await rejection(
      payments.payouts.mpesa({ ...PAYOUT, amount: 5000 }, { idempotencyKey: 'refund-42' }),
    );

    expect(error).toBeInstanceOf(PaymentsValidationError);
    expect((error as PaymentsValidationError).errors).toEqual([
      {
        ...REUSED,
        message: expect.stringContaining('already used for a different request') as string,
      },
    ]);
    expect((error as Error).message).not.toMatch(/5000|0712345678|Refund 42/);
    expect(server.requests.map((r) => r.json)).toEqual([
      expect.objectContaining({ amount: PAYOUT.amount }),
    ]);
  });

  it('sends the same request under the same key again: a retry', async () => {
    const payments = client();

    await payments.payouts.mpesa(PAYOUT, { idempotencyKey: 'refund-43' });
    await payments.payouts.mpesa(PAYOUT, { idempotencyKey: 'refund-43' });
    // The same request on the wire: the phone in another form, the callback from the default.
    await payments.payouts.mpesa(
      { ...PAYOUT, phoneNumber: '+254712345678' },
      { idempotencyKey: 'refund-43' },
    );

    expect(server.requests).toHaveLength(3);
    expect(new Set(server.requests.map((r) => r.text)).size).toBe(1);
    expect(server.requests.map((r) => r.headers['idempotency-key'])).toEqual(
      Array(3).fill('refund-43'),
    );
  });

  it('sends the same request again after the first call failed', async () => {
    const payments = client();
    server.reply({ status: 503, body: { success: false, message: 'down' } });
    await expect(
      payments.payouts.mpesa(PAYOUT, { idempotencyKey: 'refund-44' }),
    ).rejects.toBeInstanceOf(ServiceAPIError);

    await payments.payouts.mpesa(PAYOUT, { idempotencyKey: 'refund-44' });

    expect(server.requests).toHaveLength(2);
    expect(server.requests[1].text).toBe(server.requests[0].text);
  });

  it('refuses one key for two operations', async () => {
    const payments = client();
    await payments.collections.mpesa(MPESA_COLLECTION.request, { idempotencyKey: 'order-45' });

    const error = await rejection(payments.payouts.mpesa(PAYOUT, { idempotencyKey: 'order-45' }));

    expect(error).toMatchObject({ target: 'MpesaPayoutRequest', errors: [REUSED] });
    expect(server.requests.map((r) => r.path)).toEqual(['/api/v2/payments']);
  });

  it('keeps no memory of generated keys, nor of keys of look-ups, which send none', async () => {
    const payments = client();
    server.fallback = () => ({ status: 200, body: { id: 'x', transaction_details: {} } });

    await payments.transactions.status('REF1eR', { idempotencyKey: 'lookup' }).catch(() => 0);
    await payments.transactions.status('REF2eR', { idempotencyKey: 'lookup' }).catch(() => 0);
    server.fallback = () => ({ status: 200, body: successBody('payout') });
    await payments.payouts.mpesa(PAYOUT);
    await payments.payouts.mpesa({ ...PAYOUT, amount: 5000 });

    expect(server.requests).toHaveLength(4);
  });

  it('remembers keys per client', async () => {
    const first = client();
    await first.payouts.mpesa(PAYOUT, { idempotencyKey: 'refund-46' });

    await client().payouts.mpesa({ ...PAYOUT, amount: 5000 }, { idempotencyKey: 'refund-46' });
    const error = await rejection(
      first.payouts.mpesa({ ...PAYOUT, amount: 5000 }, { idempotencyKey: 'refund-46' }),
    );

    expect(error).toMatchObject({ errors: [REUSED] });
    expect(server.requests).toHaveLength(2);
  });

  it('remembers keys per registration: two accounts may use the same key', async () => {
    @Injectable()
    class Treasury {
      constructor(
        @InjectPayouts('kes') readonly kes: PayoutsService,
        @InjectPayouts('usd') readonly usd: PayoutsService,
      ) {}
    }
    const account = (apiUsername: string) => () => ({
      apiUsername,
      apiPassword: 'calls-spec-password',
      baseUrl: server.url,
      maxRetries: 0,
    });
    const moduleRef = await Test.createTestingModule({
      imports: [
        PaymentsModule.forRootAsync({ name: 'kes', useFactory: account('kes-api') }),
        PaymentsModule.forRootAsync({ name: 'usd', useFactory: account('usd-api') }),
      ],
      providers: [Treasury],
    }).compile();
    const { kes, usd } = moduleRef.get(Treasury);

    await kes.mpesa(PAYOUT, { idempotencyKey: 'payout-1' });
    await usd.mpesa({ ...PAYOUT, amount: 5000 }, { idempotencyKey: 'payout-1' });
    const error = await rejection(
      kes.mpesa({ ...PAYOUT, amount: 5000 }, { idempotencyKey: 'payout-1' }),
    );

    expect(error).toMatchObject({ errors: [REUSED] });
    expect(server.requests.map((r) => [r.headers.authorization, r.json])).toEqual([
      [expect.stringMatching(/^Basic /), expect.objectContaining({ amount: PAYOUT.amount })],
      [expect.stringMatching(/^Basic /), expect.objectContaining({ amount: 5000 })],
    ]);
    expect(server.requests[0].headers.authorization).not.toBe(
      server.requests[1].headers.authorization,
    );
    await moduleRef.close();
  });

  describe("the README's first controller, with PaymentsExceptionFilter", () => {
    @Controller('orders')
    @UseFilters(PaymentsExceptionFilter)
    class CheckoutController {
      constructor(private readonly collections: CollectionsService) {}

      @Post(':orderId/mpesa')
      async pay(@Param('orderId') orderId: string, @Body() request: MpesaCollectionRequest) {
        const response = await this.collections.mpesa(request, {
          idempotencyKey: `order-${orderId}`,
        });
        return { reference: response.transactionReference, accepted: response.success };
      }
    }

    let app: INestApplication;
    let url: string;
    beforeAll(async () => {
      const moduleRef = await Test.createTestingModule({
        imports: [
          PaymentsModule.forRoot({
            apiUsername: 'u',
            apiPassword: 'calls-spec-password',
            baseUrl: server.url,
            defaultUsername: 'acme',
            defaultCallbackUrl: CALLBACK_URL,
          }),
        ],
        controllers: [CheckoutController],
      }).compile();
      app = moduleRef.createNestApplication({ logger: false });
      await app.listen(0, '127.0.0.1');
      url = await app.getUrl();
    });
    afterAll(() => app.close());

    const pay = async (orderId: string, body: unknown) => {
      const response = await fetch(`${url}/orders/${orderId}/mpesa`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
      return { status: response.status, body: (await response.json()) as Record<string, unknown> };
    };
    const order = { amount: 1500, phoneNumber: '0712345678', narration: 'Order 7' };

    it('answers a bad amount 400 naming the field and rule, and sends nothing', async () => {
      const answer = await pay('7', { ...order, amount: 5 });

      expect(answer).toMatchObject({
        status: 400,
        body: { statusCode: 400, errors: [{ field: 'amount', rule: 'min' }] },
      });
      expect(server.requests).toEqual([]);
    });

    it('answers a reused order id with another body 400 idempotencyKey reused', async () => {
      expect((await pay('8', order)).status).toBe(201);

      const answer = await pay('8', { ...order, amount: 2500 });

      expect(answer).toMatchObject({ status: 400, body: { errors: [REUSED] } });
      expect(server.requests.map((r) => r.json)).toEqual([
        expect.objectContaining({ amount: 1500 }),
      ]);
      expect((await pay('8', order)).status).toBe(201);
    });
  });
});

describe('a caller-supplied idempotency key with PaymentsTestingModule', () => {
  it('is refused for another request as with the real wire, and forgotten by reset()', async () => {
    const moduleRef = await Test.createTestingModule({
      imports: [PaymentsTestingModule.forRoot()],
    }).compile();
    const payouts = moduleRef.get(PayoutsService);
    const fake = moduleRef.get(FakePayments);
    await payouts.mpesa(PAYOUT, { idempotencyKey: 'refund-1' });

    await expect(
      payouts.mpesa({ ...PAYOUT, amount: 5000 }, { idempotencyKey: 'refund-1' }),
    ).rejects.toMatchObject({ errors: [REUSED] });
    expect(fake.calls).toHaveLength(1);

    fake.reset();
    await payouts.mpesa({ ...PAYOUT, amount: 5000 }, { idempotencyKey: 'refund-1' });

    expect(fake.calls.map((call) => call.body?.amount)).toEqual([5000]);
  });

  it('keeps one memory per testing module', async () => {
    const modules = await Promise.all(
      [1, 2].map(() =>
        Test.createTestingModule({ imports: [PaymentsTestingModule.forRoot()] }).compile(),
      ),
    );
    const [first, second] = modules.map((moduleRef) => moduleRef.get(PayoutsService));

    await first.mpesa(PAYOUT, { idempotencyKey: 'refund-2' });

    await expect(
      second.mpesa({ ...PAYOUT, amount: 5000 }, { idempotencyKey: 'refund-2' }),
    ).resolves.toMatchObject({ status: 'SUCCESS' });
    await expect(
      first.mpesa({ ...PAYOUT, amount: 5000 }, { idempotencyKey: 'refund-2' }),
    ).rejects.toMatchObject({ errors: [REUSED] });
  });
});

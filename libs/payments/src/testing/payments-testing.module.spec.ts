import { Injectable } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { CollectionsService } from '../collections.service';
import { PaymentsValidationError, ServiceAPIError } from '../errors';
import { PaymentsClient } from '../payments-client';
import { InjectPayouts } from '../payments.decorators';
import { PayoutsService } from '../payouts.service';
import { FakePayments } from './fake-payments';
import type { PaymentsTestingOptions } from './fake-payments';
import { getFakePaymentsToken, PaymentsTestingModule } from './payments-testing.module';
import { InMemoryPaymentsJournal } from '../journal/in-memory-payments-journal';
import { PaymentsReconciler } from '../payments-reconciler';

/** A provider of the kind a team would unit-test: it takes payments through the injected services. */
@Injectable()
class Checkout {
  constructor(
    readonly collections: CollectionsService,
    readonly payouts: PayoutsService,
  ) {}

  pay(orderId: string, amount: number) {
    return this.collections.mpesa(
      { amount, phoneNumber: '+254712345678', narration: `Order ${orderId}` },
      { idempotencyKey: `order-${orderId}` },
    );
  }

  card(amount: number) {
    return this.collections.card({ amount, phoneNumber: '0712345678', narration: 'Card' });
  }

  refund(amount: number) {
    return this.payouts.mpesa({ amount, phoneNumber: '0712345678', narration: 'Refund' });
  }
}

const CALLBACK = 'https://shop.example.com/webhooks/payments';

/** A testing module of one fake registration with `options`. */
function testingModule(options: PaymentsTestingOptions = { defaultUsername: 'acme' }) {
  return Test.createTestingModule({ imports: [PaymentsTestingModule.forRoot(options)] }).compile();
}

describe('PaymentsTestingModule: the real services on a fake wire', () => {
  let checkout: Checkout;
  let fake: FakePayments;

  beforeEach(async () => {
    const moduleRef = await Test.createTestingModule({
      imports: [
        PaymentsTestingModule.forRoot({
          defaultUsername: 'demo-shop',
          defaultCallbackUrl: CALLBACK,
        }),
      ],
      providers: [Checkout],
    }).compile();
    checkout = moduleRef.get(Checkout);
    fake = moduleRef.get(FakePayments);
  });

  it('refuses an option key the real module would refuse, naming it', () => {
    const typo = { defaultCallbackURL: 'https://shop.example/hooks' } as never;
    let refusal: unknown;
    try {
      PaymentsTestingModule.forRoot(typo);
    } catch (error) {
      refusal = error;
    }
    expect(refusal).toBeInstanceOf(PaymentsValidationError);
    expect(refusal).toMatchObject({
      target: 'PaymentsTestingModuleOptions',
      errors: [{ field: 'defaultCallbackURL', rule: 'whitelist' }],
    });
  });

  it('records what production would send: validated, defaults applied, encoded', async () => {
    const response = await checkout.pay('42', 1500);

    expect(response).toMatchObject({
      success: true,
      status: 'SUCCESS',
      paymentMethod: 'MOBILE_MONEY_KE',
      transactionReference: expect.stringMatching(/eR$/) as string,
    });
    expect(fake.calls).toEqual([
      {
        operation: 'collections.mpesa',
        method: 'POST',
        url: '/api/v2/payments',
        body: {
          username: 'demo-shop',
          channel: 'MOBILE_MONEY_KE',
          amount: 1500,
          phone_number: '0712345678',
          narration: 'Order 42',
          currency: 'KES',
          callback_url: `${CALLBACK}?malipo_key=order-42`,
        },
        idempotencyKey: 'order-42',
      },
    ]);
  });

  it('answers every operation in the real shapes, decoded by production', async () => {
    const moduleRef = await testingModule();
    const client = moduleRef.get(PaymentsClient);

    const payout = await client.payouts.merchant({
      amount: 750,
      phoneNumber: '+254712345678',
      narration: 'Rent',
      businessAccount: '888880',
      businessNumber: 'N/A',
      callbackUrl: CALLBACK,
    });
    const status = await client.transactions.status(payout.transactionReference);
    moduleRef.get(FakePayments).settle(payout.transactionReference, 'success');
    const settled = await client.transactions.status(payout.transactionReference);
    const networks = await client.networks.discover('withdrawal', '+234');
    const balances = await client.balances.all();
    const transfer = await client.transfers.send({
      receiverUsername: 'beta',
      amount: 10,
      narration: 'Lunch',
    });

    expect(payout).toMatchObject({ status: 'SUCCESS', channel: '', amount: 750 });
    expect(status).toMatchObject({
      code: payout.transactionReference,
      amount: 750,
      type: 'withdrawal',
      transactionDetails: { status: 'pending', channel: 'bank', phoneNumber: '+254712345678' },
    });
    expect(Date.now() - Date.parse(status.createdAt)).toBeLessThan(60_000);
    expect(Date.now() / 1000 - status.transactionDetails.processedAt.seconds).toBeLessThan(60);
    expect(settled.transactionDetails.status).toBe('success');
    expect(networks.mobile[0]).toMatchObject({ accountNumberType: 'phone' });
    expect(balances.local).toEqual(balances.fiatBalance);
    expect(transfer.transactionReference).toMatch(/eS$/);
    expect(transfer._raw).not.toHaveProperty('payment_method');
    expect(transfer._raw).not.toHaveProperty('status');
  });

  it('answers a pan-African bank collection with the bank account and no message', async () => {
    const moduleRef = await testingModule();
    const bank = await moduleRef.get(PaymentsClient).collections.panAfrican({
      accountName: 'bank',
      amount: 5000,
      phoneNumber: '+2348012345678',
      accountNumber: '0123456789',
      networkCode: 'fake-bank-network',
      channelId: 'fake-bank-channel',
      narration: 'Invoice 7',
      currency: 'NGN',
      callbackUrl: CALLBACK,
      transactionChannel: 'bank',
    });

    expect(bank.message).toBe('');
    expect(bank.bankAccount).toMatchObject({ accountReference: bank.transactionReference });
    expect(bank.checkoutUrl).toBeUndefined();
  });

  it('hands out references no other fake of the process hands out', async () => {
    const other = await testingModule({ defaultUsername: 'demo-shop' });
    const mine = await checkout.pay('90', 1500);
    const theirs = await other.get(PaymentsClient).collections.mpesa({
      amount: 1500,
      phoneNumber: '0712345678',
      narration: 'x',
      callbackUrl: CALLBACK,
    });

    expect(theirs.transactionReference).not.toBe(mine.transactionReference);
  });

  it('settles a transfer between accounts at once, as the service does', async () => {
    const moduleRef = await testingModule();
    const client = moduleRef.get(PaymentsClient);
    const transfer = await client.transfers.send({
      receiverUsername: 'b',
      amount: 5,
      narration: 'x',
    });

    await expect(client.transactions.status(transfer.transactionReference)).resolves.toMatchObject({
      transactionDetails: { status: 'success', channel: 'p2p' },
    });
  });

  it('turns failWith(null) into the wire error too', async () => {
    fake.failOnceWith('payouts.mpesa', null as unknown as Error);

    await expect(checkout.refund(1000)).rejects.toMatchObject({ code: 'NETWORK_ERROR' });
  });

  it('replays the first answer to a repeated key, as the service does', async () => {
    const first = await checkout.pay('77', 1500);
    const again = await checkout.pay('77', 1500);

    expect(again.transactionReference).toBe(first.transactionReference);
    expect(fake.calls).toHaveLength(2);
  });

  it('replays the first accepted answer under respondWith, and after a queued answer', async () => {
    const first = await checkout.pay('79', 1500);
    fake.respondOnceWith('collections.mpesa', { message: 'queued for this call' });
    const queued = await checkout.pay('79', 1500);
    fake.respondWith('collections.mpesa', { message: 'custom' });
    const replayed = await checkout.pay('79', 1500);

    expect(queued.transactionReference).not.toBe(first.transactionReference);
    expect(replayed.transactionReference).toBe(first.transactionReference);
    expect(replayed.message).toBe('Processed successfully');
  });

  it('keeps a transaction only for an accepted answer, under the reference the answer gives', async () => {
    const moduleRef = await testingModule({
      defaultUsername: 'acme',
      defaultCallbackUrl: CALLBACK,
    });
    const client = moduleRef.get(PaymentsClient);
    const fakes = moduleRef.get(FakePayments);
    const request = { amount: 700, phoneNumber: '0712345678', narration: 'x' };
    fakes.respondOnceWith('payouts.mpesa', {}, { httpStatus: 503 });
    const error = (await client.payouts.mpesa(request).catch((e: unknown) => e)) as ServiceAPIError;
    fakes.respondOnceWith('collections.mpesa', { transaction_reference: 'MINE0001eR' });
    await client.collections.mpesa(request);

    expect(error).toMatchObject({ status: 503, mayHaveExecuted: true });
    const unanswered = (error.body as { correlator_id: string }).correlator_id;
    await expect(client.transactions.status(unanswered)).rejects.toMatchObject({ status: 404 });
    await expect(client.transactions.status('MINE0001eR')).resolves.toMatchObject({
      transactionDetails: { status: 'pending' },
    });
  });

  it('answers 409 to a key the client forgot, reused for another request', async () => {
    const first = await checkout.pay('78', 1500);
    const call = fake.calls[0];
    const other = { ...call.body, amount: 1600 };

    await expect(
      fake.send({
        operation: call.operation,
        idempotencyKey: call.idempotencyKey,
        request: { method: 'POST', url: call.url, body: other },
      } as unknown as Parameters<FakePayments['send']>[0]),
    ).resolves.toMatchObject({ status: 409 });
    expect(first.transactionReference).toMatch(/eR$/);
  });

  it.each([
    [401, 'AUTHENTICATION_FAILED', false],
    [503, 'SERVICE_ERROR', true],
  ] as const)(
    'answers a programmed refusal with status %i under that HTTP status',
    async (status, code, mayHaveExecuted) => {
      fake.respondOnceWith('payouts.mpesa', { status, success: false, message: 'no' });

      await expect(checkout.refund(1000)).rejects.toMatchObject({ status, code, mayHaveExecuted });
    },
  );

  it('answers a programmed refusal under HTTP 200 when told so', async () => {
    fake.respondOnceWith(
      'payouts.mpesa',
      { status: 400, success: false, message: 'no' },
      { httpStatus: 200 },
    );

    await expect(checkout.refund(1000)).rejects.toMatchObject({
      status: 200,
      serviceStatus: 400,
      mayHaveExecuted: false,
    });
  });

  it.each([
    ['ECONNRESET', 'NETWORK_ERROR', true],
    ['ETIMEDOUT', 'TIMEOUT', true],
    ['ECONNABORTED', 'TIMEOUT', true],
    ['ECONNREFUSED', 'NETWORK_ERROR', false],
  ])('turns a programmed %s into the wire error %s', async (networkCode, code, mayHaveExecuted) => {
    const given = Object.assign(new Error('socket'), { code: networkCode });
    fake.failOnceWith('payouts.mpesa', given);

    const error = (await checkout.refund(1000).catch((e: unknown) => e)) as ServiceAPIError;

    expect(error).toBeInstanceOf(ServiceAPIError);
    expect(error).toMatchObject({ code, mayHaveExecuted });
    expect(error.cause).toBe(given);
  });

  it('reads a gateway status text as the refusal HTTP status', async () => {
    fake.respondOnceWith('payouts.mpesa', { status: '503: upstream', success: false });

    await expect(checkout.refund(1000)).rejects.toMatchObject({
      status: 503,
      mayHaveExecuted: true,
    });
  });

  it('returns programmed wire answers, once or always', async () => {
    fake.respondWith('collections.card', { checkout_url: 'https://pay.example.com/always' });
    fake.respondOnceWith('collections.card', {
      checkout_url: 'https://pay.example.com/first',
      status: 'CREATED',
    });

    const first = await checkout.card(2500);
    const second = await checkout.card(2500);

    expect([first.checkoutUrl, first.status]).toEqual(['https://pay.example.com/first', 'CREATED']);
    expect(second.checkoutUrl).toBe('https://pay.example.com/always');
  });

  it("turns a programmed refusal into production's ServiceAPIError", async () => {
    fake.respondOnceWith('payouts.mpesa', {
      status: 400,
      success: false,
      message: 'insufficient balance',
    });

    await expect(checkout.refund(1000)).rejects.toMatchObject({
      code: 'SERVICE_ERROR',
      serviceStatus: 400,
      serviceMessage: 'insufficient balance',
      mayHaveExecuted: false,
    });
    await expect(checkout.refund(1000)).resolves.toMatchObject({ status: 'SUCCESS' });
  });

  it('rejects with a programmed error', async () => {
    const error = new ServiceAPIError('payouts.mpesa failed', {
      operation: 'payouts.mpesa',
      idempotencyKey: 'k',
      attempts: 3,
      status: 503,
      code: 'SERVICE_ERROR',
      mayHaveExecuted: true,
    });
    fake.failOnceWith('payouts.mpesa', error);

    await expect(checkout.refund(1000)).rejects.toBe(error);
  });

  it('validates like the real client and records nothing for a bad request', async () => {
    await expect(checkout.pay('43', 5)).rejects.toBeInstanceOf(PaymentsValidationError);
    expect(fake.calls).toEqual([]);
  });

  it('applies the card rule: no checkoutUrl is a ServiceAPIError', async () => {
    fake.respondOnceWith('collections.card', { checkout_url: null });

    await expect(checkout.card(2500)).rejects.toMatchObject({ code: 'MISSING_FIELD' });
  });

  it('knows the references it handed out, and settle() changes their outcome', async () => {
    const moduleRef = await testingModule({
      defaultUsername: 'acme',
      defaultCallbackUrl: CALLBACK,
    });
    const client = moduleRef.get(PaymentsClient);
    const fakes = moduleRef.get(FakePayments);
    const { transactionReference } = await client.collections.mpesa({
      amount: 100,
      phoneNumber: '0712345678',
      narration: 'x',
    });

    fakes.settle(transactionReference, 'failed');

    await expect(client.transactions.status(transactionReference)).resolves.toMatchObject({
      transactionDetails: { status: 'failed' },
    });
    await expect(client.transactions.status('UNKNOWN1eR')).rejects.toMatchObject({
      status: 404,
      code: 'SERVICE_ERROR',
    });
  });

  it('provides PaymentsClient with defaults, and reset() forgets calls and scripts', async () => {
    const moduleRef = await testingModule({ walletType: 'USD' });
    const client = moduleRef.get(PaymentsClient);
    const fakes = moduleRef.get(FakePayments);
    const refund = {
      amount: 1000,
      phoneNumber: '0712345678',
      narration: 'R',
      callbackUrl: CALLBACK,
    };
    fakes.failWith('payouts.mpesa', new Error('down'));

    await expect(client.payouts.mpesa(refund)).rejects.toMatchObject({
      code: 'NETWORK_ERROR',
      cause: { message: 'down' },
    });
    fakes.reset();
    await expect(client.payouts.mpesa(refund)).resolves.toMatchObject({ status: 'SUCCESS' });
    expect(client.defaults).toEqual({
      username: undefined,
      callbackUrl: undefined,
      walletType: 'USD',
    });
    expect(fakes.calls).toHaveLength(1);
    expect(fakes.calls[0].body).toMatchObject({ wallet_type: 'USD' });
  });

  it('stands in for a named registration', async () => {
    @Injectable()
    class Treasury {
      constructor(@InjectPayouts('usd') readonly usd: PayoutsService) {}
    }
    const moduleRef = await Test.createTestingModule({
      imports: [PaymentsTestingModule.forRoot({ name: 'usd', walletType: 'USD' })],
      providers: [Treasury],
    }).compile();

    await moduleRef.get(Treasury).usd.mpesa({
      amount: 1000,
      phoneNumber: '0712345678',
      narration: 'R',
      callbackUrl: CALLBACK,
    });

    expect(moduleRef.get(FakePayments).calls[0].body).toMatchObject({ wallet_type: 'USD' });
  });

  it("gives each named registration's fake by its own token", async () => {
    @Injectable()
    class Treasury {
      constructor(
        @InjectPayouts('kes') readonly kes: PayoutsService,
        @InjectPayouts('usd') readonly usd: PayoutsService,
      ) {}
    }
    const moduleRef = await Test.createTestingModule({
      imports: [
        PaymentsTestingModule.forRoot({ name: 'kes', defaultCallbackUrl: CALLBACK }),
        PaymentsTestingModule.forRoot({ name: 'usd', walletType: 'USD' }),
      ],
      providers: [Treasury],
    }).compile();

    await moduleRef
      .get(Treasury)
      .kes.mpesa({ amount: 1000, phoneNumber: '0712345678', narration: 'R' });

    const kes = moduleRef.get<FakePayments>(getFakePaymentsToken('kes'));
    const usd = moduleRef.get<FakePayments>(getFakePaymentsToken('usd'));
    expect(kes).not.toBe(usd);
    expect(kes.calls).toHaveLength(1);
    expect(usd.calls).toHaveLength(0);
    expect(getFakePaymentsToken()).toBe(FakePayments);
  });

  it('runs the journal over the fake: replays, then the reconciler settles by look-up', async () => {
    const store = new InMemoryPaymentsJournal();
    const moduleRef = await testingModule({ journal: store, defaultCallbackUrl: CALLBACK });
    const payouts = moduleRef.get(PayoutsService);
    const request = { amount: 700, phoneNumber: '0712345678', narration: 'Refund 9' };

    const first = await payouts.mpesa(request, { idempotencyKey: 'refund-9' });
    const again = await payouts.mpesa(request, { idempotencyKey: 'refund-9' });
    const fakes = moduleRef.get(FakePayments);
    expect(again).toMatchObject({
      replayed: true,
      transactionReference: first.transactionReference,
    });
    expect(fakes.calls).toHaveLength(1);

    fakes.settle(first.transactionReference, 'success');
    const summary = await moduleRef.get(PaymentsReconciler).reconcile();
    expect(summary).toMatchObject({ checked: 1, changed: 1, lookupFailures: 0 });
    expect(summary.totals.succeeded?.KES).toMatchObject({ count: 1 });
    expect(await store.get('refund-9')).toMatchObject({ state: 'succeeded' });
    await moduleRef.close();
  });
});

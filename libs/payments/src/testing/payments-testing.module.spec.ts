import { Injectable } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { OrdersController } from '../../../../apps/demo/src/orders/orders.controller';
import { OrdersService } from '../../../../apps/demo/src/orders/orders.service';
import { OPERATION_CASES } from '../../../../test/support/fixtures';
import { PaymentsValidationError, ServiceAPIError } from '../errors';
import { PaymentsClient } from '../payments.client';
import { InjectPayouts } from '../payments.tokens';
import { PayoutsService } from '../payouts.service';
import { FakePayments } from './fake-payments';
import { PaymentsTestingModule } from './payments-testing.module';

describe('PaymentsTestingModule: the demo OrdersController tested without HTTP', () => {
  let controller: OrdersController;
  let fake: FakePayments;

  beforeEach(async () => {
    const moduleRef = await Test.createTestingModule({
      imports: [
        PaymentsTestingModule.forRoot({
          defaultUsername: 'demo-shop',
          defaultCallbackUrl: 'https://shop.example.com/webhooks/payments',
        }),
      ],
      controllers: [OrdersController],
      providers: [OrdersService],
    }).compile();
    controller = moduleRef.get(OrdersController);
    fake = moduleRef.get(FakePayments);
  });

  it('records the validated request, its wire body and the order id as idempotency key', async () => {
    const order = await controller.collectMpesa({
      amount: 1500,
      phoneNumber: '0712345678',
      narration: 'Order 42',
    });

    expect(order).toMatchObject({ status: 'PENDING', transactionReference: 'FAKE-1' });
    expect(fake.calls).toEqual([
      {
        operation: 'collections.mpesa',
        request: {
          username: 'demo-shop',
          amount: 1500,
          phoneNumber: '0712345678',
          narration: 'Order 42',
          callbackUrl: 'https://shop.example.com/webhooks/payments',
        },
        body: {
          username: 'demo-shop',
          amount: 1500,
          phone_number: '0712345678',
          narration: 'Order 42',
          callback_url: 'https://shop.example.com/webhooks/payments',
          channel: 'MOBILE_MONEY_KE',
        },
        idempotencyKey: order.id,
      },
    ]);
  });

  it('answers every operation with a canned success mapped like the real client', async () => {
    await controller.collectCard(OPERATION_CASES[1].request);
    await controller.collectPanAfrican(OPERATION_CASES[2].request);
    await controller.payoutMpesa(OPERATION_CASES[3].request);
    await controller.payoutPanAfrican(OPERATION_CASES[4].request);
    const merchant = await controller.payoutMerchant(OPERATION_CASES[5].request);

    expect(fake.calls.map((c) => c.operation)).toEqual([
      'collections.card',
      'collections.panAfrican',
      'payouts.mpesa',
      'payouts.panAfrican',
      'payouts.merchant',
    ]);
    expect(fake.callsOf('payouts.mpesa')[0].body).toMatchObject({ wallet_type: 'local' });
    expect(merchant.status).toBe('QUEUED');
    expect(
      controller
        .list()
        .map((o) => o.checkoutUrl)
        .filter(Boolean),
    ).toEqual(['https://checkout.fake.invalid/FAKE-1']);
  });

  it('returns programmed responses, once or always', async () => {
    fake.respondWith('collections.card', { checkoutUrl: 'https://pay.example.com/always' });
    fake.respondOnceWith('collections.card', {
      checkoutUrl: 'https://pay.example.com/first',
      status: 'CREATED',
    });

    const first = await controller.collectCard(OPERATION_CASES[1].request);
    const second = await controller.collectCard(OPERATION_CASES[1].request);

    expect([first.checkoutUrl, first.status]).toEqual(['https://pay.example.com/first', 'CREATED']);
    expect(second.checkoutUrl).toBe('https://pay.example.com/always');
  });

  it('rejects with a programmed error, and the controller sees it as in production', async () => {
    const error = new ServiceAPIError('payouts.merchant failed with HTTP 503', {
      operation: 'payouts.merchant',
      idempotencyKey: 'k',
      attempts: 3,
      status: 503,
    });
    fake.failOnceWith('payouts.merchant', error);

    await expect(controller.payoutMerchant(OPERATION_CASES[5].request)).rejects.toBe(error);
    expect(controller.list()[0].status).toBe('ERROR');
    await expect(controller.payoutMerchant(OPERATION_CASES[5].request)).resolves.toMatchObject({
      status: 'QUEUED',
    });
  });

  it('validates like the real client and records nothing for a bad request', async () => {
    await expect(
      controller.payoutMerchant({ ...OPERATION_CASES[5].request, phoneNumber: '0712345678' }),
    ).rejects.toBeInstanceOf(PaymentsValidationError);
    expect(fake.calls).toEqual([]);
  });

  it('applies the card rule: no checkoutUrl is a ServiceAPIError', async () => {
    fake.respondOnceWith('collections.card', { checkoutUrl: undefined });

    await expect(controller.collectCard(OPERATION_CASES[1].request)).rejects.toMatchObject({
      code: 'MISSING_FIELD',
    });
  });

  it('provides PaymentsClient with defaults, and reset() forgets calls and scripts', async () => {
    const moduleRef = await Test.createTestingModule({
      imports: [PaymentsTestingModule.forRoot({ walletType: 'USD' })],
    }).compile();
    const client = moduleRef.get(PaymentsClient);
    const fakes = moduleRef.get(FakePayments);
    fakes.failWith('payouts.mpesa', new Error('down'));

    await expect(client.payouts.mpesa(OPERATION_CASES[3].request)).rejects.toThrow('down');
    fakes.reset();
    await expect(client.payouts.mpesa(OPERATION_CASES[3].request)).resolves.toMatchObject({
      status: 'QUEUED',
    });
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

    await moduleRef.get(Treasury).usd.mpesa(OPERATION_CASES[3].request);

    expect(moduleRef.get(FakePayments).calls[0].body).toMatchObject({ wallet_type: 'USD' });
  });
});

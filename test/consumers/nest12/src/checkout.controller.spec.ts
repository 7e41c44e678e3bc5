import { Test } from '@nestjs/testing';
import type { TestingModule } from '@nestjs/testing';
import { ServiceAPIError } from '@malipo/nestjs';
import { FakePayments, PaymentsTestingModule } from '@malipo/nestjs/testing';
import { CheckoutController } from './checkout.controller.js';
import { PaymentOutcomes } from './payment-outcomes.js';

describe('CheckoutController', () => {
  let controller: CheckoutController;
  let fake: FakePayments;

  beforeEach(async () => {
    const moduleRef: TestingModule = await Test.createTestingModule({
      imports: [
        PaymentsTestingModule.forRoot({
          defaultUsername: 'shop',
          defaultCallbackUrl: 'https://shop.example.com/webhooks/payments',
        }),
      ],
      controllers: [CheckoutController],
      providers: [PaymentOutcomes],
    }).compile();
    controller = moduleRef.get(CheckoutController);
    fake = moduleRef.get(FakePayments);
  });

  it('starts an M-Pesa collection keyed by the order', async () => {
    const result = await controller.mpesa({
      orderId: '42',
      amount: 1500,
      phoneNumber: '0712345678',
    });

    expect(result.accepted).toBe(true);
    expect(result.reference).toMatch(/eR$/);
    const [call] = fake.callsOf('collections.mpesa');
    expect(call.idempotencyKey).toBe('order-42');
    expect(call.body).toMatchObject({
      username: 'shop',
      amount: 1500,
      phone_number: '0712345678',
      narration: 'Order 42',
      callback_url:
        'https://shop.example.com/webhooks/payments?malipo_key=order-42',
    });
  });

  it('passes a refusal of the service on', async () => {
    fake.respondOnceWith('collections.mpesa', {
      status: 400,
      success: false,
      message: 'no',
    });

    await expect(
      controller.mpesa({
        orderId: '43',
        amount: 1500,
        phoneNumber: '0712345678',
      }),
    ).rejects.toBeInstanceOf(ServiceAPIError);
  });
});

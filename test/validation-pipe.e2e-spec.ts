import { Body, Controller, INestApplication, Post, ValidationPipe } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import {
  CardCollectionRequest,
  MerchantPayoutRequest,
  MpesaCollectionRequest,
  MpesaPayoutRequest,
  PanAfricanCollectionRequest,
  PanAfricanPayoutRequest,
} from '@malipo/nestjs';
import { OPERATION_CASES } from '../libs/payments/spec-support/operation-cases';

const DTO_BY_OPERATION = {
  'collections.mpesa': MpesaCollectionRequest,
  'collections.card': CardCollectionRequest,
  'collections.panAfrican': PanAfricanCollectionRequest,
  'payouts.mpesa': MpesaPayoutRequest,
  'payouts.panAfrican': PanAfricanPayoutRequest,
  'payouts.merchant': MerchantPayoutRequest,
};

@Controller()
class EchoController {
  @Post('collections.mpesa') a(@Body() body: MpesaCollectionRequest) {
    return { type: body.constructor.name, body };
  }
  @Post('collections.card') b(@Body() body: CardCollectionRequest) {
    return { type: body.constructor.name, body };
  }
  @Post('collections.panAfrican') c(@Body() body: PanAfricanCollectionRequest) {
    return { type: body.constructor.name, body };
  }
  @Post('payouts.mpesa') d(@Body() body: MpesaPayoutRequest) {
    return { type: body.constructor.name, body };
  }
  @Post('payouts.panAfrican') e(@Body() body: PanAfricanPayoutRequest) {
    return { type: body.constructor.name, body };
  }
  @Post('payouts.merchant') f(@Body() body: MerchantPayoutRequest) {
    return { type: body.constructor.name, body };
  }
}

describe('request DTOs as @Body() with ValidationPipe', () => {
  let app: INestApplication;
  let url: string;

  beforeAll(async () => {
    const moduleRef = await Test.createTestingModule({ controllers: [EchoController] }).compile();
    app = moduleRef.createNestApplication({ logger: false });
    app.useGlobalPipes(
      new ValidationPipe({ transform: true, whitelist: true, forbidNonWhitelisted: true }),
    );
    await app.listen(0, '127.0.0.1');
    url = await app.getUrl();
  });
  afterAll(() => app.close());

  const post = (path: string, body: unknown) =>
    fetch(`${url}/${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });

  describe.each(OPERATION_CASES)('$operation', (testCase) => {
    it('accepts a valid body and builds the DTO class', async () => {
      const response = await post(testCase.operation, testCase.request);
      expect(response.status).toBe(201);
      expect(await response.json()).toEqual({
        type: DTO_BY_OPERATION[testCase.operation].name,
        body: testCase.request,
      });
    });

    it('lets username and callbackUrl be left to the client defaults', async () => {
      const { callbackUrl: _c, ...body } = testCase.request as Record<string, unknown>;
      delete body.username;
      expect((await post(testCase.operation, body)).status).toBe(201);
    });

    it('answers 400 naming the broken field', async () => {
      const response = await post(testCase.operation, {
        ...testCase.request,
        amount: 'ten',
        phoneNumber: 'x',
      });
      const payload = (await response.json()) as { message: string[] };
      expect(response.status).toBe(400);
      expect(payload.message).toEqual(expect.arrayContaining(['amount must be a number']));
      expect(payload.message.join(' ')).toContain('phoneNumber must be');
    });
  });
});

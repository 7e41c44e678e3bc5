import { Body, Controller, Post } from '@nestjs/common';
import type { INestApplication } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { DocumentBuilder, SwaggerModule } from '@nestjs/swagger';
import { MpesaCollectionRequest } from '../dto/collection-requests';
import { PanAfricanPayoutRequest } from '../dto/payout-requests';
import { TransferRequest } from '../dto/transfer-request';
import { applyPaymentsSwagger } from './payments-swagger';

@Controller('pay')
class PayController {
  @Post('mpesa')
  mpesa(@Body() request: MpesaCollectionRequest) {
    return request;
  }

  @Post('supplier')
  supplier(@Body() request: PanAfricanPayoutRequest) {
    return request;
  }

  @Post('transfer')
  transfer(@Body() request: TransferRequest) {
    return request;
  }
}

interface Schema {
  required?: string[];
  properties: Record<string, Record<string, unknown>>;
}

function documentSchemas(app: INestApplication): Record<string, Schema> {
  const document = SwaggerModule.createDocument(app, new DocumentBuilder().build());
  return document.components?.schemas as Record<string, Schema>;
}

describe('applyPaymentsSwagger: the library DTOs in a user Swagger document', () => {
  let app: INestApplication;
  let schemas: Record<string, Schema>;

  beforeAll(async () => {
    applyPaymentsSwagger({ callbackUrl: 'https://my.shop.example/hooks' });
    applyPaymentsSwagger({ callbackUrl: 'https://my.shop.example/hooks' }); // adds nothing
    const moduleRef = await Test.createTestingModule({ controllers: [PayController] }).compile();
    app = moduleRef.createNestApplication({ logger: false });
    await app.init();
    schemas = documentSchemas(app);
  });
  afterAll(async () => {
    applyPaymentsSwagger(); // back to the default example for other suites in this worker
    await app.close();
  });

  it('lists the M-Pesa collection fields in wire order with types, limits and formats', () => {
    const schema = schemas.MpesaCollectionRequest;
    expect(Object.keys(schema.properties)).toEqual([
      'username',
      'amount',
      'phoneNumber',
      'narration',
      'callbackUrl',
    ]);
    expect(schema.required).toEqual(['amount', 'phoneNumber', 'narration']);
    expect(schema.properties.amount).toMatchObject({
      type: 'number',
      minimum: 10,
      maximum: 250_000,
    });
    expect(schema.properties.phoneNumber).toMatchObject({
      type: 'string',
      pattern: '^(?:0[1-9]\\d{8}|\\+254[1-9]\\d{8})$',
      example: '0712345678',
    });
    expect(schema.properties.callbackUrl).toMatchObject({
      type: 'string',
      format: 'uri',
      maxLength: 2048,
      example: 'https://my.shop.example/hooks',
    });
    expect(schema.properties.narration).toMatchObject({ type: 'string', maxLength: 255 });
  });

  it('describes the pan-African payout: enums, currency, international phone, amount > 0', () => {
    const schema = schemas.PanAfricanPayoutRequest;
    expect(schema.properties.accountName).toMatchObject({ enum: ['bank', 'phone'] });
    expect(schema.properties.transactionChannel).toMatchObject({ enum: ['bank', 'phone'] });
    expect(schema.properties.walletType).toMatchObject({ enum: ['local', 'USD'] });
    expect(schema.properties.currency).toMatchObject({ pattern: '^[A-Z]{3}$' });
    expect(schema.properties.phoneNumber).toMatchObject({ pattern: '^\\+[1-9]\\d{6,14}$' });
    expect(schema.properties.amount).toMatchObject({ minimum: 0, exclusiveMinimum: true });
    expect(schema.properties.amount).not.toHaveProperty('maximum');
    expect(schema.properties.accountHolderName).toMatchObject({ type: 'string', maxLength: 255 });
    expect(schema.required).toEqual([
      'networkCode',
      'accountName',
      'accountHolderName',
      'accountNumber',
      'amount',
      'phoneNumber',
      'channelId',
      'narration',
      'currency',
      'transactionChannel',
      'providerName',
      'providerCode',
    ]);
    expect(Object.keys(schema.properties)).toEqual([
      'username',
      ...(schema.required ?? []).slice(0, 9),
      'callbackUrl',
      'transactionChannel',
      'providerName',
      'providerCode',
      'walletType',
    ]);
  });

  it('describes every property of every schema', () => {
    for (const [name, schema] of Object.entries(schemas)) {
      for (const [field, property] of Object.entries(schema.properties)) {
        expect({ name, field, type: typeof property.type }).toEqual({
          name,
          field,
          type: 'string',
        });
        expect({ name, field, description: typeof property.description }).toEqual({
          name,
          field,
          description: 'string',
        });
      }
    }
  });

  it('marks the optional fields of a transfer', () => {
    expect(schemas.TransferRequest.required).toEqual(['receiverUsername', 'amount', 'narration']);
    expect(schemas.TransferRequest.properties.walletType).toMatchObject({ enum: ['local', 'USD'] });
  });

  it('is idempotent: a later call only changes the callback example', () => {
    applyPaymentsSwagger({ callbackUrl: 'https://other.example/hooks' });
    const again = documentSchemas(app);
    expect(again.MpesaCollectionRequest.properties.callbackUrl.example).toBe(
      'https://other.example/hooks',
    );
    const { callbackUrl: _changed, ...rest } = again.MpesaCollectionRequest.properties;
    const { callbackUrl: _before, ...restBefore } = schemas.MpesaCollectionRequest.properties;
    expect(rest).toEqual(restBefore);
    expect(again.MpesaCollectionRequest.required).toEqual(schemas.MpesaCollectionRequest.required);
    expect(Object.keys(again.PanAfricanPayoutRequest.properties)).toEqual(
      Object.keys(schemas.PanAfricanPayoutRequest.properties),
    );
  });
});

import type { INestApplication } from '@nestjs/common';
import { ApiProperty, DocumentBuilder, SwaggerModule } from '@nestjs/swagger';
import {
  CardCollectionRequest,
  MerchantPayoutRequest,
  MpesaCollectionRequest,
  MpesaPayoutRequest,
  PanAfricanCollectionRequest,
  PanAfricanPayoutRequest,
} from '@malipo/nestjs';

const CALLBACK = 'https://shop.example.com/webhooks/payments';

/**
 * Example values of the library's request DTOs, for the OpenAPI page. The library does not depend
 * on @nestjs/swagger, so the demo describes the DTOs it uses.
 */
const DTO_EXAMPLES: [new () => object, Record<string, string | number>][] = [
  [
    MpesaCollectionRequest,
    {
      username: 'demo-shop',
      amount: 1500,
      phoneNumber: '0712345678',
      narration: 'Order 42',
      callbackUrl: CALLBACK,
    },
  ],
  [
    CardCollectionRequest,
    {
      username: 'demo-shop',
      amount: 2500,
      phoneNumber: '+254712345678',
      narration: 'Order 43',
      callbackUrl: CALLBACK,
    },
  ],
  [
    PanAfricanCollectionRequest,
    {
      username: 'demo-shop',
      accountName: 'phone',
      amount: 50,
      phoneNumber: '+233241234567',
      accountNumber: '0241234567',
      networkCode: 'MTN-GH',
      channelId: 'ch-17',
      narration: 'Order 44',
      currency: 'GHS',
      callbackUrl: CALLBACK,
      transactionChannel: 'phone',
      redirectUrl: 'https://shop.example.com/thanks',
    },
  ],
  [
    MpesaPayoutRequest,
    {
      phoneNumber: '0712345678',
      amount: 1000,
      narration: 'Refund 42',
      callbackUrl: CALLBACK,
      walletType: 'local',
    },
  ],
  [
    PanAfricanPayoutRequest,
    {
      username: 'demo-shop',
      networkCode: 'GTB-NG',
      accountName: 'bank',
      accountHolderName: 'Ada Obi',
      accountNumber: '0123456789',
      amount: 20000,
      phoneNumber: '+2348031234567',
      channelId: 'ch-9',
      narration: 'Supplier 7',
      currency: 'NGN',
      callbackUrl: CALLBACK,
      transactionChannel: 'bank',
      providerName: 'GTBank',
      providerCode: '058',
      walletType: 'USD',
    },
  ],
  [
    MerchantPayoutRequest,
    {
      username: 'demo-shop',
      amount: 750,
      phoneNumber: '+254712345678',
      narration: 'Rent',
      businessAccount: '888880',
      businessNumber: 'ACC-1',
      callbackUrl: CALLBACK,
      walletType: 'local',
    },
  ],
];
const FIELDS_WITH_DEFAULTS = new Set(['username', 'callbackUrl', 'walletType', 'redirectUrl']);

let described = false;

function describeLibraryDtos(): void {
  if (described) return;
  described = true;
  for (const [dto, example] of DTO_EXAMPLES) {
    for (const [field, value] of Object.entries(example)) {
      ApiProperty({
        example: value,
        type: typeof value === 'number' ? Number : String,
        required: !FIELDS_WITH_DEFAULTS.has(field),
      })(dto.prototype as object, field);
    }
  }
}

/** Serves the OpenAPI page at `/docs` and the document at `/docs-json`. */
export function setupOpenApi(app: INestApplication): void {
  describeLibraryDtos();
  const config = new DocumentBuilder()
    .setTitle('Malipo demo shop')
    .setDescription(
      'Orders paid and paid out through @malipo/nestjs; outcomes arrive at /webhooks/payments.',
    )
    .setVersion('1.0')
    .build();
  SwaggerModule.setup('docs', app, () => SwaggerModule.createDocument(app, config));
}

import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import type { ApiPropertyOptions } from '@nestjs/swagger';
import { BalancesRequest } from '../dto/lookups';
import { REQUEST_RULES } from '../dto/rules';
import { OPERATIONS } from '../operations';
import { WALLET_TYPES } from '../payments-options.interface';
import type { RequestField } from '../wire';

/** Options of {@link applyPaymentsSwagger}. */
export interface PaymentsSwaggerOptions {
  /** The callback URL shown in the examples; use your own webhook route so "Try it out" settles. */
  callbackUrl?: string;
}

const TEXT = { type: String, maxLength: REQUEST_RULES.maxTextLength } as const;
const URL_FIELD = { type: String, format: 'uri', maxLength: REQUEST_RULES.maxUrlLength } as const;
const PHONE_RULES = {
  kenyanPhone: REQUEST_RULES.kenyanPhone,
  kenyanInternationalPhone: REQUEST_RULES.kenyanInternationalPhone,
  internationalPhone: REQUEST_RULES.internationalPhone,
} as const;

/** The phone format and amount limits of each request class (interface document, 2.5 and 2.7). */
const CLASS_RULES: Record<
  string,
  { phone?: keyof typeof PHONE_RULES; amount?: { min: number; max?: number } }
> = {
  MpesaCollectionRequest: { phone: 'kenyanPhone', amount: REQUEST_RULES.kesMobileMoneyAmount },
  CardCollectionRequest: {
    phone: 'kenyanPhone',
    amount: REQUEST_RULES.cardAmount,
  },
  PanAfricanCollectionRequest: { phone: 'internationalPhone' },
  MpesaPayoutRequest: { phone: 'kenyanPhone', amount: REQUEST_RULES.kesMobileMoneyAmount },
  PanAfricanPayoutRequest: { phone: 'internationalPhone' },
  MerchantPayoutRequest: { phone: 'kenyanInternationalPhone' },
  TransferRequest: { phone: 'internationalPhone' },
};

/** Fields a caller may leave out: defaults apply, or the service does not need them. */
const OPTIONAL_FIELDS = new Set<RequestField>([
  'username',
  'callbackUrl',
  'walletType',
  'redirectUrl',
]);
const OPTIONAL_TRANSFER_FIELDS = new Set<RequestField>(['phoneNumber', 'currency', 'walletType']);

/** OpenAPI of each field: type, format and limits from `REQUEST_RULES`, a description, an example. */
function fieldSchema(
  className: string,
  field: RequestField,
  callbackUrl: string,
): ApiPropertyOptions {
  const rules = CLASS_RULES[className] ?? {};
  switch (field) {
    case 'amount': {
      const limits = rules.amount;
      return {
        type: Number,
        ...(limits
          ? {
              minimum: limits.min,
              ...(limits.max === undefined ? {} : { maximum: limits.max }),
            }
          : { minimum: 0, exclusiveMinimum: true }),
        description: limits ? 'Amount in KES' : 'Amount in the target currency, greater than 0',
        example: limits ? Math.max(limits.min, 1500) : 1500,
      };
    }
    case 'phoneNumber': {
      const phone = PHONE_RULES[rules.phone ?? 'internationalPhone'];
      return {
        type: String,
        pattern: phone.pattern.source,
        description: `Phone: ${phone.description}`,
        example:
          rules.phone === 'kenyanPhone'
            ? '0712345678'
            : rules.phone === 'kenyanInternationalPhone'
              ? '+254712345678'
              : '+2348031234567',
      };
    }
    case 'callbackUrl':
      return {
        ...URL_FIELD,
        description: 'Webhook URL; empty uses defaultCallbackUrl',
        example: callbackUrl,
      };
    case 'redirectUrl':
      return {
        ...URL_FIELD,
        description: 'Where the customer returns after checkout',
        example: 'https://shop.example.com/thanks',
      };
    case 'username':
      return {
        ...TEXT,
        description: 'Account username; empty uses defaultUsername',
        example: 'demo-shop',
      };
    case 'accountName':
    case 'transactionChannel':
      return {
        type: String,
        enum: [...REQUEST_RULES.accountTypes],
        description: 'bank or phone: the network type',
        example: 'phone',
      };
    case 'walletType':
      return {
        type: String,
        enum: [...WALLET_TYPES],
        description: "Funding wallet; absent uses the client's walletType",
        example: 'local',
      };
    case 'currency':
      return {
        type: String,
        pattern: '^[A-Z]{3}$',
        description: 'ISO 4217 currency code',
        example: 'NGN',
      };
    case 'businessAccount':
      return {
        ...TEXT,
        pattern: '^\\d+$',
        description: 'Paybill or Till number',
        example: '888880',
      };
    case 'businessNumber':
      return {
        ...TEXT,
        description: 'Account number for a Paybill, or N/A for a Till',
        example: 'N/A',
      };
    case 'transactionType':
      return {
        type: String,
        enum: [...REQUEST_RULES.networkTransactionTypes],
        description: 'receipt (collections) or withdrawal (payouts)',
        example: 'withdrawal',
      };
    case 'dialCode':
      return {
        type: String,
        pattern: REQUEST_RULES.dialCode.pattern.source,
        description: REQUEST_RULES.dialCode.description,
        example: '+234',
      };
    case 'reference':
      return {
        type: String,
        pattern: REQUEST_RULES.pathSegment.pattern.source,
        description: 'Transaction reference',
        example: '9BD103350408eR',
      };
    case 'networkCode':
    case 'channelId':
    case 'providerName':
    case 'providerCode':
      return { ...TEXT, description: `From network discovery (${field})` };
    default:
      return { ...TEXT, description: field };
  }
}

const described = new WeakSet<object>();

/**
 * Gives the library's request DTOs their OpenAPI metadata in your Swagger document: types,
 * required fields, limits and formats from the library's own rules, with examples. Call it once
 * before `SwaggerModule.createDocument`; calling it again changes nothing. Needs `@nestjs/swagger`
 * (an optional peer), which only this subpath loads.
 */
export function applyPaymentsSwagger(options: PaymentsSwaggerOptions = {}): void {
  const callbackUrl = options.callbackUrl ?? 'https://shop.example.com/webhooks/payments';
  for (const operation of Object.values(OPERATIONS)) {
    const requestClass: new () => object = operation.requestClass;
    const fields: readonly RequestField[] = operation.requestFields;
    if (described.has(requestClass)) continue;
    described.add(requestClass);
    const optional =
      requestClass.name === 'TransferRequest' ? OPTIONAL_TRANSFER_FIELDS : OPTIONAL_FIELDS;
    for (const field of fields) {
      const required = !optional.has(field) && !(requestClass === BalancesRequest);
      (required ? ApiProperty : ApiPropertyOptional)(
        fieldSchema(requestClass.name, field, callbackUrl),
      )(requestClass.prototype as object, field);
    }
  }
}

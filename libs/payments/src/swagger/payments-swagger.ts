import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import type { ApiPropertyOptions } from '@nestjs/swagger';
import { REQUEST_RULES } from '../request-rules';
import { OPERATIONS } from '../operations';
import { WALLET_TYPES } from '../payments-options.interface';
import type { RequestField } from '../wire';

/** Options of {@link applyPaymentsSwagger}. */
export interface PaymentsSwaggerOptions {
  /**
   * The `callbackUrl` example of every request schema. Use your own webhook route so that
   * "Try it out" in Swagger UI settles the payment it starts.
   * Default `https://shop.example.com/webhooks/payments`.
   */
  callbackUrl?: string;
}

const DEFAULT_CALLBACK_URL = 'https://shop.example.com/webhooks/payments';

type PhoneRule = 'kenyanPhone' | 'kenyanInternationalPhone' | 'internationalPhone';

const PHONE_EXAMPLES: Record<PhoneRule, string> = {
  kenyanPhone: '0712345678',
  kenyanInternationalPhone: '+254712345678',
  internationalPhone: '+2348031234567',
};

/** The amount and phone rules of a request class: the arguments of its `IsAmount`/`IsPhone`. */
interface ClassRules {
  amount: { min?: number; max?: number; positive?: boolean };
  /** Amounts in KES (the Kenyan operations); otherwise in the target currency. */
  kes: boolean;
  phone?: PhoneRule;
}

const KES_MOBILE_MONEY: ClassRules = {
  amount: REQUEST_RULES.kesMobileMoneyAmount,
  kes: true,
  phone: 'kenyanPhone',
};
const PAN_AFRICAN: ClassRules = {
  amount: { positive: true },
  kes: false,
  phone: 'internationalPhone',
};
const NO_AMOUNT: ClassRules = { amount: {}, kes: false };

/** Per operation, as in the DTOs (interface document, sections 2.5 and 2.7). */
const CLASS_RULES = new Map<new () => object, ClassRules>([
  [OPERATIONS.collectionsMpesa.requestClass, KES_MOBILE_MONEY],
  [
    OPERATIONS.collectionsCard.requestClass,
    { amount: REQUEST_RULES.cardAmount, kes: true, phone: 'kenyanPhone' },
  ],
  [OPERATIONS.collectionsPanAfrican.requestClass, PAN_AFRICAN],
  [OPERATIONS.payoutsMpesa.requestClass, KES_MOBILE_MONEY],
  [OPERATIONS.payoutsPanAfrican.requestClass, PAN_AFRICAN],
  [
    OPERATIONS.payoutsMerchant.requestClass,
    { amount: { positive: true }, kes: true, phone: 'kenyanInternationalPhone' },
  ],
  [OPERATIONS.transfersSend.requestClass, PAN_AFRICAN],
]);

/** Fields a caller may leave out: a client default applies, or the service does not need them. */
const OPTIONAL_FIELDS: ReadonlySet<RequestField> = new Set<RequestField>([
  'username',
  'callbackUrl',
  'walletType',
  'redirectUrl',
]);
const OPTIONAL_TRANSFER_FIELDS: ReadonlySet<RequestField> = new Set<RequestField>([
  'phoneNumber',
  'currency',
  'walletType',
]);

const TEXT = { type: String, maxLength: REQUEST_RULES.maxTextLength } as const;
const URL_FIELD = { type: String, format: 'uri', maxLength: REQUEST_RULES.maxUrlLength } as const;
const ACCOUNT_TYPE = { type: String, enum: [...REQUEST_RULES.accountTypes] } as const;

function amountSchema({ amount, kes }: ClassRules): ApiPropertyOptions {
  const bounds =
    amount.min === undefined
      ? { minimum: 0, exclusiveMinimum: true }
      : { minimum: amount.min, ...(amount.max === undefined ? {} : { maximum: amount.max }) };
  const unit = kes ? 'Amount in KES' : 'Amount in the target currency';
  const range =
    amount.min === undefined
      ? 'greater than 0'
      : amount.max === undefined
        ? `at least ${amount.min}`
        : `${amount.min} to ${amount.max}`;
  return { type: Number, ...bounds, description: `${unit}, ${range}`, example: 1500 };
}

/** Every request field's OpenAPI: type, format and limits from `REQUEST_RULES`, description, example. */
const FIELD_SCHEMAS: Record<
  RequestField,
  (rules: ClassRules, callbackUrl: string) => ApiPropertyOptions
> = {
  username: () => ({
    ...TEXT,
    description: 'Account username; empty uses defaultUsername',
    example: 'demo-shop',
  }),
  amount: (rules) => amountSchema(rules),
  phoneNumber: ({ phone = 'internationalPhone' }) => ({
    type: String,
    pattern: REQUEST_RULES[phone].pattern.source,
    description: `Phone: ${REQUEST_RULES[phone].description}`,
    example: PHONE_EXAMPLES[phone],
  }),
  narration: () => ({ ...TEXT, description: 'Description of the payment', example: 'Order 1042' }),
  callbackUrl: (_rules, callbackUrl) => ({
    ...URL_FIELD,
    description: 'Webhook URL of the outcome; empty uses defaultCallbackUrl',
    example: callbackUrl,
  }),
  accountName: () => ({ ...ACCOUNT_TYPE, description: 'Account type', example: 'phone' }),
  accountNumber: () => ({
    ...TEXT,
    description: 'Mobile-money or bank account number',
    example: '08031234567',
  }),
  accountHolderName: () => ({
    ...TEXT,
    description: "Recipient's full name",
    example: 'Ada Obi',
  }),
  networkCode: () => ({ ...TEXT, description: 'Network id, from network discovery' }),
  channelId: () => ({ ...TEXT, description: 'Channel id, from network discovery' }),
  currency: () => ({
    type: String,
    pattern: '^[A-Z]{3}$',
    description: 'ISO 4217 currency code, upper case',
    example: 'NGN',
  }),
  transactionChannel: () => ({
    ...ACCOUNT_TYPE,
    description: 'Network type, from network discovery',
    example: 'phone',
  }),
  redirectUrl: () => ({
    ...URL_FIELD,
    description: 'Where the customer returns after checkout',
    example: 'https://shop.example.com/thanks',
  }),
  providerName: () => ({ ...TEXT, description: 'Provider name, from network discovery' }),
  providerCode: () => ({ ...TEXT, description: 'Provider code, from network discovery' }),
  businessAccount: () => ({
    ...TEXT,
    pattern: '^\\d+$',
    description: 'Paybill or Till number, digits',
    example: '888880',
  }),
  businessNumber: () => ({
    ...TEXT,
    description: 'Account number for a Paybill, or N/A for a Till',
    example: 'N/A',
  }),
  walletType: () => ({
    type: String,
    enum: [...WALLET_TYPES],
    description: "Funding wallet; absent uses the client's walletType",
    example: 'local',
  }),
  receiverUsername: () => ({
    ...TEXT,
    description: 'Username of the receiving account',
    example: 'supplier-co',
  }),
  transactionType: () => ({
    type: String,
    enum: [...REQUEST_RULES.networkTransactionTypes],
    description: 'receipt (collections) or withdrawal (payouts)',
    example: 'withdrawal',
  }),
  dialCode: () => ({
    type: String,
    pattern: REQUEST_RULES.dialCode.pattern.source,
    description: `Country dial code: ${REQUEST_RULES.dialCode.description}`,
    example: '+234',
  }),
  reference: () => ({
    type: String,
    pattern: REQUEST_RULES.pathSegment.pattern.source,
    maxLength: 128,
    description: 'Transaction reference of a response or webhook',
    example: '9BD103350408eR',
  }),
};

/**
 * Gives the library's request DTOs (`MpesaCollectionRequest`, `PanAfricanPayoutRequest`,
 * `TransferRequest`, `NetworkDiscoveryRequest`...) their OpenAPI metadata, so that a
 * `@Body()` of one of them renders as a full schema in your Swagger document: types, required
 * fields, amount limits, phone patterns, enums, lengths, URL formats, descriptions and examples,
 * all from the library's own validation rules.
 *
 * Call it before `SwaggerModule.createDocument`. It is idempotent: calling it again applies the
 * same metadata (with the `callbackUrl` example of the latest call) and adds nothing.
 * It needs `@nestjs/swagger`, an optional peer that only this subpath (`@malipo/nestjs/swagger`)
 * loads; the main entry `@malipo/nestjs` never does.
 *
 * @example
 * ```ts
 * applyPaymentsSwagger({ callbackUrl: 'https://shop.example.com/webhooks/payments' });
 * const document = SwaggerModule.createDocument(app, new DocumentBuilder().build());
 * ```
 */
export function applyPaymentsSwagger(options: PaymentsSwaggerOptions = {}): void {
  const callbackUrl = options.callbackUrl ?? DEFAULT_CALLBACK_URL;
  for (const operation of Object.values(OPERATIONS)) {
    const requestClass: new () => object = operation.requestClass;
    const fields: readonly RequestField[] = operation.requestFields;
    const rules = CLASS_RULES.get(requestClass) ?? NO_AMOUNT;
    const optional =
      requestClass === OPERATIONS.transfersSend.requestClass
        ? OPTIONAL_TRANSFER_FIELDS
        : OPTIONAL_FIELDS;
    for (const field of fields) {
      const decorate = optional.has(field) ? ApiPropertyOptional : ApiProperty;
      decorate(FIELD_SCHEMAS[field](rules, callbackUrl))(requestClass.prototype as object, field);
    }
  }
}

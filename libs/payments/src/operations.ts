import {
  CardCollectionRequest,
  MpesaCollectionRequest,
  PanAfricanCollectionRequest,
} from './dto/collection-requests';
import {
  MerchantPayoutRequest,
  MpesaPayoutRequest,
  PanAfricanPayoutRequest,
} from './dto/payout-requests';
import type {
  CardCollectionResponse,
  MerchantPayoutResponse,
  MpesaCollectionResponse,
  MpesaPayoutResponse,
  PanAfricanCollectionResponse,
  PanAfricanPayoutResponse,
} from './dto/responses';
import type { RequestField, ResponseField } from './wire';

/** Names of the six operations, as `service.method`. */
export type PaymentsOperationName =
  | 'collections.mpesa'
  | 'collections.card'
  | 'collections.panAfrican'
  | 'payouts.mpesa'
  | 'payouts.panAfrican'
  | 'payouts.merchant';

/** One operation of section 4.1, as data. `TResponse` only types the result. */
export interface PaymentsOperation<TRequest extends object, TResponse> {
  readonly name: PaymentsOperationName;
  readonly path: string;
  /** Constant `channel` body value, when the operation sends one. */
  readonly channel?: string;
  readonly requestClass: new () => TRequest;
  /** Request fields in wire order. `username`/`callbackUrl` get the fallback rule, `walletType` the wallet rule. */
  readonly requestFields: readonly (RequestField & keyof TRequest)[];
  readonly responseFields: readonly ResponseField[];
  /** Response fields whose absence is an API error even on HTTP 2xx (rule 4.2.3). */
  readonly requiredResponseFields: readonly ResponseField[];
  /** Phantom marker tying the response type to the operation. */
  readonly responseType?: TResponse;
}

const COMMON_RESPONSE: readonly ResponseField[] = [
  'success',
  'message',
  'status',
  'transactionReference',
];
const COLLECTION_RESPONSE: readonly ResponseField[] = [
  ...COMMON_RESPONSE,
  'trackingId',
  'reference',
  'result',
  'paymentMethod',
];
const PAYOUT_RESPONSE: readonly ResponseField[] = [...COMMON_RESPONSE, 'channel', 'amount'];

function defineOperation<TRequest extends object, TResponse>(
  operation: PaymentsOperation<TRequest, TResponse>,
): PaymentsOperation<TRequest, TResponse> {
  return operation;
}

/** The six operations: paths of section 4.1, fields of 2.5/2.7, wire of the contract. */
export const OPERATIONS = {
  collectionsMpesa: defineOperation<MpesaCollectionRequest, MpesaCollectionResponse>({
    name: 'collections.mpesa',
    path: '/api/v2/payments',
    channel: 'MOBILE_MONEY_KE',
    requestClass: MpesaCollectionRequest,
    requestFields: ['username', 'amount', 'phoneNumber', 'narration', 'callbackUrl'],
    responseFields: COLLECTION_RESPONSE,
    requiredResponseFields: [],
  }),
  collectionsCard: defineOperation<CardCollectionRequest, CardCollectionResponse>({
    name: 'collections.card',
    path: '/api/v2/payments',
    channel: 'card',
    requestClass: CardCollectionRequest,
    requestFields: ['username', 'amount', 'phoneNumber', 'narration', 'callbackUrl'],
    responseFields: [...COLLECTION_RESPONSE, 'checkoutUrl'],
    requiredResponseFields: ['checkoutUrl'],
  }),
  collectionsPanAfrican: defineOperation<PanAfricanCollectionRequest, PanAfricanCollectionResponse>(
    {
      name: 'collections.panAfrican',
      path: '/api/v3/payments',
      requestClass: PanAfricanCollectionRequest,
      requestFields: [
        'username',
        'accountName',
        'amount',
        'phoneNumber',
        'accountNumber',
        'networkCode',
        'channelId',
        'narration',
        'currency',
        'callbackUrl',
        'transactionChannel',
        'redirectUrl',
      ],
      responseFields: [...COLLECTION_RESPONSE, 'checkoutUrl', 'bankAccount'],
      requiredResponseFields: [],
    },
  ),
  payoutsMpesa: defineOperation<MpesaPayoutRequest, MpesaPayoutResponse>({
    name: 'payouts.mpesa',
    path: '/api/v2/withdrawal',
    channel: 'MOBILE_MONEY_KE',
    requestClass: MpesaPayoutRequest,
    requestFields: ['phoneNumber', 'amount', 'narration', 'callbackUrl', 'walletType'],
    responseFields: PAYOUT_RESPONSE,
    requiredResponseFields: [],
  }),
  payoutsPanAfrican: defineOperation<PanAfricanPayoutRequest, PanAfricanPayoutResponse>({
    name: 'payouts.panAfrican',
    path: '/api/v2/payments',
    requestClass: PanAfricanPayoutRequest,
    requestFields: [
      'username',
      'networkCode',
      'accountName',
      'accountHolderName',
      'accountNumber',
      'amount',
      'phoneNumber',
      'channelId',
      'narration',
      'currency',
      'callbackUrl',
      'transactionChannel',
      'providerName',
      'providerCode',
      'walletType',
    ],
    responseFields: PAYOUT_RESPONSE,
    requiredResponseFields: [],
  }),
  payoutsMerchant: defineOperation<MerchantPayoutRequest, MerchantPayoutResponse>({
    name: 'payouts.merchant',
    path: '/api/v3/withdrawal',
    requestClass: MerchantPayoutRequest,
    requestFields: [
      'username',
      'amount',
      'phoneNumber',
      'narration',
      'businessAccount',
      'businessNumber',
      'callbackUrl',
      'walletType',
    ],
    responseFields: PAYOUT_RESPONSE,
    requiredResponseFields: [],
  }),
} as const;

/** Any of the six operations. */
export type AnyPaymentsOperation = (typeof OPERATIONS)[keyof typeof OPERATIONS];

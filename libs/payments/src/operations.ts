import {
  CardCollectionRequest,
  MpesaCollectionRequest,
  PanAfricanCollectionRequest,
} from './dto/collection-requests';
import { BalancesRequest, NetworkDiscoveryRequest, TransactionStatusRequest } from './dto/lookups';
import type { Balances, NetworkDiscovery, TransactionStatus } from './dto/lookups';
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
  TransferResponse,
} from './dto/responses';
import { TransferRequest } from './dto/transfer-request';
import { REQUEST_RULES } from './request-rules';
import type {
  AcceptanceDecoding,
  BodyEntry,
  RequestField,
  ResponseDecoding,
  ResponseField,
  WireShape,
} from './wire';

import type { PaymentsOperationName } from './operation-names';
export type { PaymentsOperationName } from './operation-names';

/** One operation of docs/wire-contract.md, as data. `TResponse` only types the result. */
export interface PaymentsOperation<TRequest extends object, TResponse> {
  readonly name: PaymentsOperationName;
  readonly method: 'GET' | 'POST';
  /** Path; `{field}` is replaced by the request's URL-encoded field. */
  readonly path: string;
  readonly requestClass: new () => TRequest;
  /**
   * Fields a caller may set, derived from the path, query and body. `username`/`callbackUrl` get
   * the fallback rule, `walletType` the wallet rule.
   */
  readonly requestFields: readonly (RequestField & keyof TRequest)[];
  /** Keys of the JSON body, in wire order (POST). */
  readonly body?: readonly BodyEntry[];
  /** Fields sent as query parameters (GET). */
  readonly query?: readonly RequestField[];
  readonly response: ResponseDecoding;
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
const PAYOUT_RESPONSE: AcceptanceDecoding = {
  kind: 'acceptance',
  fields: [...COMMON_RESPONSE, 'channel', 'amount'],
  amountFromRequest: true,
};

const KES = { key: 'currency', value: 'KES' } as const;
const KENYAN_LOCAL_PHONE = { field: 'phoneNumber', format: 'kenyanLocalPhone' } as const;
const CALLBACK_URL = { field: 'callbackUrl', format: 'correlatedUrl' } as const;
const USD_WALLET_ONLY = { field: 'walletType', format: 'usdWalletOnly' } as const;
/**
 * The amount, sent as the decimal its rule validated it as (`10 * 1.1` goes out as 11, not
 * 11.000000000000002): give the rule of the request class's `@IsAmount`.
 */
const amountOf = (rule: { readonly decimals: number }) =>
  ({ field: 'amount', decimals: rule.decimals }) as const;
/** Sent as the interface document says (section 4.0); the real service's examples say `MPESA`. */
const MOBILE_MONEY_KE = 'MOBILE_MONEY_KE';

const NETWORK: WireShape = {
  object: {
    id: 'string',
    code: 'string',
    updated_at: 'string',
    status: 'string',
    account_number_type: 'string',
    country: 'string',
    name: 'string',
    channel_ids: { listOf: 'string' },
    selected_channel_id: 'string',
    country_account_number_type: 'string',
    min_amount: 'number',
    max_amount: 'number',
  },
};
const WALLET_BALANCE: WireShape = {
  object: { balance: 'number', converted_balance: 'number', currency: 'string' },
};

/** The fields an operation takes from its caller: those of its path, query and body. */
function requestFieldsOf(
  layout: Pick<PaymentsOperation<object, unknown>, 'path' | 'query' | 'body'>,
) {
  const fields = new Set<RequestField>();
  for (const [, field] of layout.path.matchAll(/\{(\w+)\}/g)) fields.add(field as RequestField);
  for (const field of layout.query ?? []) fields.add(field);
  for (const entry of layout.body ?? []) {
    if (typeof entry === 'string') fields.add(entry);
    else if ('field' in entry) fields.add(entry.field);
  }
  return [...fields];
}

function defineOperation<TRequest extends object, TResponse>(
  operation: Omit<PaymentsOperation<TRequest, TResponse>, 'requestFields'>,
): PaymentsOperation<TRequest, TResponse> {
  const { response } = operation;
  // An amount answered from the request is answered as its body sent it.
  const sentAmount = operation.body?.find(
    (entry): entry is ReturnType<typeof amountOf> =>
      typeof entry === 'object' && 'decimals' in entry && entry.field === 'amount',
  );
  return {
    ...operation,
    response:
      response.kind === 'acceptance' && response.amountFromRequest === true && sentAmount
        ? { ...response, amountDecimals: sentAmount.decimals }
        : response,
    requestFields: requestFieldsOf(operation) as (RequestField & keyof TRequest)[],
  };
}

/** Every operation: paths, bodies and answers of docs/wire-contract.md, fields of the DTOs. */
export const OPERATIONS = {
  collectionsMpesa: defineOperation<MpesaCollectionRequest, MpesaCollectionResponse>({
    name: 'collections.mpesa',
    method: 'POST',
    path: '/api/v2/payments',
    requestClass: MpesaCollectionRequest,
    body: [
      'username',
      { key: 'channel', value: MOBILE_MONEY_KE },
      amountOf(REQUEST_RULES.kesMobileMoneyAmount),
      KENYAN_LOCAL_PHONE,
      'narration',
      KES,
      CALLBACK_URL,
    ],
    response: {
      kind: 'acceptance',
      fields: COLLECTION_RESPONSE,
      constants: { paymentMethod: MOBILE_MONEY_KE },
    },
  }),
  collectionsCard: defineOperation<CardCollectionRequest, CardCollectionResponse>({
    name: 'collections.card',
    method: 'POST',
    path: '/api/v2/payments',
    requestClass: CardCollectionRequest,
    body: [
      'username',
      { key: 'channel', value: 'card' },
      { key: 'payment_method', value: 'card' },
      amountOf(REQUEST_RULES.cardAmount),
      KENYAN_LOCAL_PHONE,
      'narration',
      KES,
      CALLBACK_URL,
    ],
    response: {
      kind: 'acceptance',
      fields: [...COLLECTION_RESPONSE, 'checkoutUrl'],
      constants: { paymentMethod: 'card' },
      required: ['checkoutUrl'],
    },
  }),
  collectionsPanAfrican: defineOperation<PanAfricanCollectionRequest, PanAfricanCollectionResponse>(
    {
      name: 'collections.panAfrican',
      method: 'POST',
      path: '/api/v3/payments',
      requestClass: PanAfricanCollectionRequest,
      body: [
        'username',
        'accountName',
        amountOf(REQUEST_RULES.anyCurrencyAmount),
        'phoneNumber',
        'accountNumber',
        'networkCode',
        'channelId',
        'narration',
        'currency',
        CALLBACK_URL,
        'transactionChannel',
        'redirectUrl',
      ],
      response: {
        kind: 'acceptance',
        fields: [...COLLECTION_RESPONSE, 'checkoutUrl', 'bankAccount'],
      },
    },
  ),
  payoutsMpesa: defineOperation<MpesaPayoutRequest, MpesaPayoutResponse>({
    name: 'payouts.mpesa',
    method: 'POST',
    path: '/api/v2/withdrawal',
    requestClass: MpesaPayoutRequest,
    body: [
      KENYAN_LOCAL_PHONE,
      amountOf(REQUEST_RULES.kesMobileMoneyAmount),
      'narration',
      CALLBACK_URL,
      { key: 'channel', value: MOBILE_MONEY_KE },
      KES,
      USD_WALLET_ONLY,
    ],
    response: { ...PAYOUT_RESPONSE, constants: { channel: MOBILE_MONEY_KE } },
  }),
  payoutsPanAfrican: defineOperation<PanAfricanPayoutRequest, PanAfricanPayoutResponse>({
    name: 'payouts.panAfrican',
    method: 'POST',
    path: '/api/v2/payments',
    requestClass: PanAfricanPayoutRequest,
    body: [
      'username',
      'networkCode',
      'accountName',
      'accountHolderName',
      'accountNumber',
      amountOf(REQUEST_RULES.anyCurrencyAmount),
      'phoneNumber',
      'channelId',
      'narration',
      'currency',
      CALLBACK_URL,
      'transactionChannel',
      // Tells this operation apart from the two collections on the same path.
      { key: 'channel', copyOf: 'transactionChannel' },
      'providerName',
      'providerCode',
      USD_WALLET_ONLY,
    ],
    response: PAYOUT_RESPONSE,
  }),
  payoutsMerchant: defineOperation<MerchantPayoutRequest, MerchantPayoutResponse>({
    name: 'payouts.merchant',
    method: 'POST',
    path: '/api/v3/withdrawal',
    requestClass: MerchantPayoutRequest,
    body: [
      'username',
      amountOf(REQUEST_RULES.kesAmount),
      KES,
      'phoneNumber',
      'narration',
      { key: 'transaction_channel', value: 'bank' },
      { key: 'channel', value: 'bank' },
      'businessAccount',
      'businessNumber',
      CALLBACK_URL,
      USD_WALLET_ONLY,
    ],
    response: PAYOUT_RESPONSE,
  }),
  transfersSend: defineOperation<TransferRequest, TransferResponse>({
    name: 'transfers.send',
    method: 'POST',
    path: '/api/v2/p2p',
    requestClass: TransferRequest,
    body: [
      'receiverUsername',
      amountOf(REQUEST_RULES.anyCurrencyAmount),
      'narration',
      'phoneNumber',
      'currency',
      USD_WALLET_ONLY,
    ],
    response: {
      kind: 'acceptance',
      fields: [...COMMON_RESPONSE, 'trackingId', 'reference', 'result'],
    },
  }),
  networksDiscover: defineOperation<NetworkDiscoveryRequest, NetworkDiscovery>({
    name: 'networks.discover',
    method: 'GET',
    path: '/v2/networks/grouped',
    requestClass: NetworkDiscoveryRequest,
    query: ['transactionType', 'dialCode'],
    response: {
      kind: 'record',
      shape: {
        object: {
          defaults: { listOf: NETWORK },
          mobile: { listOf: NETWORK },
          banks: { listOf: NETWORK },
        },
      },
    },
  }),
  transactionsStatus: defineOperation<TransactionStatusRequest, TransactionStatus>({
    name: 'transactions.status',
    method: 'GET',
    path: '/api/v1/status/{reference}',
    requestClass: TransactionStatusRequest,
    response: {
      kind: 'record',
      // A record of another transaction would confirm what the one asked for never did.
      echoes: { key: 'code', requestField: 'reference' },
      shape: {
        object: {
          id: 'string',
          account_id: 'string',
          billing_currency: 'string',
          currency: 'string',
          code: 'string',
          conversion_rate: 'number',
          amount: 'number',
          billing_currency_amount: 'number',
          balance: 'number',
          type: 'string',
          transaction_details: {
            object: {
              payer: 'string',
              merchant_id: 'string',
              phone_number: 'string',
              processed_at: { object: { seconds: 'number', nanos: 'number' } },
              reason: 'string',
              channel: 'string',
              account_number: 'string',
              status: 'string',
              receiver: 'string',
              email_address: 'string',
            },
          },
          transaction_category: 'string',
          user_id: 'string',
          request_metadata: 'unknown',
          created_at: 'string',
        },
      },
    },
  }),
  balancesAll: defineOperation<BalancesRequest, Balances>({
    name: 'balances.all',
    method: 'GET',
    path: '/api/v1/accounts/{username}/all_balances',
    requestClass: BalancesRequest,
    response: {
      kind: 'record',
      shape: { object: { fiat_balance: WALLET_BALANCE, onchain_balance: WALLET_BALANCE } },
      // A balance left out would read as `undefined`, which no amount exceeds. The local wallet
      // is every account's; an account without a USD wallet may be answered without one (`?`).
      required: [
        'fiat_balance.balance',
        'fiat_balance.currency',
        'onchain_balance?.balance',
        'onchain_balance?.currency',
      ],
      // docs/wire-contract.md: the examples show KES and USD, read as the local and the USD wallet.
      aliases: { local: 'fiatBalance', usd: 'onchainBalance' },
    },
  }),
} as const;

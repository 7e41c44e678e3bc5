/**
 * One valid request per operation and the exact wire body the contract expects for it, with the
 * success responses of the contract. Shared by the library specs and the e2e tests.
 */
export const CALLBACK_URL = 'https://merchant.example.com/payments/webhook';

export const OPERATION_CASES = [
  {
    operation: 'collections.mpesa',
    service: 'collections',
    method: 'mpesa',
    path: '/api/v2/payments',
    kind: 'collection',
    request: {
      username: 'acme',
      amount: 1500,
      phoneNumber: '0712345678',
      narration: 'Order 42',
      callbackUrl: CALLBACK_URL,
    },
    wire: {
      username: 'acme',
      amount: 1500,
      phone_number: '0712345678',
      narration: 'Order 42',
      callback_url: CALLBACK_URL,
      channel: 'MOBILE_MONEY_KE',
    },
  },
  {
    operation: 'collections.card',
    service: 'collections',
    method: 'card',
    path: '/api/v2/payments',
    kind: 'card',
    request: {
      username: 'acme',
      amount: 2500,
      phoneNumber: '+254712345678',
      narration: 'Order 43',
      callbackUrl: CALLBACK_URL,
    },
    wire: {
      username: 'acme',
      amount: 2500,
      phone_number: '+254712345678',
      narration: 'Order 43',
      callback_url: CALLBACK_URL,
      channel: 'card',
    },
  },
  {
    operation: 'collections.panAfrican',
    service: 'collections',
    method: 'panAfrican',
    path: '/api/v3/payments',
    kind: 'collection',
    request: {
      username: 'acme',
      accountName: 'phone',
      amount: 50,
      phoneNumber: '+233241234567',
      accountNumber: '0241234567',
      networkCode: 'MTN-GH',
      channelId: 'ch-17',
      narration: 'Order 44',
      currency: 'GHS',
      callbackUrl: CALLBACK_URL,
      transactionChannel: 'phone',
    },
    wire: {
      username: 'acme',
      account_name: 'phone',
      amount: 50,
      phone_number: '+233241234567',
      account_number: '0241234567',
      network_code: 'MTN-GH',
      channel_id: 'ch-17',
      narration: 'Order 44',
      currency: 'GHS',
      callback_url: CALLBACK_URL,
      transaction_channel: 'phone',
    },
  },
  {
    operation: 'payouts.mpesa',
    service: 'payouts',
    method: 'mpesa',
    path: '/api/v2/withdrawal',
    kind: 'payout',
    request: {
      phoneNumber: '0712345678',
      amount: 1000,
      narration: 'Refund 42',
      callbackUrl: CALLBACK_URL,
    },
    wire: {
      phone_number: '0712345678',
      amount: 1000,
      narration: 'Refund 42',
      callback_url: CALLBACK_URL,
      wallet_type: 'local',
      channel: 'MOBILE_MONEY_KE',
    },
  },
  {
    operation: 'payouts.panAfrican',
    service: 'payouts',
    method: 'panAfrican',
    path: '/api/v2/payments',
    kind: 'payout',
    request: {
      username: 'acme',
      networkCode: 'GTB-NG',
      accountName: 'bank',
      accountHolderName: 'Ada Obi',
      accountNumber: '0123456789',
      amount: 20000,
      phoneNumber: '+2348031234567',
      channelId: 'ch-9',
      narration: 'Supplier 7',
      currency: 'NGN',
      callbackUrl: CALLBACK_URL,
      transactionChannel: 'bank',
      providerName: 'GTBank',
      providerCode: '058',
      walletType: 'USD',
    },
    wire: {
      username: 'acme',
      network_code: 'GTB-NG',
      account_name: 'bank',
      account_holder_name: 'Ada Obi',
      account_number: '0123456789',
      amount: 20000,
      phone_number: '+2348031234567',
      channel_id: 'ch-9',
      narration: 'Supplier 7',
      currency: 'NGN',
      callback_url: CALLBACK_URL,
      transaction_channel: 'bank',
      provider_name: 'GTBank',
      provider_code: '058',
      wallet_type: 'USD',
    },
  },
  {
    operation: 'payouts.merchant',
    service: 'payouts',
    method: 'merchant',
    path: '/api/v3/withdrawal',
    kind: 'payout',
    request: {
      username: 'acme',
      amount: 750,
      phoneNumber: '+254712345678',
      narration: 'Rent',
      businessAccount: '888880',
      businessNumber: 'ACC-1',
      callbackUrl: CALLBACK_URL,
    },
    wire: {
      username: 'acme',
      amount: 750,
      phone_number: '+254712345678',
      narration: 'Rent',
      business_account: '888880',
      business_number: 'ACC-1',
      callback_url: CALLBACK_URL,
      wallet_type: 'local',
    },
  },
] as const;

export type OperationCase = (typeof OPERATION_CASES)[number];

/** A success body of the contract for each kind of response. */
export function successBody(kind: OperationCase['kind']): Record<string, unknown> {
  const common = {
    success: true,
    message: 'Accepted',
    transaction_reference: 'TX-1001',
  };
  switch (kind) {
    case 'collection':
      return {
        ...common,
        status: 'PENDING',
        tracking_id: 'TRK-1',
        reference: 'REF-1',
        result: { queued: true },
        payment_method: 'MOBILE_MONEY_KE',
      };
    case 'card':
      return {
        ...common,
        status: 'PENDING',
        tracking_id: 'TRK-2',
        reference: 'REF-2',
        result: null,
        payment_method: 'card',
        checkout_url: 'https://pay.example.com/checkout/TX-1001',
      };
    case 'payout':
      return { ...common, status: 'QUEUED', channel: 'MOBILE_MONEY_KE', amount: 1000 };
  }
}

/** Calls the operation of a case on a client-shaped object. */
export function callOperation(
  client: { collections: object; payouts: object },
  testCase: Pick<OperationCase, 'service' | 'method'>,
  request: unknown,
  options?: { idempotencyKey?: string },
): Promise<Record<string, unknown>> {
  const group = client[testCase.service] as Record<
    string,
    (r: unknown, o?: unknown) => Promise<Record<string, unknown>>
  >;
  return group[testCase.method].call(group, request, options);
}

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
      channel: 'MOBILE_MONEY_KE',
      amount: 1500,
      phone_number: '0712345678',
      narration: 'Order 42',
      currency: 'KES',
      callback_url: CALLBACK_URL,
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
      channel: 'card',
      payment_method: 'card',
      amount: 2500,
      phone_number: '0712345678',
      narration: 'Order 43',
      currency: 'KES',
      callback_url: CALLBACK_URL,
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
      networkCode: '460f3956-b9aa-4e94-916b-4f357aae3bed',
      channelId: 'b66a04e8-dee1-4874-aa3c-a58717718757',
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
      network_code: '460f3956-b9aa-4e94-916b-4f357aae3bed',
      channel_id: 'b66a04e8-dee1-4874-aa3c-a58717718757',
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
      channel: 'MOBILE_MONEY_KE',
      currency: 'KES',
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
      networkCode: '9b2eb62d-555f-4467-8135-16d34d1a5bcf',
      accountName: 'bank',
      accountHolderName: 'Ada Obi',
      accountNumber: '0123456789',
      amount: 20000,
      phoneNumber: '+2348031234567',
      channelId: 'ba3ec5eb-2a3b-4377-b9fc-78d744eb54c2',
      narration: 'Supplier 7',
      currency: 'NGN',
      callbackUrl: CALLBACK_URL,
      transactionChannel: 'bank',
      providerName: 'Guaranty Trust Bank',
      providerCode: '058',
      walletType: 'USD',
    },
    wire: {
      username: 'acme',
      network_code: '9b2eb62d-555f-4467-8135-16d34d1a5bcf',
      account_name: 'bank',
      account_holder_name: 'Ada Obi',
      account_number: '0123456789',
      amount: 20000,
      phone_number: '+2348031234567',
      channel_id: 'ba3ec5eb-2a3b-4377-b9fc-78d744eb54c2',
      narration: 'Supplier 7',
      currency: 'NGN',
      callback_url: CALLBACK_URL,
      transaction_channel: 'bank',
      channel: 'bank',
      provider_name: 'Guaranty Trust Bank',
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
      currency: 'KES',
      phone_number: '+254712345678',
      narration: 'Rent',
      transaction_channel: 'bank',
      channel: 'bank',
      business_account: '888880',
      business_number: 'ACC-1',
      callback_url: CALLBACK_URL,
    },
  },
] as const;

export type OperationCase = (typeof OPERATION_CASES)[number];

/** A success answer of the real service (docs/wire-contract.md) for each kind of response. */
export function successBody(kind: OperationCase['kind']): Record<string, unknown> {
  switch (kind) {
    case 'collection':
      return {
        payment_method: 'mobile',
        status: 'SUCCESS',
        transaction_reference: '9BD103350408eR',
        success: true,
        message: 'Processed successfully',
        trackingId: '',
        reference: '',
        result: null,
      };
    case 'card':
      return {
        payment_method: 'mobile',
        status: 'SUCCESS',
        checkout_url: 'https://pay.example.com/checkout/9BD114038965eR',
        transaction_reference: '9BD114038965eR',
        success: true,
        message: 'Payment request sent successfully',
        trackingId: '',
        reference: '',
        result: null,
      };
    case 'payout':
      return {
        success: true,
        correlator_id: '9BD141203407eW',
        message: 'Transaction request sent successfully',
        status: 'SUCCESS',
        channel: '',
        amount: 0,
      };
  }
}

/** `wire` with the call's idempotency key on its callback URL, as the client sends it by default. */
export function correlatedWire(
  wire: Record<string, unknown>,
  idempotencyKey: string,
): Record<string, unknown> {
  const url = new URL(String(wire.callback_url));
  url.searchParams.set('malipo_key', idempotencyKey);
  return { ...wire, callback_url: url.toString() };
}

/** Calls the operation of a case on a client-shaped object. */
export function callOperation(
  client: { collections: object; payouts: object },
  testCase: Pick<OperationCase, 'service' | 'method'>,
  request: unknown,
  options?: unknown,
): Promise<Record<string, unknown>> {
  const group = client[testCase.service] as Record<
    string,
    (r: unknown, o?: unknown) => Promise<Record<string, unknown>>
  >;
  return group[testCase.method].call(group, request, options);
}

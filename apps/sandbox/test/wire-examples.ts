/**
 * One valid v2 wire body per money operation, exactly as the wire contract's "Request bodies"
 * table spells it: the sandbox specs' own examples (independent of the library's fixtures).
 * Network ids are those of `src/networks.ts`, hard-coded on purpose: they must stay stable.
 */
/** Nothing listens there: specs that care pass their own receiver's URL. Keeps specs offline. */
export const CALLBACK_URL = 'http://127.0.0.1:9/payments/webhook';

/** GH, MTN Mobile Money (phone; 1 to 50,000 GHS). */
export const GH_MTN = {
  id: '460f3956-b9aa-4e94-916b-4f357aae3bed',
  code: 'MTN_GH',
  name: 'MTN Mobile Money',
  channelIds: ['9980002a-6a74-422a-bc7c-350a46ea664a', 'b66a04e8-dee1-4874-aa3c-a58717718757'],
  minAmount: 1,
  maxAmount: 50_000,
} as const;

/** NG, Guaranty Trust Bank (bank; 100 to 10,000,000 NGN). */
export const NG_GTBANK = {
  id: '9b2eb62d-555f-4467-8135-16d34d1a5bcf',
  code: '058',
  name: 'Guaranty Trust Bank',
  channelIds: ['6a5c9945-a04c-4d3f-a8bf-c3af4aab84cb', 'ba3ec5eb-2a3b-4377-b9fc-78d744eb54c2'],
  minAmount: 100,
  maxAmount: 10_000_000,
} as const;

/** TZ, CRDB Bank: withdrawal only. */
export const TZ_CRDB_ID = 'de6303ea-2268-4f9e-bb07-cdc72ddfda72';

export const WIRE_EXAMPLES = {
  'collections.mpesa': {
    path: '/api/v2/payments',
    body: {
      username: 'acme',
      channel: 'MOBILE_MONEY_KE',
      amount: 1500,
      phone_number: '0712345678',
      narration: 'Order 42',
      currency: 'KES',
      callback_url: CALLBACK_URL,
    },
  },
  'collections.card': {
    path: '/api/v2/payments',
    body: {
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
  'collections.panAfrican': {
    path: '/api/v3/payments',
    body: {
      username: 'acme',
      account_name: 'phone',
      amount: 50,
      phone_number: '+233241234567',
      account_number: '0241234567',
      network_code: GH_MTN.id,
      channel_id: GH_MTN.channelIds[1],
      narration: 'Order 44',
      currency: 'GHS',
      callback_url: CALLBACK_URL,
      transaction_channel: 'phone',
    },
  },
  'payouts.mpesa': {
    path: '/api/v2/withdrawal',
    body: {
      phone_number: '0712345678',
      amount: 1000,
      narration: 'Refund 42',
      callback_url: CALLBACK_URL,
      channel: 'MOBILE_MONEY_KE',
      currency: 'KES',
    },
  },
  'payouts.panAfrican': {
    path: '/api/v2/payments',
    body: {
      username: 'acme',
      network_code: NG_GTBANK.id,
      account_name: 'bank',
      account_holder_name: 'Ada Obi',
      account_number: '0123456789',
      amount: 20000,
      phone_number: '+2348031234567',
      channel_id: NG_GTBANK.channelIds[1],
      narration: 'Supplier 7',
      currency: 'NGN',
      callback_url: CALLBACK_URL,
      transaction_channel: 'bank',
      channel: 'bank',
      provider_name: NG_GTBANK.name,
      provider_code: NG_GTBANK.code,
      wallet_type: 'USD',
    },
  },
  'payouts.merchant': {
    path: '/api/v3/withdrawal',
    body: {
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
  'transfers.send': {
    path: '/api/v2/p2p',
    body: {
      receiver_username: 'beta',
      amount: 300,
      narration: 'Family breakfast',
      phone_number: '+254700000001',
    },
  },
} as const;

export type ExampleOperation = keyof typeof WIRE_EXAMPLES;

/**
 * The payment networks of the sandbox's network discovery (`GET /v2/networks/grouped`), as data.
 * Pan-African collections and payouts must name one of them (`network_code` = `id`, `channel_id`
 * one of `channelIds`, `transaction_channel` = `accountNumberType`, payout `provider_name` /
 * `provider_code` = `name` / `code`) and an amount within `minAmount`..`maxAmount`.
 *
 * Ids are fixed (uuid-shaped, derived once from the names), so tests can hard-code them. Amounts
 * are in the country's currency: KE KES, UG UGX, TZ TZS, NG NGN, GH GHS, ZA ZAR, RW RWF.
 */
export type NetworkTransactionType = 'receipt' | 'withdrawal';
export type AccountNumberType = 'phone' | 'bank';

export interface SandboxNetwork {
  readonly id: string;
  readonly code: string;
  readonly name: string;
  /** ISO 3166 alpha-2. */
  readonly country: string;
  /** The `dial_code` query value that lists it. */
  readonly dialCode: string;
  readonly accountNumberType: AccountNumberType;
  /** The second one is the `selected_channel_id`. */
  readonly channelIds: readonly [string, string];
  readonly minAmount: number;
  readonly maxAmount: number;
  /** `receipt`: usable by collections; `withdrawal`: by payouts. */
  readonly transactionTypes: readonly NetworkTransactionType[];
}

export const NETWORKS: readonly SandboxNetwork[] = [
  // KE, +254, KES
  {
    id: 'd4a5b3e5-5edc-4f9b-a910-dd8974beef85',
    code: 'MPESA',
    name: 'M-Pesa',
    country: 'KE',
    dialCode: '+254',
    accountNumberType: 'phone',
    channelIds: ['3ac1f0e5-eeaa-4648-92db-5e782af86c68', 'd72dc343-bb52-497c-b227-9b5ae3c2a5db'],
    minAmount: 10,
    maxAmount: 250000,
    transactionTypes: ['receipt', 'withdrawal'],
  },
  {
    id: '1c4bebc3-9405-448a-8f7f-4e5099140e77',
    code: 'AIRTEL_KE',
    name: 'Airtel Money',
    country: 'KE',
    dialCode: '+254',
    accountNumberType: 'phone',
    channelIds: ['dd70cdfd-1220-4649-9e1a-4cecf4e28a57', 'ff78ce98-426b-4c0c-aa79-1d9d7fef0a3f'],
    minAmount: 10,
    maxAmount: 150000,
    transactionTypes: ['receipt', 'withdrawal'],
  },
  {
    id: '557a0a63-1a57-4854-8fac-884faebfb2fb',
    code: '68',
    name: 'Equity Bank',
    country: 'KE',
    dialCode: '+254',
    accountNumberType: 'bank',
    channelIds: ['8e9fe5d9-da47-4d95-bf9e-2ec57538ca7e', '2b19ce02-62e7-42db-89cb-0c7f82a352e0'],
    minAmount: 100,
    maxAmount: 1000000,
    transactionTypes: ['receipt', 'withdrawal'],
  },
  {
    id: '30861896-cbbe-4b36-8b16-fe8aa9b9e7c3',
    code: '01',
    name: 'KCB Bank',
    country: 'KE',
    dialCode: '+254',
    accountNumberType: 'bank',
    channelIds: ['c7c12764-82dd-4282-a396-4a1dbee01c9d', 'ea974b02-c40a-42cf-9844-d82657d2dfc7'],
    minAmount: 100,
    maxAmount: 1000000,
    transactionTypes: ['receipt', 'withdrawal'],
  },
  // UG, +256, UGX
  {
    id: 'f3746484-6bcb-4721-8bd4-15452e36d10b',
    code: 'MTN_UG',
    name: 'MTN Mobile Money',
    country: 'UG',
    dialCode: '+256',
    accountNumberType: 'phone',
    channelIds: ['fffe0f31-0c6a-46da-aafd-8c236fe38357', 'ed9c1c6d-41a0-49a5-8886-9e1c1da9ef71'],
    minAmount: 15000,
    maxAmount: 3000000,
    transactionTypes: ['receipt', 'withdrawal'],
  },
  {
    id: '6119ef75-d0ed-4554-8715-73591ca5dc58',
    code: 'AIRTEL_UG',
    name: 'Airtel Money',
    country: 'UG',
    dialCode: '+256',
    accountNumberType: 'phone',
    channelIds: ['86f2bc26-2172-494a-beb7-45286b544267', '4199b950-303e-4f00-8c12-8d6365bc0f60'],
    minAmount: 15000,
    maxAmount: 3000000,
    transactionTypes: ['receipt', 'withdrawal'],
  },
  {
    id: 'fb06aed8-bb3f-43eb-a9bd-ec721020a751',
    code: '031',
    name: 'Stanbic Bank Uganda',
    country: 'UG',
    dialCode: '+256',
    accountNumberType: 'bank',
    channelIds: ['b52ec613-8cd3-4f05-b042-35e9df596786', '3bab8c03-3b29-44f6-999b-7ecd4e55256f'],
    minAmount: 15000,
    maxAmount: 36000000,
    transactionTypes: ['receipt', 'withdrawal'],
  },
  {
    id: '8ea0ec57-97c7-41cc-8985-16337a138374',
    code: '040',
    name: 'Centenary Bank',
    country: 'UG',
    dialCode: '+256',
    accountNumberType: 'bank',
    channelIds: ['28d3afc7-3629-429b-9755-e25ea306b055', '0d8c9886-32fd-402c-bbe9-b53ed95ad148'],
    minAmount: 15000,
    maxAmount: 36000000,
    transactionTypes: ['receipt', 'withdrawal'],
  },
  // TZ, +255, TZS
  {
    id: 'f8b1a56d-62cf-456d-a129-198168109df1',
    code: 'VODACOM_TZ',
    name: 'M-Pesa Tanzania',
    country: 'TZ',
    dialCode: '+255',
    accountNumberType: 'phone',
    channelIds: ['6aceba84-3f65-48a8-b9d4-6cb6bd0efe6f', '7061c1e1-a2fd-4c1a-93f7-c005e7c81203'],
    minAmount: 1000,
    maxAmount: 5000000,
    transactionTypes: ['receipt', 'withdrawal'],
  },
  {
    id: '283cfe27-583e-4b73-834b-321bb8d006d6',
    code: 'TIGO_TZ',
    name: 'Tigo Pesa',
    country: 'TZ',
    dialCode: '+255',
    accountNumberType: 'phone',
    channelIds: ['43fad4fe-c72b-46b9-8ba2-372b64970f8f', '22e8fbe7-e4c6-4f2b-b022-0a5b2806637f'],
    minAmount: 1000,
    maxAmount: 5000000,
    transactionTypes: ['receipt', 'withdrawal'],
  },
  {
    id: 'de6303ea-2268-4f9e-bb07-cdc72ddfda72',
    code: '003',
    name: 'CRDB Bank',
    country: 'TZ',
    dialCode: '+255',
    accountNumberType: 'bank',
    channelIds: ['2738bd07-97c5-41b8-813a-ec8c01297acd', 'c6ba7c23-3036-4d58-b5b7-2e73ab876f17'],
    minAmount: 10000,
    maxAmount: 50000000,
    transactionTypes: ['withdrawal'],
  },
  {
    id: 'e4dd8008-3bce-413d-bc4e-a4173e8aea4f',
    code: '015',
    name: 'NMB Bank',
    country: 'TZ',
    dialCode: '+255',
    accountNumberType: 'bank',
    channelIds: ['f9f0e381-6139-41d2-b2c4-23d130167a76', '60f5aff4-18ad-49dc-bb63-5036685737f8'],
    minAmount: 10000,
    maxAmount: 50000000,
    transactionTypes: ['withdrawal'],
  },
  // NG, +234, NGN
  {
    id: '4a5726bd-9969-4ec0-804e-897d2d9e887f',
    code: '100002',
    name: 'Paga',
    country: 'NG',
    dialCode: '+234',
    accountNumberType: 'phone',
    channelIds: ['e49a27d5-43d3-405b-a969-b360786792b9', 'e0b5c187-d24c-42c6-9720-be1faae0a397'],
    minAmount: 100,
    maxAmount: 5000000,
    transactionTypes: ['receipt', 'withdrawal'],
  },
  {
    id: '0b33d59c-c506-4291-afe3-264916f999e8',
    code: '120003',
    name: 'MTN MoMo PSB',
    country: 'NG',
    dialCode: '+234',
    accountNumberType: 'phone',
    channelIds: ['19022178-968f-44b8-bb91-a1ed57cd8e73', 'b8f07e4f-62dd-4798-ac8a-a0d38502a059'],
    minAmount: 100,
    maxAmount: 5000000,
    transactionTypes: ['receipt', 'withdrawal'],
  },
  {
    id: '3f42358d-67d3-4f77-a846-ed164ec11549',
    code: '100004',
    name: 'OPay',
    country: 'NG',
    dialCode: '+234',
    accountNumberType: 'bank',
    channelIds: ['b03e1dde-087e-4527-9d93-c10616a0b15b', 'b98bf940-e332-4885-9b87-303920fff268'],
    minAmount: 100,
    maxAmount: 10000000,
    transactionTypes: ['receipt', 'withdrawal'],
  },
  {
    id: '9b2eb62d-555f-4467-8135-16d34d1a5bcf',
    code: '058',
    name: 'Guaranty Trust Bank',
    country: 'NG',
    dialCode: '+234',
    accountNumberType: 'bank',
    channelIds: ['6a5c9945-a04c-4d3f-a8bf-c3af4aab84cb', 'ba3ec5eb-2a3b-4377-b9fc-78d744eb54c2'],
    minAmount: 100,
    maxAmount: 10000000,
    transactionTypes: ['receipt', 'withdrawal'],
  },
  // GH, +233, GHS
  {
    id: '460f3956-b9aa-4e94-916b-4f357aae3bed',
    code: 'MTN_GH',
    name: 'MTN Mobile Money',
    country: 'GH',
    dialCode: '+233',
    accountNumberType: 'phone',
    channelIds: ['9980002a-6a74-422a-bc7c-350a46ea664a', 'b66a04e8-dee1-4874-aa3c-a58717718757'],
    minAmount: 1,
    maxAmount: 50000,
    transactionTypes: ['receipt', 'withdrawal'],
  },
  {
    id: '6d3075c8-4300-4730-a1f6-ba0aeffd405e',
    code: 'TELECEL_GH',
    name: 'Telecel Cash',
    country: 'GH',
    dialCode: '+233',
    accountNumberType: 'phone',
    channelIds: ['d57569b2-d7f8-4c39-818f-7a805bc75275', 'f35ba02f-0679-4be3-866d-e7fae099f50b'],
    minAmount: 1,
    maxAmount: 50000,
    transactionTypes: ['receipt', 'withdrawal'],
  },
  {
    id: 'c06d56ca-d327-4fd9-b93f-ce68b683039b',
    code: '040',
    name: 'GCB Bank',
    country: 'GH',
    dialCode: '+233',
    accountNumberType: 'bank',
    channelIds: ['3ca9c646-f32e-4b73-bb02-ad09f6fac66f', 'ee47f08e-23d7-4547-abc2-8a26b4404bfb'],
    minAmount: 10,
    maxAmount: 500000,
    transactionTypes: ['receipt', 'withdrawal'],
  },
  {
    id: '6c9eda58-2fa3-4368-906f-b443599c99f1',
    code: '130',
    name: 'Ecobank Ghana',
    country: 'GH',
    dialCode: '+233',
    accountNumberType: 'bank',
    channelIds: ['d3980b67-d2b7-41c1-92b3-d57a109efee5', '5c2c8ac1-d99f-4355-aa26-a85b055d932b'],
    minAmount: 10,
    maxAmount: 500000,
    transactionTypes: ['receipt', 'withdrawal'],
  },
  // ZA, +27, ZAR
  {
    id: 'd474b2fc-814c-4de9-9c8f-93c81dc81850',
    code: 'MTN_ZA',
    name: 'MoMo South Africa',
    country: 'ZA',
    dialCode: '+27',
    accountNumberType: 'phone',
    channelIds: ['de026e11-09a4-4544-accd-2f6316cd45cc', '921e459f-b14e-4b50-a88e-924bb04c1156'],
    minAmount: 10,
    maxAmount: 25000,
    transactionTypes: ['receipt', 'withdrawal'],
  },
  {
    id: '8ab4c969-fd51-4b41-9ff6-519af4f90487',
    code: 'VODACOM_ZA',
    name: 'VodaPay',
    country: 'ZA',
    dialCode: '+27',
    accountNumberType: 'phone',
    channelIds: ['d1be7120-193f-4f63-9eb2-e5a80e05949a', '0d10f4bc-1127-40d8-8ddf-9fe137b16ae9'],
    minAmount: 10,
    maxAmount: 25000,
    transactionTypes: ['receipt', 'withdrawal'],
  },
  {
    id: 'd59745f2-f17d-409c-b570-0d223d29c071',
    code: '051001',
    name: 'Standard Bank',
    country: 'ZA',
    dialCode: '+27',
    accountNumberType: 'bank',
    channelIds: ['b72fb857-6f04-46b1-9245-d7c288456019', '99cd3ebf-b67a-42f7-a370-5cf0dab22d21'],
    minAmount: 10,
    maxAmount: 1000000,
    transactionTypes: ['receipt', 'withdrawal'],
  },
  {
    id: 'd1633100-b23d-4f22-b461-65edcdb2a88f',
    code: '250655',
    name: 'FNB',
    country: 'ZA',
    dialCode: '+27',
    accountNumberType: 'bank',
    channelIds: ['f7eb11e5-edda-4a6f-9714-b7efbdc3745c', 'e9784579-f663-434e-9540-5afad26b4dc2'],
    minAmount: 10,
    maxAmount: 1000000,
    transactionTypes: ['receipt', 'withdrawal'],
  },
  // RW, +250, RWF
  {
    id: '5cd07240-5130-4c1c-bd82-c399ba5a9528',
    code: 'MTN_RW',
    name: 'MTN MoMo Rwanda',
    country: 'RW',
    dialCode: '+250',
    accountNumberType: 'phone',
    channelIds: ['48685119-4375-4f74-ad97-25d15d77c53e', 'c80b907d-12aa-4286-90a1-f3a94760a499'],
    minAmount: 100,
    maxAmount: 2000000,
    transactionTypes: ['receipt', 'withdrawal'],
  },
  {
    id: '5d363392-ff45-42aa-9ac0-36d5b6d026cb',
    code: 'AIRTEL_RW',
    name: 'Airtel Money Rwanda',
    country: 'RW',
    dialCode: '+250',
    accountNumberType: 'phone',
    channelIds: ['02623999-81a2-43c4-b127-771444880033', '24a9f9fd-a87f-4a99-943d-1e9f57a33cf5'],
    minAmount: 100,
    maxAmount: 2000000,
    transactionTypes: ['receipt', 'withdrawal'],
  },
  {
    id: '78da618b-dac9-4deb-9b3c-416dd923d4b3',
    code: '040',
    name: 'Bank of Kigali',
    country: 'RW',
    dialCode: '+250',
    accountNumberType: 'bank',
    channelIds: ['99de12b0-0881-4b7e-b815-c4508df89c56', '3a78b733-bbe0-44a5-9181-725c18dc6f45'],
    minAmount: 1000,
    maxAmount: 10000000,
    transactionTypes: ['receipt', 'withdrawal'],
  },
  {
    id: '062dfd9b-f47b-4a07-a5af-aaaca2728f0e',
    code: '192',
    name: 'Equity Bank Rwanda',
    country: 'RW',
    dialCode: '+250',
    accountNumberType: 'bank',
    channelIds: ['3381855a-5a13-4779-a61b-9022f23a74a8', 'd485af08-5813-49eb-a5ab-a8ebf0c9cf66'],
    minAmount: 1000,
    maxAmount: 10000000,
    transactionTypes: ['receipt', 'withdrawal'],
  },
];

/** The wire shape of a network (the real service's keys). */
export interface WireNetwork {
  id: string;
  code: string;
  updated_at: string;
  status: string;
  account_number_type: AccountNumberType;
  country: string;
  name: string;
  channel_ids: string[];
  selected_channel_id: string;
  country_account_number_type: string;
  min_amount: number;
  max_amount: number;
}

export function toWireNetwork(network: SandboxNetwork): WireNetwork {
  return {
    id: network.id,
    code: network.code,
    updated_at: '0001-01-01T00:00:00Z',
    status: 'active',
    account_number_type: network.accountNumberType,
    country: network.country,
    name: network.name,
    channel_ids: [...network.channelIds],
    selected_channel_id: network.channelIds[1],
    country_account_number_type: `${network.country}${network.accountNumberType.toUpperCase()}`,
    min_amount: network.minAmount,
    max_amount: network.maxAmount,
  };
}

/** The discovery answer for one country and direction; an unknown dial code has empty lists. */
export function discoverNetworks(
  transactionType: NetworkTransactionType,
  dialCode: string,
): { defaults: WireNetwork[]; mobile: WireNetwork[]; banks: WireNetwork[] } {
  const found = NETWORKS.filter(
    (n) => n.dialCode === dialCode && n.transactionTypes.includes(transactionType),
  );
  return {
    defaults: [],
    mobile: found.filter((n) => n.accountNumberType === 'phone').map(toWireNetwork),
    banks: found.filter((n) => n.accountNumberType === 'bank').map(toWireNetwork),
  };
}

export function findNetwork(id: string): SandboxNetwork | undefined {
  return NETWORKS.find((n) => n.id === id);
}

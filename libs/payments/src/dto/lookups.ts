import type { AccountType } from '../request-rules';
import {
  FallsBackToDefault,
  IsDialCode,
  IsNetworkTransactionType,
  IsPathSegment,
  REQUEST_RULES,
} from '../request-rules';

/** Direction of money a network serves: `receipt` (collections) or `withdrawal` (payouts). */
export type NetworkTransactionType = (typeof REQUEST_RULES.networkTransactionTypes)[number];

/** Query of `networks.discover` (`GET /v2/networks/grouped`, docs/wire-contract.md). */
export class NetworkDiscoveryRequest {
  /** `receipt` for collections, `withdrawal` for payouts. */
  @IsNetworkTransactionType()
  transactionType!: NetworkTransactionType;

  /** Country dial code, `+` and 1 to 4 digits, e.g. `+234`. */
  @IsDialCode()
  dialCode!: string;
}

/** Path parameter of `transactions.status` (`GET /api/v1/status/{reference}`). */
export class TransactionStatusRequest {
  /** The transaction reference of an operation's response or of a webhook. */
  @IsPathSegment()
  reference!: string;
}

/** Path parameter of `balances.all` (`GET /api/v1/accounts/{username}/all_balances`). */
export class BalancesRequest {
  /** Account username; empty falls back to `defaultUsername`. */
  @FallsBackToDefault()
  @IsPathSegment()
  username?: string;
}

/** A payment network of the discovery answer: the camelCase form of its wire keys. */
export interface Network {
  /** Network id: the `networkCode` of a pan-African request. */
  id: string;
  /** Provider code: the `providerCode` of a pan-African payout. */
  code: string;
  updatedAt: string;
  status: string;
  /**
   * `phone` (mobile money) or `bank`: the `transactionChannel` of a pan-African request. Typed
   * as a string since the service may add kinds; `toNetworkRequestFields` checks it.
   */
  accountNumberType: string;
  /** ISO 3166 alpha-2 country code, or `ALL`. */
  country: string;
  /** Provider name: the `providerName` of a pan-African payout. */
  name: string;
  channelIds: string[];
  /** The recommended channel: the `channelId` of a pan-African request. */
  selectedChannelId: string;
  countryAccountNumberType: string;
  /** Smallest amount on this network, in its currency. */
  minAmount: number;
  /** Largest amount on this network, in its currency. */
  maxAmount: number;
}

/** Answer of `networks.discover`. */
export interface NetworkDiscovery {
  defaults: Network[];
  /** Mobile-money networks. */
  mobile: Network[];
  /** Banks. */
  banks: Network[];
  _raw: Record<string, unknown>;
}

/** The fields of a pan-African collection or payout request that come from a network. */
export interface NetworkRequestFields {
  networkCode: string;
  channelId: string;
  transactionChannel: AccountType;
  providerName: string;
  providerCode: string;
}

/** `transaction_details` of a status answer. */
export interface TransactionDetails {
  payer: string;
  merchantId: string;
  phoneNumber: string;
  processedAt: { seconds: number; nanos: number };
  reason: string;
  channel: string;
  accountNumber: string;
  /** `success` once settled successfully; any other string is passed through. */
  status: string;
  receiver: string;
  emailAddress: string;
}

/** Answer of `transactions.status`: the camelCase form of its wire keys. */
export interface TransactionStatus {
  id: string;
  accountId: string;
  billingCurrency: string;
  currency: string;
  /** The transaction reference. */
  code: string;
  conversionRate: number;
  amount: number;
  billingCurrencyAmount: number;
  balance: number;
  /** `receipt`, `withdrawal`, `transfer`, `topup`... */
  type: string;
  transactionDetails: TransactionDetails;
  transactionCategory: string;
  userId: string;
  requestMetadata: unknown;
  createdAt: string;
  _raw: Record<string, unknown>;
}

/** One wallet of a balances answer. */
export interface WalletBalance {
  balance: number;
  convertedBalance: number;
  currency: string;
}

/** Answer of `balances.all`. */
export interface Balances {
  /** The wire's `fiat_balance`. */
  fiatBalance: WalletBalance;
  /** The wire's `onchain_balance`; absent or null when the answer has no USD wallet. */
  onchainBalance?: WalletBalance | null;
  /** The local-currency wallet (`fiat_balance`). */
  local: WalletBalance;
  /** The USD wallet (`onchain_balance`); absent or null when the answer has none. */
  usd?: WalletBalance | null;
  _raw: Record<string, unknown>;
}

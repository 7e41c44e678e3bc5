/** Fields every response carries (section 2.3). */
export interface PaymentsResponse {
  /** Whether the service accepted or initiated the request. */
  success: boolean;
  message: string;
  /** `PENDING`/`QUEUED` on initiation; any string the service sends is passed through. */
  status: string;
  transactionReference: string;
  /** The parsed response body, unmodified. */
  _raw: Record<string, unknown>;
}

/** Fields of every collection response (section 2.6). */
export interface CollectionResponse extends PaymentsResponse {
  trackingId: string;
  reference: string;
  result: unknown;
  paymentMethod: string;
}

/** Response of `collections.mpesa`; `paymentMethod` is `MOBILE_MONEY_KE`. */
export type MpesaCollectionResponse = CollectionResponse;

/** Response of `collections.card`: `checkoutUrl` is always present. */
export interface CardCollectionResponse extends CollectionResponse {
  checkoutUrl: string;
}

/** Bank details returned for pan-African bank transfers. */
export interface BankAccount {
  name: string;
  branchCode: string;
  accountNumber: string;
  accountName: string;
  accountReference: string;
}

/** Response of `collections.panAfrican`. */
export interface PanAfricanCollectionResponse extends CollectionResponse {
  bankAccount?: BankAccount;
  checkoutUrl?: string;
}

/** Fields of every payout response (section 2.8). */
export interface PayoutResponse extends PaymentsResponse {
  channel: string;
  amount: number;
}

/** Response of `payouts.mpesa`; `channel` is `MOBILE_MONEY_KE`. */
export type MpesaPayoutResponse = PayoutResponse;
/** Response of `payouts.panAfrican`. */
export type PanAfricanPayoutResponse = PayoutResponse;
/** Response of `payouts.merchant`. */
export type MerchantPayoutResponse = PayoutResponse;

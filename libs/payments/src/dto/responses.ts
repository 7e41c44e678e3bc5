/** Fields every response carries (section 2.3). */
export interface PaymentsResponse {
  /** Whether the service accepted or initiated the request (a refusal rejects with `ServiceAPIError`). */
  success: boolean;
  /** The service's message; `''` when it sent none. */
  message: string;
  /**
   * `SUCCESS` on acceptance: the request was ACCEPTED, not paid. The outcome arrives by webhook
   * (or `transactions.status`). Any string the service sends is passed through; `''` when it
   * sent none (a transfer's answer).
   */
  status: string;
  transactionReference: string;
  /** The parsed response body, unmodified. */
  _raw: Record<string, unknown>;
  /**
   * True when the call was answered from the payments journal (docs/journal.md): an earlier call
   * under the same key was accepted, so nothing was sent; `_raw` is then the journal's copy of the
   * first answer, without personal data.
   */
  replayed?: true;
}

/** Fields of every collection response (section 2.6). */
export interface CollectionResponse extends PaymentsResponse {
  trackingId: string;
  reference: string;
  result: unknown;
  paymentMethod: string;
}

/** Response of `collections.mpesa`; `paymentMethod` is `MOBILE_MONEY_KE` (the wire's is in `_raw`). */
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
  /** `MOBILE_MONEY_KE` for `payouts.mpesa`; otherwise the wire's (often `''`). */
  channel: string;
  /** The wire's amount when positive, else the request's (the service answers 0). */
  amount: number;
}

/** Response of `payouts.mpesa`; `channel` is `MOBILE_MONEY_KE`. */
export type MpesaPayoutResponse = PayoutResponse;
/** Response of `payouts.panAfrican`. */
export type PanAfricanPayoutResponse = PayoutResponse;
/** Response of `payouts.merchant`. */
export type MerchantPayoutResponse = PayoutResponse;

/** Response of `transfers.send`. */
export interface TransferResponse extends PaymentsResponse {
  trackingId: string;
  reference: string;
  result: unknown;
}

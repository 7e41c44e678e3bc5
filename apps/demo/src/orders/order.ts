/** An order of the demo shop and the payment operation that settles it. */
export interface Order {
  id: string;
  operation: PaymentOperationName;
  amount: number;
  /** `CREATED` until the service answers, then the service's status (`PENDING`, `QUEUED`, `SUCCESS`, `FAILED`), or `ERROR`. */
  status: string;
  transactionReference?: string;
  checkoutUrl?: string;
  error?: string;
  /** Webhook events received for this order, in arrival order. */
  events: { event: string; status: string; receivedAt: string }[];
  createdAt: string;
  updatedAt: string;
}

export const PAYMENT_OPERATIONS = [
  'collections.mpesa',
  'collections.card',
  'collections.panAfrican',
  'payouts.mpesa',
  'payouts.panAfrican',
  'payouts.merchant',
] as const;

export type PaymentOperationName = (typeof PAYMENT_OPERATIONS)[number];

export const FINAL_STATUSES: readonly string[] = ['SUCCESS', 'FAILED'];

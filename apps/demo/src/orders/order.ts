/** An order of the demo shop and the payment operation that settles it. */
export interface Order {
  id: string;
  operation: PaymentOperationName;
  amount: number;
  /**
   * `CREATED` until the service answers the call; then `PENDING` (collections) or `QUEUED`
   * (payouts): the service accepted the call, nothing is paid yet (its `status: "SUCCESS"` means
   * only that). `SUCCESS` or `FAILED` come only from a confirmed webhook. `ERROR` when the call
   * failed; a webhook still settles such an order if the call was executed after all.
   */
  status: OrderStatus;
  /** Idempotency key of the order's call (the order id): the webhook carries it as `malipo_key`. */
  idempotencyKey: string;
  transactionReference?: string;
  checkoutUrl?: string;
  error?: string;
  /** The failed call may have executed anyway (its answer was lost): wait for the webhook. */
  mayHaveExecuted?: boolean;
  /** Other references the service created for this order's one call: it was executed twice. */
  duplicateReferences?: string[];
  /** Webhook events applied to this order, in arrival order. */
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

export type OrderStatus = 'CREATED' | 'PENDING' | 'QUEUED' | 'SUCCESS' | 'FAILED' | 'ERROR';

/** Statuses only a webhook sets, and that nothing changes afterwards. */
export const FINAL_STATUSES: readonly OrderStatus[] = ['SUCCESS', 'FAILED'];

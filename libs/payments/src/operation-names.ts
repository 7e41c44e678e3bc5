/**
 * Names of the operations, as `service.method`: a leaf of its own, so that types which name an
 * operation (journal entries, errors) need not import the operation table and its request classes.
 */
export type PaymentsOperationName =
  | 'collections.mpesa'
  | 'collections.card'
  | 'collections.panAfrican'
  | 'payouts.mpesa'
  | 'payouts.panAfrican'
  | 'payouts.merchant'
  | 'networks.discover'
  | 'transactions.status'
  | 'balances.all'
  | 'transfers.send';

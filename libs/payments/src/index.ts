export { PaymentsModule } from './payments.module';
export type { PaymentsOperationName } from './operation-names';
export type {
  PaymentsModuleAsyncOptions,
  PaymentsModuleExtras,
  PaymentsModuleForRootOptions,
  PaymentsOptionsFactory,
} from './payments.module-definition';
export { DEFAULT_BASE_URL, PAYMENTS_LOGGER_CONTEXT } from './payments.constants';
export type {
  PaymentsCallOptions,
  PaymentsDefaults,
  PaymentsModuleOptions,
  PaymentsProxyOptions,
  WalletType,
} from './payments-options.interface';
export { CollectionsService } from './collections.service';
export { PayoutsService } from './payouts.service';
export { findNetwork, NetworksService, toNetworkRequestFields } from './networks.service';
export { TransactionsService } from './transactions.service';
export { BalancesService } from './balances.service';
export { TransfersService } from './transfers.service';
export { PaymentsClient } from './payments-client';
export { PaymentsReconciler } from './payments-reconciler';
export type { PaymentsJournalFilter, PaymentsReconcileOptions } from './payments-reconciler';
export { InMemoryPaymentsJournal } from './journal/in-memory-payments-journal';
export type { InMemoryPaymentsJournalOptions } from './journal/in-memory-payments-journal';
export {
  PAYMENTS_CONFIRMATION_WINDOW_MS,
  PAYMENTS_JOURNAL_STATES,
} from './journal/payments-journal.interfaces';
export type {
  PaymentsJournalCall,
  PaymentsJournalDeferredEvent,
  PaymentsJournalEntry,
  PaymentsJournalQuery,
  PaymentsJournalResolution,
  PaymentsJournalState,
  PaymentsJournalStore,
  PaymentsJournalTotal,
  PaymentsReconcileSummary,
} from './journal/payments-journal.interfaces';
export { createPaymentsClient } from './create-payments-client';
export {
  CardCollectionRequest,
  MpesaCollectionRequest,
  PanAfricanCollectionRequest,
} from './dto/collection-requests';
export {
  MerchantPayoutRequest,
  MpesaPayoutRequest,
  PanAfricanPayoutRequest,
} from './dto/payout-requests';
export { TransferRequest } from './dto/transfer-request';
export { BalancesRequest, NetworkDiscoveryRequest, TransactionStatusRequest } from './dto/lookups';
export type {
  Balances,
  Network,
  NetworkDiscovery,
  NetworkRequestFields,
  NetworkTransactionType,
  TransactionDetails,
  TransactionStatus,
  WalletBalance,
} from './dto/lookups';
export type { AccountType } from './request-rules';
export type {
  BankAccount,
  CardCollectionResponse,
  CollectionResponse,
  MerchantPayoutResponse,
  MpesaCollectionResponse,
  MpesaPayoutResponse,
  PanAfricanCollectionResponse,
  PanAfricanPayoutResponse,
  PaymentsResponse,
  PayoutResponse,
  TransferResponse,
} from './dto/responses';
export {
  AuthenticationError,
  PaymentsError,
  PaymentsJournalError,
  PaymentsReconcilerError,
  PaymentsValidationError,
  ServiceAPIError,
} from './errors';
export type {
  PaymentsErrorCode,
  PaymentsFieldError,
  PaymentsJournalErrorCode,
  PaymentsReconcilerErrorCode,
  ServiceAPIErrorDetails,
} from './errors';
export { PaymentsExceptionFilter } from './payments-exception.filter';
export type { PaymentsErrorResponse } from './payments-exception.filter';
export {
  getBalancesToken,
  getCollectionsToken,
  getNetworksToken,
  getPaymentsClientToken,
  getPaymentsReconcilerToken,
  getPayoutsToken,
  getTransactionsToken,
  getTransfersToken,
  InjectBalances,
  InjectCollections,
  InjectNetworks,
  InjectPaymentsClient,
  InjectPaymentsReconciler,
  InjectPayouts,
  InjectTransactions,
  InjectTransfers,
} from './payments.decorators';

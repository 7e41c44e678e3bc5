export { getFakePaymentsToken, PaymentsTestingModule } from './payments-testing.module';
export type {
  FakeAnswerOptions,
  PaymentsTestingOptions,
  RecordedPaymentsCall,
} from './fake-payments';
export { FakePayments } from './fake-payments';
export { paymentsJournalStoreConformance } from './payments-journal-store.conformance';
export type { PaymentsJournalStoreConformanceCase } from './payments-journal-store.conformance';
export { payoutRunStoreConformance } from './payout-run-store.conformance';
export type { PayoutRunStoreConformanceCase } from './payout-run-store.conformance';

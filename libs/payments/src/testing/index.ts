export { PaymentsTestingModule } from './payments-testing.module';
export type { PaymentsTestingOptions, RecordedPaymentsCall } from './fake-payments';
export { FakePayments } from './fake-payments';

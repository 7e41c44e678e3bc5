export { PaymentsTestingModule } from './payments-testing.module';
export { FakePayments, PaymentsTestingOptions, RecordedPaymentsCall } from './fake-payments';

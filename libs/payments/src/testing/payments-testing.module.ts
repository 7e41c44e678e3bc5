import { DynamicModule, Module } from '@nestjs/common';
import { CollectionsService } from '../collections.service';
import { PaymentsClient } from '../payments.client';
import { PaymentsTransport } from '../payments-transport';
import { namedProviders } from '../payments.tokens';
import { PayoutsService } from '../payouts.service';
import { FakePayments, PAYMENTS_TESTING_OPTIONS, PaymentsTestingOptions } from './fake-payments';

/**
 * Drop-in for `PaymentsModule` in unit tests: the same `CollectionsService`, `PayoutsService`
 * and `PaymentsClient`, answering from memory. Inject {@link FakePayments} to program answers and
 * read the recorded calls. No HTTP, no jest mocks.
 */
@Module({})
export class PaymentsTestingModule {
  static forRoot(options: PaymentsTestingOptions = {}): DynamicModule {
    const aliases = options.name ? namedProviders(options.name) : [];
    return {
      module: PaymentsTestingModule,
      global: options.isGlobal ?? false,
      providers: [
        { provide: PAYMENTS_TESTING_OPTIONS, useValue: options },
        FakePayments,
        { provide: PaymentsTransport, useExisting: FakePayments },
        CollectionsService,
        PayoutsService,
        PaymentsClient,
        ...aliases,
      ],
      exports: options.name
        ? [...aliases.map((alias) => alias.provide), FakePayments]
        : [CollectionsService, PayoutsService, PaymentsClient, FakePayments],
    };
  }
}

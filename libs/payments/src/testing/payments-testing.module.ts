import { randomUUID } from 'node:crypto';
import { DynamicModule, Module } from '@nestjs/common';
import { PAYMENTS_RESOLVED_OPTIONS } from '../payments.constants';
import { resolvePaymentsOptions } from '../payments-options';
import type { ResolvedPaymentsOptions } from '../payments-options';
import { IdempotencyKeyRegistry } from '../idempotency-keys';
import { OperationRunner } from '../operation-runner';
import { PaymentsWire } from '../payments-wire';
import { EXPORTED_SERVICES, namedProviders } from '../payments.decorators';
import { FakePayments, PAYMENTS_TESTING_OPTIONS, PaymentsTestingOptions } from './fake-payments';

/** The options the real module would resolve, with a password no answer can contain. */
function resolveTestingOptions(options: PaymentsTestingOptions): ResolvedPaymentsOptions {
  return resolvePaymentsOptions({
    apiUsername: 'testing',
    apiPassword: randomUUID(),
    baseUrl: 'https://payments.fake.invalid',
    walletType: options.walletType,
    defaultCallbackUrl: options.defaultCallbackUrl,
    defaultUsername: options.defaultUsername,
    correlateCallbacks: options.correlateCallbacks,
  });
}

/**
 * Drop-in for `PaymentsModule` in unit tests: the same services, on a fake wire that answers
 * from memory. Inject {@link FakePayments} to program answers and read the recorded calls. No
 * HTTP, no jest mocks.
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
        { provide: PAYMENTS_RESOLVED_OPTIONS, useValue: resolveTestingOptions(options) },
        // One per forRoot, shared by the runner and FakePayments (whose reset() clears it).
        { provide: IdempotencyKeyRegistry, useFactory: () => new IdempotencyKeyRegistry() },
        FakePayments,
        { provide: PaymentsWire, useExisting: FakePayments },
        OperationRunner,
        ...Object.values(EXPORTED_SERVICES),
        ...aliases,
      ],
      exports: [
        ...(options.name
          ? aliases.map((alias) => alias.provide)
          : Object.values(EXPORTED_SERVICES)),
        FakePayments,
      ],
    };
  }
}

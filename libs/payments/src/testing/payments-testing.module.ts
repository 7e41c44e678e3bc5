import { randomUUID } from 'node:crypto';
import { DynamicModule, Module } from '@nestjs/common';
import {
  DEFAULT_REGISTRATION_NAME,
  PAYMENTS_REGISTRATION_NAME,
  PAYMENTS_RESOLVED_OPTIONS,
  namedServiceToken,
} from '../payments.constants';
import { assertKnownOptions } from '../known-options';
import { resolvePaymentsOptions } from '../payments-options';
import type { ResolvedPaymentsOptions } from '../payments-options';
import { IdempotencyKeyRegistry } from '../idempotency-keys';
import { OperationRunner } from '../operation-runner';
import { PaymentsWire } from '../payments-wire';
import { EXPORTED_SERVICES, namedProviders } from '../payments.decorators';
import { FakePayments, PAYMENTS_TESTING_OPTIONS, PaymentsTestingOptions } from './fake-payments';

/** Every option of {@link PaymentsTestingOptions}: any other key is refused, as the real module's. */
const TESTING_OPTION_NAMES: Readonly<Record<keyof PaymentsTestingOptions, true>> = {
  defaultUsername: true,
  defaultCallbackUrl: true,
  walletType: true,
  correlateCallbacks: true,
  isGlobal: true,
  name: true,
  journal: true,
};

/**
 * The options the real module would resolve, with a password no answer can contain.
 * @throws PaymentsValidationError for a key that is not an option (`defaultCallbackURL`), which
 *   the real module refuses too, or a value it would refuse.
 */
function resolveTestingOptions(options: PaymentsTestingOptions): ResolvedPaymentsOptions {
  assertKnownOptions('PaymentsTestingModule', options, TESTING_OPTION_NAMES);
  return resolvePaymentsOptions({
    apiUsername: 'testing',
    apiPassword: randomUUID(),
    baseUrl: 'https://payments.fake.invalid',
    walletType: options.walletType,
    defaultCallbackUrl: options.defaultCallbackUrl,
    defaultUsername: options.defaultUsername,
    correlateCallbacks: options.correlateCallbacks,
    journal: options.journal,
    // One fingerprint key for every testing module: a journal store a test keeps across modules
    // (a restart) still knows its keys' requests.
    journalFingerprintSecret: 'malipo testing journal fingerprints',
  });
}

/**
 * Injection token of the {@link FakePayments} of the testing registration `name`; without a name,
 * the class itself. With several named registrations in one module, `get(FakePayments)` is one of
 * them: ask for each by its token.
 */
export function getFakePaymentsToken(name?: string): string | typeof FakePayments {
  return name ? namedServiceToken(name, 'FakePayments') : FakePayments;
}

/**
 * Drop-in for `PaymentsModule` in unit tests: the same services, on a fake wire that answers
 * from memory. Inject {@link FakePayments} to program answers and read the recorded calls. No
 * HTTP, no jest mocks.
 */
@Module({})
export class PaymentsTestingModule {
  static forRoot(options: PaymentsTestingOptions = {}): DynamicModule {
    const aliases = options.name
      ? [
          ...namedProviders(options.name),
          { provide: getFakePaymentsToken(options.name) as string, useExisting: FakePayments },
        ]
      : [];
    return {
      module: PaymentsTestingModule,
      global: options.isGlobal ?? false,
      providers: [
        { provide: PAYMENTS_TESTING_OPTIONS, useValue: options },
        { provide: PAYMENTS_RESOLVED_OPTIONS, useValue: resolveTestingOptions(options) },
        {
          provide: PAYMENTS_REGISTRATION_NAME,
          useValue: options.name ?? DEFAULT_REGISTRATION_NAME,
        },
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

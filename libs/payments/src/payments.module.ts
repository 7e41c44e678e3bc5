import { Module } from '@nestjs/common';
import type { DynamicModule } from '@nestjs/common';
import {
  PAYMENTS_HTTP_SERVICE,
  PAYMENTS_MODULE_OPTIONS,
  PAYMENTS_RESOLVED_OPTIONS,
} from './payments.constants';
import { createPaymentsHttpService, HttpPaymentsWire } from './http-payments-wire';
import { ConfigurablePaymentsModule } from './payments.module-definition';
import type { PaymentsModuleAsyncOptions } from './payments.module-definition';
import { assertAsyncOptionsSource } from './known-options';
import { resolvePaymentsOptions } from './payments-options';
import { OperationRunner } from './operation-runner';
import { PaymentsWire } from './payments-wire';
import { EXPORTED_SERVICES } from './payments.decorators';
import { PaymentsRegistrationCheck } from './payments-registrations';

/**
 * The Payments Service module. `PaymentsModule.forRoot(options)` or
 * `PaymentsModule.forRootAsync({ imports, inject, useFactory })` provides
 * {@link CollectionsService}, {@link PayoutsService}, {@link NetworksService},
 * {@link TransactionsService}, {@link BalancesService}, {@link TransfersService} and
 * {@link PaymentsClient}.
 * Options are validated when the app boots.
 */
@Module({
  providers: [
    {
      provide: PAYMENTS_RESOLVED_OPTIONS,
      useFactory: resolvePaymentsOptions,
      inject: [PAYMENTS_MODULE_OPTIONS],
    },
    {
      provide: PAYMENTS_HTTP_SERVICE,
      useFactory: createPaymentsHttpService,
      inject: [PAYMENTS_RESOLVED_OPTIONS],
    },
    { provide: PaymentsWire, useClass: HttpPaymentsWire },
    OperationRunner,
    PaymentsRegistrationCheck,
    ...Object.values(EXPORTED_SERVICES),
  ],
  // Exports depend on `name`, so they are set in payments.module-definition.ts.
})
export class PaymentsModule extends ConfigurablePaymentsModule {
  /** The module with options `useFactory`, `useClass` or `useExisting` makes, validated at boot. */
  static override forRootAsync(options: PaymentsModuleAsyncOptions): DynamicModule {
    assertAsyncOptionsSource('PaymentsModule', options);
    return super.forRootAsync(options);
  }
}

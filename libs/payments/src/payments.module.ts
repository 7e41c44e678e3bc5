import { Module } from '@nestjs/common';
import { CollectionsService } from './collections.service';
import { PaymentsClient } from './payments.client';
import { PAYMENTS_HTTP_SERVICE, PAYMENTS_RESOLVED_OPTIONS } from './payments.constants';
import { createPaymentsHttpService } from './payments-http';
import { ConfigurablePaymentsModule, PAYMENTS_OPTIONS } from './payments.module-definition';
import { resolvePaymentsOptions } from './payments-options';
import { PaymentsTransport } from './payments-transport';
import { PayoutsService } from './payouts.service';

/**
 * The Payments Service module. `PaymentsModule.forRoot(options)` or
 * `PaymentsModule.forRootAsync({ imports, inject, useFactory })` provides
 * {@link CollectionsService}, {@link PayoutsService} and {@link PaymentsClient}.
 * Options are validated when the app boots.
 */
@Module({
  providers: [
    {
      provide: PAYMENTS_RESOLVED_OPTIONS,
      useFactory: resolvePaymentsOptions,
      inject: [PAYMENTS_OPTIONS],
    },
    {
      provide: PAYMENTS_HTTP_SERVICE,
      useFactory: createPaymentsHttpService,
      inject: [PAYMENTS_RESOLVED_OPTIONS],
    },
    PaymentsTransport,
    CollectionsService,
    PayoutsService,
    PaymentsClient,
  ],
  // Exports depend on `name`, so they are set in payments.module-definition.ts.
})
export class PaymentsModule extends ConfigurablePaymentsModule {}

import { type DynamicModule, Module } from '@nestjs/common';
import { PAYMENTS_WEBHOOK_OPTIONS, PAYMENTS_WEBHOOK_STORE } from './payments-webhook.constants';
import { PaymentsWebhookConfirmation } from './payments-webhook.confirmation';
import { PaymentsWebhookDispatcher } from './payments-webhook.dispatcher';
import type { PaymentsWebhookModuleOptions } from './payments-webhook.interfaces';
import {
  ConfigurablePaymentsWebhookModule,
  type PaymentsWebhookModuleForRootOptions,
} from './payments-webhook.module-definition';
import { InMemoryPaymentsWebhookStore } from './payments-webhook.store';

export type { PaymentsWebhookModuleOptions } from './payments-webhook.interfaces';

/**
 * Mounts the webhook route of the Payments Service:
 * `PaymentsWebhookModule.forRoot({ path: 'webhooks/payments' })`, or
 * `PaymentsWebhookModule.forRootAsync({ imports, inject, useFactory, path })`.
 *
 * Each delivery is parsed into a `PaymentWebhookEvent` (400 when unusable), confirmed with the
 * service's status look-up (409 when contradicted, 503 when the look-up fails), deduplicated, and
 * handed to the `@OnPaymentEvent()` methods of the app's providers. Confirmation uses the
 * `TransactionsService` of a `PaymentsModule` registered anywhere in the app (option `account`
 * names a named registration).
 */
@Module({
  providers: [
    {
      provide: PAYMENTS_WEBHOOK_STORE,
      useFactory: (options: PaymentsWebhookModuleOptions) =>
        options.store ?? new InMemoryPaymentsWebhookStore(),
      inject: [PAYMENTS_WEBHOOK_OPTIONS],
    },
    PaymentsWebhookConfirmation,
    PaymentsWebhookDispatcher,
  ],
  // Exports are set in payments-webhook.module-definition.ts, beside the controller.
})
export class PaymentsWebhookModule extends ConfigurablePaymentsWebhookModule {
  /** The module with `options`; without them: route `webhooks/payments`, confirmation on. */
  static override forRoot(options: PaymentsWebhookModuleForRootOptions = {}): DynamicModule {
    return super.forRoot(options);
  }
}

import { type DynamicModule, Module } from '@nestjs/common';
import { PaymentsWebhookConfirmation } from './payments-webhook.confirmation';
import { PaymentsWebhookDispatcher } from './payments-webhook.dispatcher';
import { PaymentsWebhookLookups } from './payments-webhook.lookups';
import {
  ConfigurablePaymentsWebhookModule,
  type PaymentsWebhookModuleAsyncOptions,
  type PaymentsWebhookModuleForRootOptions,
} from './payments-webhook.module-definition';
import { assertAsyncOptionsSource } from '../known-options';
import { PaymentsWebhookRouteCheck } from './payments-webhook.route-check';
import { PAYMENTS_WEBHOOK_STORE_PROVIDER } from './payments-webhook.store-host';

export type { PaymentsWebhookModuleOptions } from './payments-webhook.interfaces';

/**
 * Mounts the webhook route of the Payments Service:
 * `PaymentsWebhookModule.forRoot({ path: 'webhooks/payments' })`, or
 * `PaymentsWebhookModule.forRootAsync({ imports, inject, useFactory, path })`.
 *
 * Each delivery is parsed into a `PaymentWebhookEvent` (400 when unusable), confirmed with the
 * service's status look-up (409 when contradicted, 503 when the look-up fails or the record is
 * still not final after a few re-checks), claimed in the store (200 duplicate when processed, 503
 * while another delivery holds it or when the store fails), and handed to the `@OnPaymentEvent()`
 * methods of the app's providers. Confirmation uses
 * the `TransactionsService` of a `PaymentsModule` registered anywhere in the app (option `account`
 * names a named registration).
 *
 * With `forRootAsync`, the store may come from DI (`inject: [ConfigService]`, `useFactory:
 * (config) => ({ store: new RedisPaymentsWebhookStore({ url: config.get('REDIS_URL') }) })`).
 * The module closes a store on shutdown only when it created it: its default store, or one the
 * options factory created; never a store given to `forRoot` nor a provider of your app.
 */
@Module({
  providers: [
    PAYMENTS_WEBHOOK_STORE_PROVIDER,
    PaymentsWebhookLookups,
    PaymentsWebhookConfirmation,
    PaymentsWebhookDispatcher,
    PaymentsWebhookRouteCheck,
  ],
  // Exports are set in payments-webhook.module-definition.ts, beside the controller.
})
export class PaymentsWebhookModule extends ConfigurablePaymentsWebhookModule {
  /** The module with `options`; without them: route `webhooks/payments`, confirmation on. */
  static override forRoot(options: PaymentsWebhookModuleForRootOptions = {}): DynamicModule {
    return super.forRoot(options);
  }

  /** The module with options `useFactory`, `useClass` or `useExisting` makes. */
  static override forRootAsync(options: PaymentsWebhookModuleAsyncOptions): DynamicModule {
    assertAsyncOptionsSource('PaymentsWebhookModule', options);
    return super.forRootAsync(options);
  }
}

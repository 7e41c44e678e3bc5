import { DynamicModule, Module } from '@nestjs/common';
import { ConfigModule, ConfigService } from '@nestjs/config';
import { InMemoryPaymentsJournal, PaymentsModule, PaymentsModuleOptions } from '@malipo/nestjs';
import type { PaymentsJournalStore } from '@malipo/nestjs';
import { PaymentsWebhookModule, PaymentsWebhookModuleOptions } from '@malipo/nestjs/webhooks';
import { DemoEnvironment, validateDemoEnvironment } from './demo.environment';
import { JournalModule } from './journal/journal.module';
import { OrdersModule } from './orders/orders.module';
import { PayrollModule } from './payroll/payroll.module';

/** Where the service's outcome webhooks arrive (the default callbackUrl points here). */
export const WEBHOOK_ROUTE = 'webhooks/payments';

/**
 * The payments journal (docs/journal.md): on Redis when `url` is set, so that it outlives a crash
 * and every instance answers a repeated key alike; else in this process's memory, lost on restart.
 */
async function paymentsJournal(url: string | undefined): Promise<PaymentsJournalStore> {
  if (!url) return new InMemoryPaymentsJournal();
  // Loaded only when used: `npm start` without Redis does not load ioredis.
  const { RedisPaymentsJournal } = await import('@malipo/nestjs/redis');
  return new RedisPaymentsJournal({ url });
}

@Module({})
export class AppModule {
  /** The app, configured from `environment` (default: `process.env`). */
  static forEnvironment(
    environment: Record<string, string | undefined> = process.env,
  ): DynamicModule {
    return {
      module: AppModule,
      imports: [
        ConfigModule.forRoot({
          isGlobal: true,
          ignoreEnvFile: true,
          skipProcessEnv: true,
          load: [() => ({ ...validateDemoEnvironment(environment) })],
        }),
        PaymentsModule.forRootAsync({
          isGlobal: true,
          inject: [ConfigService],
          // The client closes the journal's Redis connection when the app closes.
          useFactory: async (
            config: ConfigService<DemoEnvironment, true>,
          ): Promise<PaymentsModuleOptions> => ({
            apiUsername: config.get('PAYMENTS_API_USERNAME', { infer: true }),
            apiPassword: config.get('PAYMENTS_API_PASSWORD', { infer: true }),
            baseUrl: config.get('PAYMENTS_BASE_URL', { infer: true }),
            walletType: config.get('PAYMENTS_WALLET_TYPE', { infer: true }),
            defaultUsername: config.get('PAYMENTS_DEFAULT_USERNAME', { infer: true }),
            defaultCallbackUrl: config.get('PAYMENTS_DEFAULT_CALLBACK_URL', { infer: true }),
            timeout: config.get('PAYMENTS_TIMEOUT_MS', { infer: true }),
            maxRetries: config.get('PAYMENTS_MAX_RETRIES', { infer: true }),
            debug: config.get('PAYMENTS_DEBUG', { infer: true }),
            journal: await paymentsJournal(config.get('REDIS_URL', { infer: true })),
          }),
        }),
        OrdersModule,
        JournalModule,
        PayrollModule,
        // Confirms each webhook with the status look-up of the PaymentsModule above before the
        // order handlers see it: the service does not sign its callbacks. With REDIS_URL, the
        // claims are shared by every instance (the module closes the connection on shutdown: its
        // factory made the store); without it, each instance remembers in memory.
        PaymentsWebhookModule.forRootAsync({
          path: WEBHOOK_ROUTE,
          inject: [ConfigService],
          useFactory: async (
            config: ConfigService<DemoEnvironment, true>,
          ): Promise<PaymentsWebhookModuleOptions> => {
            const url = config.get('REDIS_URL', { infer: true });
            if (!url) return {};
            // Loaded only when used: `npm start` without Redis does not load ioredis.
            const { RedisPaymentsWebhookStore } = await import('@malipo/nestjs/redis');
            return { store: new RedisPaymentsWebhookStore({ url }) };
          },
        }),
      ],
    };
  }
}

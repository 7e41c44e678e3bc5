import { Module } from '@nestjs/common';
import { ConfigModule, ConfigService } from '@nestjs/config';
import { PaymentsModule } from '@malipo/nestjs';
import { PaymentsWebhookModule } from '@malipo/nestjs/webhooks';
import { CheckoutController } from './checkout.controller';
import { PaymentOutcomes } from './payment-outcomes';

@Module({
  imports: [
    ConfigModule.forRoot({ isGlobal: true }),
    PaymentsModule.forRootAsync({
      isGlobal: true,
      inject: [ConfigService],
      useFactory: (config: ConfigService) => ({
        baseUrl: config.getOrThrow<string>('PAYMENTS_BASE_URL'),
        apiUsername: config.getOrThrow<string>('PAYMENTS_API_USERNAME'),
        apiPassword: config.getOrThrow<string>('PAYMENTS_API_PASSWORD'),
        defaultCallbackUrl: config.get<string>('PAYMENTS_DEFAULT_CALLBACK_URL'),
        defaultUsername: config.get<string>('PAYMENTS_DEFAULT_USERNAME'),
      }),
    }),
    // Confirms every webhook through the status look-up of the PaymentsModule above.
    PaymentsWebhookModule.forRoot({ path: 'webhooks/payments' }),
  ],
  controllers: [CheckoutController],
  providers: [PaymentOutcomes],
})
export class AppModule {}

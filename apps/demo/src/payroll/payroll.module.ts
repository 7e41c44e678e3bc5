import { Module, RequestMethod } from '@nestjs/common';
import type { MiddlewareConsumer, NestModule } from '@nestjs/common';
import { text } from 'express';
import { PayoutRunsModule } from '@malipo/nestjs/runs';
import { PAYROLL_CSV_TYPES, PayrollController } from './payroll.controller';
import { PayrollService } from './payroll.service';

/**
 * Largest payroll file accepted: about 10,000 rows. The app's JSON limit (64 kB) is for orders;
 * a file is larger, so its route gets its own parser instead of a higher limit for every route.
 */
export const PAYROLL_CSV_LIMIT = '2mb';

/**
 * The payroll page and API. Runs use the embedded engine (one instance: runs live in this
 * process and end with it) and send through the app's global `PaymentsModule`, whose journal they
 * require; the `PaymentsWebhookModule` settles their items by webhook.
 */
@Module({
  imports: [PayoutRunsModule.forRoot()],
  controllers: [PayrollController],
  providers: [PayrollService],
})
export class PayrollModule implements NestModule {
  configure(consumer: MiddlewareConsumer): void {
    consumer
      .apply(text({ type: PAYROLL_CSV_TYPES, limit: PAYROLL_CSV_LIMIT }))
      .forRoutes({ path: 'payroll/runs', method: RequestMethod.POST });
  }
}

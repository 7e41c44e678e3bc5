import { DynamicModule, Module } from '@nestjs/common';
import { APP_FILTER } from '@nestjs/core';
import { CheckoutController } from './checkout.controller';
import { ControlController } from './control.controller';
import { FaultsService } from './faults.service';
import { IdempotencyService } from './idempotency.service';
import { LedgerService } from './ledger.service';
import { LookupsService } from './lookups.service';
import { PaymentsApiController } from './payments-api.controller';
import { PaymentsApiService } from './payments-api.service';
import { RateLimitService } from './rate-limit.service';
import { RequestLogService } from './request-log.service';
import { SandboxExceptionFilter } from './sandbox-exception.filter';
import { SandboxConfig } from './sandbox.config';
import { SandboxTimers } from './sandbox-timers.service';
import { SettlementService } from './settlement.service';
import { WebhookDispatcher } from './webhook.dispatcher';

/** The whole emulator; one instance per `startSandbox()`, so all state is per sandbox. */
@Module({})
export class SandboxModule {
  static forRoot(config: SandboxConfig): DynamicModule {
    return {
      module: SandboxModule,
      controllers: [PaymentsApiController, CheckoutController, ControlController],
      providers: [
        { provide: SandboxConfig, useValue: config },
        LedgerService,
        SandboxTimers,
        WebhookDispatcher,
        SettlementService,
        PaymentsApiService,
        LookupsService,
        FaultsService,
        IdempotencyService,
        RequestLogService,
        RateLimitService,
        { provide: APP_FILTER, useClass: SandboxExceptionFilter },
      ],
    };
  }
}

import { type DynamicModule, Inject, Module, type OnApplicationShutdown } from '@nestjs/common';
import { PAYOUT_RUNS_OPTIONS } from '../payments.constants';
import { InMemoryPayoutRunStore } from './in-memory-payout-run.store';
import { InProcessPayoutRunEngine } from './in-process-payout-run-engine';
import type { PayoutRunStore } from './payout-run.store';
import type { PayoutRunEngine, PayoutRunEngineContext } from './payout-run-engine';
import { PayoutRunEventsDispatcher } from './payout-run-events.dispatcher';
import { PayoutRunOutageGuard } from './payout-run-outage-guard';
import { PayoutRunStatusLookups } from './payout-run-status-lookups';
import { MAX_SETTLEMENT_READ_DELAY_MS } from './payout-run-settlement-schedule';
import {
  PAYOUT_RUN_ENGINE,
  PAYOUT_RUN_STORE,
  PAYOUT_RUNS_RESOLVED_OPTIONS,
} from './payout-runs.constants';
import {
  ConfigurablePayoutRunsModule,
  type PayoutRunsModuleAsyncOptions,
  type PayoutRunsModuleForRootOptions,
} from './payout-runs.module-definition';
import { assertAsyncOptionsSource } from '../known-options';
import { resolvePayoutRunsOptions } from './payout-runs.options';
import type { PayoutRunsModuleOptions, ResolvedPayoutRunsOptions } from './payout-runs.options';
import { PayoutRunsPayments } from './payout-runs-payments';
import { PayoutRunsService } from './payout-runs.service';

/**
 * Payout runs (docs/payout-runs.md): `PayoutRunsModule.forRoot()` or
 * `PayoutRunsModule.forRootAsync({ imports, inject, useFactory })` provides
 * {@link PayoutRunsService} and calls the `@OnPayoutRunEvent()` methods of the app's providers.
 *
 * Runs send through the `PayoutsService` of a `PaymentsModule` registered anywhere in the app
 * (option `account` names a named registration), which must have the `journal` option: the boot
 * fails otherwise. Runs execute in this process by default (the embedded engine; lost on
 * restart, the journal says what was in flight); with the options `engine:
 * bullmqPayoutRunEngine(...)` and `store: new RedisPayoutRunStore(...)` of
 * `@malipo/nestjs/runs/bullmq` they execute on BullMQ, every instance a worker, and survive a
 * redeploy.
 */
@Module({
  providers: [
    {
      provide: PAYOUT_RUNS_RESOLVED_OPTIONS,
      useFactory: resolvePayoutRunsOptions,
      inject: [PAYOUT_RUNS_OPTIONS],
    },
    {
      provide: PAYOUT_RUN_STORE,
      useFactory: (options: PayoutRunsModuleOptions): PayoutRunStore =>
        options.store ?? new InMemoryPayoutRunStore(),
      inject: [PAYOUT_RUNS_OPTIONS],
    },
    PayoutRunsPayments,
    PayoutRunEventsDispatcher,
    {
      provide: PAYOUT_RUN_ENGINE,
      useFactory: (
        store: PayoutRunStore,
        payments: PayoutRunsPayments,
        events: PayoutRunEventsDispatcher,
        resolved: ResolvedPayoutRunsOptions,
        options: PayoutRunsModuleOptions,
      ): PayoutRunEngine => {
        const context: PayoutRunEngineContext = {
          store,
          payments,
          emit: (event) => events.emit(event),
          settlementPollMs: resolved.settlementPollMs,
          progressIntervalMs: resolved.progressIntervalMs,
          followInDoubtMs: resolved.followInDoubtMs,
          outageGuard: new PayoutRunOutageGuard(resolved.pauseAfterInDoubtSends),
          statusLookups: new PayoutRunStatusLookups(
            resolved.statusLookupAfterMs,
            undefined,
            undefined,
            // An item due is read at the next look, one poll after its schedule's longest wait.
            MAX_SETTLEMENT_READ_DELAY_MS + resolved.settlementPollMs,
          ),
        };
        return options.engine ? options.engine(context) : new InProcessPayoutRunEngine(context);
      },
      inject: [
        PAYOUT_RUN_STORE,
        PayoutRunsPayments,
        PayoutRunEventsDispatcher,
        PAYOUT_RUNS_RESOLVED_OPTIONS,
        PAYOUT_RUNS_OPTIONS,
      ],
    },
    PayoutRunsService,
  ],
  // Exports are set in payout-runs.module-definition.ts.
})
export class PayoutRunsModule
  extends ConfigurablePayoutRunsModule
  implements OnApplicationShutdown
{
  constructor(@Inject(PAYOUT_RUN_STORE) private readonly store: PayoutRunStore) {
    super();
  }

  /** After the engine stopped (its `onModuleDestroy`): the store's connections may go. */
  async onApplicationShutdown(): Promise<void> {
    await this.store.close?.();
  }

  /** The module with `options`; without them: in-memory runs, 4 at once, 10 per second. */
  static override forRoot(options: PayoutRunsModuleForRootOptions = {}): DynamicModule {
    return super.forRoot(options);
  }

  /** The module with options `useFactory`, `useClass` or `useExisting` makes. */
  static override forRootAsync(options: PayoutRunsModuleAsyncOptions): DynamicModule {
    assertAsyncOptionsSource('PayoutRunsModule', options);
    return super.forRootAsync(options);
  }
}

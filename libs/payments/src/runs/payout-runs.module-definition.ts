import {
  ConfigurableModuleBuilder,
  type ConfigurableModuleOptionsFactory,
  type DynamicModule,
} from '@nestjs/common';
import { DiscoveryModule } from '@nestjs/core';
import { PAYOUT_RUNS_OPTIONS } from '../payments.constants';
import type { PayoutRunsModuleOptions } from './payout-runs.options';
import { PayoutRunsService } from './payout-runs.service';

/** Registration options beside the module options. */
export interface PayoutRunsModuleExtras {
  /** Make `PayoutRunsService` injectable in every module. Default false. */
  isGlobal?: boolean;
}

const PAYOUT_RUNS_OPTIONS_FACTORY_METHOD = 'createPayoutRunsOptions';

export const {
  ConfigurableModuleClass: ConfigurablePayoutRunsModule,
  OPTIONS_TYPE: PAYOUT_RUNS_OPTIONS_TYPE,
  ASYNC_OPTIONS_TYPE: PAYOUT_RUNS_ASYNC_OPTIONS_TYPE,
} = new ConfigurableModuleBuilder<PayoutRunsModuleOptions>({
  moduleName: 'PayoutRuns',
  optionsInjectionToken: PAYOUT_RUNS_OPTIONS,
})
  .setClassMethodName('forRoot')
  .setFactoryMethodName(PAYOUT_RUNS_OPTIONS_FACTORY_METHOD)
  // Without the transform the extras would be accepted and ignored.
  .setExtras<PayoutRunsModuleExtras>({ isGlobal: false }, (definition, extras): DynamicModule => ({
    ...definition,
    global: extras.isGlobal,
    imports: [...(definition.imports ?? []), DiscoveryModule],
    exports: [PayoutRunsService],
  }))
  .build();

/** `forRoot` options: the module options plus `isGlobal`. */
export type PayoutRunsModuleForRootOptions = typeof PAYOUT_RUNS_OPTIONS_TYPE;
/** `forRootAsync` options: `imports`, `inject`, `useFactory` | `useClass` | `useExisting`, `isGlobal`. */
export type PayoutRunsModuleAsyncOptions = typeof PAYOUT_RUNS_ASYNC_OPTIONS_TYPE;

/** A class for `forRootAsync({ useClass })` or `useExisting`: `createPayoutRunsOptions()`. */
export type PayoutRunsOptionsFactory = ConfigurableModuleOptionsFactory<
  PayoutRunsModuleOptions,
  typeof PAYOUT_RUNS_OPTIONS_FACTORY_METHOD
>;

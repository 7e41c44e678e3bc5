import { ConfigurableModuleBuilder } from '@nestjs/common';
import type { PaymentsModuleOptions } from './payments-options.interface';

export const {
  ConfigurableModuleClass: ConfigurablePaymentsModule,
  MODULE_OPTIONS_TOKEN: PAYMENTS_OPTIONS,
  OPTIONS_TYPE: PAYMENTS_OPTIONS_TYPE,
  ASYNC_OPTIONS_TYPE: PAYMENTS_ASYNC_OPTIONS_TYPE,
} = new ConfigurableModuleBuilder<PaymentsModuleOptions>({ moduleName: 'Payments' })
  .setClassMethodName('forRoot')
  .setFactoryMethodName('createPaymentsOptions')
  // Without the transform `isGlobal` would be accepted and ignored.
  .setExtras({ isGlobal: false }, (definition, extras) => ({
    ...definition,
    global: extras.isGlobal,
  }))
  .build();

/** `forRoot` options: the module options plus `isGlobal`. */
export type PaymentsModuleForRootOptions = typeof PAYMENTS_OPTIONS_TYPE;
/** `forRootAsync` options: `imports`, `inject`, `useFactory` | `useClass` | `useExisting`, `isGlobal`. */
export type PaymentsModuleAsyncOptions = typeof PAYMENTS_ASYNC_OPTIONS_TYPE;

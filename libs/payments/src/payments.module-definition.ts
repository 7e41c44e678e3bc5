import type { ConfigurableModuleOptionsFactory, DynamicModule, Provider } from '@nestjs/common';
import { ConfigurableModuleBuilder } from '@nestjs/common';
import type { PaymentsModuleOptions } from './payments-options.interface';
import {
  DEFAULT_REGISTRATION_NAME,
  PAYMENTS_MODULE_OPTIONS,
  PAYMENTS_REGISTRATION_NAME,
} from './payments.constants';
import { EXPORTED_SERVICES, namedProviders } from './payments.decorators';

/** Registration options beside the module options. */
export interface PaymentsModuleExtras {
  /** Make the services injectable in every module. Default false. */
  isGlobal?: boolean;
  /**
   * Name of this registration, for an app that holds several Payments accounts. A named
   * registration exports its services only under named tokens (`@InjectCollections(name)`...).
   */
  name?: string;
}

const PAYMENTS_OPTIONS_FACTORY_METHOD = 'createPaymentsOptions';

export const {
  ConfigurableModuleClass: ConfigurablePaymentsModule,
  OPTIONS_TYPE: PAYMENTS_OPTIONS_TYPE,
  ASYNC_OPTIONS_TYPE: PAYMENTS_ASYNC_OPTIONS_TYPE,
} = new ConfigurableModuleBuilder<PaymentsModuleOptions>({
  moduleName: 'Payments',
  optionsInjectionToken: PAYMENTS_MODULE_OPTIONS,
})
  .setClassMethodName('forRoot')
  .setFactoryMethodName(PAYMENTS_OPTIONS_FACTORY_METHOD)
  // Without the transform the extras would be accepted and ignored.
  .setExtras<PaymentsModuleExtras>(
    { isGlobal: false, name: undefined },
    (definition, extras): DynamicModule => {
      const aliases: Provider[] = extras.name ? namedProviders(extras.name) : [];
      return {
        ...definition,
        global: extras.isGlobal,
        providers: [
          ...(definition.providers ?? []),
          ...aliases,
          {
            provide: PAYMENTS_REGISTRATION_NAME,
            useValue: extras.name ?? DEFAULT_REGISTRATION_NAME,
          },
        ],
        exports: extras.name
          ? aliases.map((alias) => (alias as { provide: string }).provide)
          : Object.values(EXPORTED_SERVICES),
      };
    },
  )
  .build();

/** `forRoot` options: the module options plus `isGlobal` and `name`. */
export type PaymentsModuleForRootOptions = typeof PAYMENTS_OPTIONS_TYPE;
/** `forRootAsync` options: `imports`, `inject`, `useFactory` | `useClass` | `useExisting`, `isGlobal`, `name`. */
export type PaymentsModuleAsyncOptions = typeof PAYMENTS_ASYNC_OPTIONS_TYPE;

/**
 * A class for `forRootAsync({ useClass })` or `useExisting`: `class PaymentsConfig implements
 * PaymentsOptionsFactory { createPaymentsOptions() { ... } }`.
 */
export type PaymentsOptionsFactory = ConfigurableModuleOptionsFactory<
  PaymentsModuleOptions,
  typeof PAYMENTS_OPTIONS_FACTORY_METHOD
>;

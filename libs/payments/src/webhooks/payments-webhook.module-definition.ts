import {
  ConfigurableModuleBuilder,
  type ConfigurableModuleOptionsFactory,
  type DynamicModule,
} from '@nestjs/common';
import { DiscoveryModule } from '@nestjs/core';
import { createPaymentsWebhookController } from './payments-webhook.controller';
import { DEFAULT_WEBHOOK_PATH } from './payments-webhook.constants';
import {
  PAYMENTS_WEBHOOK_OPTIONS,
  PAYMENTS_WEBHOOK_OPTIONS_SOURCE,
  PAYMENTS_WEBHOOK_ROUTE,
} from '../payments.constants';
import { PaymentsWebhookDispatcher } from './payments-webhook.dispatcher';
import { moduleOptionError } from '../known-options';
import type {
  PaymentsWebhookModuleExtras,
  PaymentsWebhookModuleOptions,
} from './payments-webhook.interfaces';
import type { PaymentsWebhookOptionsSource } from './payments-webhook.store-host';

/**
 * `forRoot` provides its options as a value, `forRootAsync` through a factory: a store in the
 * former existed before the module (the caller's), in the latter the factory may have made it.
 */
function optionsSource(definition: DynamicModule): PaymentsWebhookOptionsSource {
  const given = (definition.providers ?? []).some(
    (provider) =>
      typeof provider === 'object' &&
      'provide' in provider &&
      provider.provide === PAYMENTS_WEBHOOK_OPTIONS &&
      'useValue' in provider,
  );
  return given ? 'forRoot' : 'forRootAsync';
}

const PAYMENTS_WEBHOOK_OPTIONS_FACTORY_METHOD = 'createPaymentsWebhookOptions';

export const {
  ConfigurableModuleClass: ConfigurablePaymentsWebhookModule,
  OPTIONS_TYPE: PAYMENTS_WEBHOOK_OPTIONS_TYPE,
  ASYNC_OPTIONS_TYPE: PAYMENTS_WEBHOOK_ASYNC_OPTIONS_TYPE,
} = new ConfigurableModuleBuilder<PaymentsWebhookModuleOptions>({
  moduleName: 'PaymentsWebhook',
  optionsInjectionToken: PAYMENTS_WEBHOOK_OPTIONS,
})
  .setClassMethodName('forRoot')
  .setFactoryMethodName(PAYMENTS_WEBHOOK_OPTIONS_FACTORY_METHOD)
  // `path` shapes the route, which exists before any async factory runs: it is an extra.
  .setExtras<PaymentsWebhookModuleExtras>(
    { path: DEFAULT_WEBHOOK_PATH },
    (definition, extras): DynamicModule => {
      const path = webhookPath(extras.path);
      return {
        ...definition,
        providers: [
          ...(definition.providers ?? []),
          { provide: PAYMENTS_WEBHOOK_OPTIONS_SOURCE, useValue: optionsSource(definition) },
          { provide: PAYMENTS_WEBHOOK_ROUTE, useValue: path },
        ],
        imports: [...(definition.imports ?? []), DiscoveryModule],
        controllers: [createPaymentsWebhookController(path)],
        exports: [PaymentsWebhookDispatcher],
      };
    },
  )
  .build();

/**
 * The route: unset or blank (an empty environment variable) is the default, as `PaymentsModule`
 * takes empty settings for unset, never the app's root.
 * @throws PaymentsValidationError (`path`, `isString`).
 */
function webhookPath(path: unknown): string {
  if (path === undefined || path === null) return DEFAULT_WEBHOOK_PATH;
  if (typeof path !== 'string') {
    throw moduleOptionError('PaymentsWebhookModule', 'path', 'isString', 'path must be a string');
  }
  return path.trim() === '' ? DEFAULT_WEBHOOK_PATH : path;
}

/** `forRoot` options: the module options plus `path`. */
export type PaymentsWebhookModuleForRootOptions = typeof PAYMENTS_WEBHOOK_OPTIONS_TYPE;
/** `forRootAsync` options: `imports`, `inject`, `useFactory` | `useClass` | `useExisting`, plus `path`. */
export type PaymentsWebhookModuleAsyncOptions = typeof PAYMENTS_WEBHOOK_ASYNC_OPTIONS_TYPE;

/** A class for `forRootAsync({ useClass })` or `useExisting`: `createPaymentsWebhookOptions()`. */
export type PaymentsWebhookOptionsFactory = ConfigurableModuleOptionsFactory<
  PaymentsWebhookModuleOptions,
  typeof PAYMENTS_WEBHOOK_OPTIONS_FACTORY_METHOD
>;

import { printsAsNameOnly } from '../secret-holders';
import { Logger, type OnModuleDestroy, type Provider } from '@nestjs/common';
import { DiscoveryService } from '@nestjs/core';
import { PAYMENTS_WEBHOOK_LOGGER_CONTEXT } from './payments-webhook.constants';
import {
  PAYMENTS_WEBHOOK_OPTIONS,
  PAYMENTS_WEBHOOK_OPTIONS_SOURCE,
  PAYMENTS_WEBHOOK_STORE,
} from '../payments.constants';
import type { PaymentsWebhookModuleOptions } from './payments-webhook.interfaces';
import { InMemoryPaymentsWebhookStore, type PaymentsWebhookStore } from './payments-webhook.store';

/** Where the options of a registration come from. */
export type PaymentsWebhookOptionsSource = 'forRoot' | 'forRootAsync';

/** A store that can be closed: `onModuleDestroy()` first, `close()` else. */
interface Closable {
  onModuleDestroy?: () => unknown;
  close?: () => unknown;
}

/**
 * The store of a registration and who owns it. Nest runs the lifecycle hooks of every provider's
 * value, so the store is provided inside this holder: its hooks run only when the module made it
 * (the rule is in the TSDoc of `PaymentsWebhookModuleOptions.store`).
 */
export class PaymentsWebhookStoreHost implements OnModuleDestroy {
  private readonly logger = new Logger(PAYMENTS_WEBHOOK_LOGGER_CONTEXT);

  constructor(
    readonly store: PaymentsWebhookStore,
    /** The module made it: the default store, or one created by the `forRootAsync` factory. */
    private readonly madeByModule: boolean,
    private readonly discovery: DiscoveryService,
  ) {}

  async onModuleDestroy(): Promise<void> {
    if (!this.madeByModule || this.isAppProvider()) return;
    const store = this.store as PaymentsWebhookStore & Closable;
    try {
      if (typeof store.onModuleDestroy === 'function') await store.onModuleDestroy();
      else if (typeof store.close === 'function') await store.close();
    } catch (error) {
      this.logger.warn(
        `Closing the webhook store failed: ${error instanceof Error ? error.message : String(error)}`,
      );
    }
  }

  /** Injected into the options factory from a provider of the app: Nest closes it itself. */
  private isAppProvider(): boolean {
    return this.discovery.getProviders().some((wrapper) => wrapper.instance === this.store);
  }
}

/** The provider of {@link PaymentsWebhookStoreHost} under `PAYMENTS_WEBHOOK_STORE`. */
export const PAYMENTS_WEBHOOK_STORE_PROVIDER: Provider = {
  provide: PAYMENTS_WEBHOOK_STORE,
  useFactory: (
    options: PaymentsWebhookModuleOptions,
    source: PaymentsWebhookOptionsSource,
    discovery: DiscoveryService,
  ) =>
    options.store
      ? new PaymentsWebhookStoreHost(options.store, source === 'forRootAsync', discovery)
      : new PaymentsWebhookStoreHost(new InMemoryPaymentsWebhookStore(), true, discovery),
  inject: [PAYMENTS_WEBHOOK_OPTIONS, PAYMENTS_WEBHOOK_OPTIONS_SOURCE, DiscoveryService],
};

// It reaches Nest's container (and the options as the app wrote them) through what it injects.
printsAsNameOnly(PaymentsWebhookStoreHost.prototype, 'PaymentsWebhookStoreHost');

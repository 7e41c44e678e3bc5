import { Inject, Injectable, OnModuleInit } from '@nestjs/common';
import { DiscoveryService, MetadataScanner, Reflector } from '@nestjs/core';
import type { PaymentWebhookEvent } from './payment-webhook-event';
import { PAYMENT_EVENT_HANDLER } from './on-payment-event.decorator';
import type { PaymentsWebhookStore } from './payments-webhook.store';

export const PAYMENTS_WEBHOOK_STORE = Symbol('PAYMENTS_WEBHOOK_STORE');

type Handler = (event: PaymentWebhookEvent) => unknown;

/** What one delivery did. */
export interface PaymentWebhookDispatch {
  duplicate: boolean;
  /** Handlers that ran. */
  handled: number;
}

/** Finds the `@OnPaymentEvent()` handlers of the app and runs them once per delivery. */
@Injectable()
export class PaymentsWebhookDispatcher implements OnModuleInit {
  private readonly handlers = new Map<string, Handler[]>();
  /** Deliveries being handled now: a concurrent duplicate must not run the handlers twice. */
  private readonly inProgress = new Set<string>();

  constructor(
    private readonly discovery: DiscoveryService,
    private readonly scanner: MetadataScanner,
    private readonly reflector: Reflector,
    @Inject(PAYMENTS_WEBHOOK_STORE) private readonly store: PaymentsWebhookStore,
  ) {}

  onModuleInit(): void {
    // An instance reached through several providers (useExisting aliases) registers once.
    const scanned = new Set<object>();
    for (const wrapper of this.discovery.getProviders()) {
      const instance: unknown = wrapper.instance;
      if (!wrapper.isDependencyTreeStatic() || typeof instance !== 'object' || instance === null) {
        continue;
      }
      if (scanned.has(instance)) continue;
      scanned.add(instance);
      const prototype = Object.getPrototypeOf(instance) as Record<string, unknown>;
      for (const method of this.scanner.getAllMethodNames(prototype)) {
        const target = prototype[method];
        if (typeof target !== 'function') continue;
        const events = this.reflector.get<string[] | undefined>(PAYMENT_EVENT_HANDLER, target);
        for (const event of events ?? []) {
          const list = this.handlers.get(event) ?? [];
          list.push((payload) => (target as Handler).call(instance, payload));
          this.handlers.set(event, list);
        }
      }
    }
  }

  /** Runs the handlers of `event` unless this delivery was processed (or is being processed). */
  async dispatch(event: PaymentWebhookEvent): Promise<PaymentWebhookDispatch> {
    const key = `${event.transactionReference}:${event.event}`;
    // Claimed before the first await, so a concurrent copy sees it.
    if (this.inProgress.has(key)) return { duplicate: true, handled: 0 };
    this.inProgress.add(key);
    try {
      if (await this.store.has(key)) return { duplicate: true, handled: 0 };
      const handlers = [
        ...(this.handlers.get(event.event) ?? []),
        ...(this.handlers.get('*') ?? []),
      ];
      for (const handler of handlers) await handler(event);
      await this.store.add(key);
      return { duplicate: false, handled: handlers.length };
    } finally {
      this.inProgress.delete(key);
    }
  }
}

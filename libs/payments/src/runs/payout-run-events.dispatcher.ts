import { Injectable, Logger, OnModuleInit } from '@nestjs/common';
import { DiscoveryService, MetadataScanner, Reflector } from '@nestjs/core';
import { PAYMENTS_LOGGER_CONTEXT, PAYOUT_RUN_EVENT_HANDLER } from '../payments.constants';
import type { PayoutRunEvent, PayoutRunEventName } from './payout-run-events';

type Handler = (event: PayoutRunEvent) => unknown;

/**
 * Finds the `@OnPayoutRunEvent()` methods of the app's providers at boot (as the webhook module
 * finds `@OnPaymentEvent()` ones) and hands them each event, one at a time, in order.
 */
@Injectable()
export class PayoutRunEventsDispatcher implements OnModuleInit {
  private readonly logger = new Logger(PAYMENTS_LOGGER_CONTEXT);
  private readonly handlers = new Map<PayoutRunEventName, Handler[]>();
  /** The delivery of the events emitted so far: the next one waits for it. */
  private delivered: Promise<void> = Promise.resolve();

  constructor(
    private readonly discovery: DiscoveryService,
    private readonly scanner: MetadataScanner,
    private readonly reflector: Reflector,
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
        const events = this.reflector.get<PayoutRunEventName[] | undefined>(
          PAYOUT_RUN_EVENT_HANDLER,
          target,
        );
        for (const event of events ?? []) {
          const list = this.handlers.get(event) ?? [];
          list.push((payload) => (target as Handler).call(instance, payload));
          this.handlers.set(event, list);
        }
      }
    }
  }

  /** Queues `event` for its handlers; never rejects (a failing handler is logged). */
  emit(event: PayoutRunEvent): void {
    const handlers = this.handlers.get(event.event);
    if (!handlers) return;
    this.delivered = this.delivered.then(async () => {
      for (const handler of handlers) {
        try {
          await handler(event);
        } catch (error) {
          this.logger.error(
            `An @OnPayoutRunEvent('${event.event}') handler failed: ${error instanceof Error ? error.message : 'error'}`,
          );
        }
      }
    });
  }

  /** Resolves when every event emitted so far was handled. */
  idle(): Promise<void> {
    return this.delivered;
  }
}

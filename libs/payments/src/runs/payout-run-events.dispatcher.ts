import { printsAsNameOnly } from '../secret-holders';
import { Injectable, Logger, OnModuleInit } from '@nestjs/common';
import { DiscoveryService, MetadataScanner, Reflector } from '@nestjs/core';
import { PAYMENTS_LOGGER_CONTEXT, PAYOUT_RUN_EVENT_HANDLER } from '../payments.constants';
import { type BoundHandler, decoratedMethods } from '../decorated-methods';
import type { PayoutRunEvent, PayoutRunEventName } from './payout-run-events';

/**
 * Finds the `@OnPayoutRunEvent()` methods of the app's providers at boot (as the webhook module
 * finds `@OnPaymentEvent()` ones) and hands them each event, one at a time, in order.
 */
@Injectable()
export class PayoutRunEventsDispatcher implements OnModuleInit {
  private readonly logger = new Logger(PAYMENTS_LOGGER_CONTEXT);
  private handlers = new Map<PayoutRunEventName, BoundHandler[]>();
  /** The delivery of the events emitted so far: the next one waits for it. */
  private delivered: Promise<void> = Promise.resolve();

  constructor(
    private readonly discovery: DiscoveryService,
    private readonly scanner: MetadataScanner,
    private readonly reflector: Reflector,
  ) {}

  onModuleInit(): void {
    this.handlers = decoratedMethods<PayoutRunEventName>(
      this.discovery,
      this.scanner,
      this.reflector,
      PAYOUT_RUN_EVENT_HANDLER,
    );
  }

  /** Queues `event` for its handlers; never rejects (a failing handler is logged). */
  emit(event: PayoutRunEvent): void {
    const handlers = this.handlers.get(event.event);
    if (!handlers) return;
    this.delivered = this.delivered.then(async () => {
      for (const handler of handlers) {
        try {
          await handler(event as never);
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

// It reaches Nest's container (and the options as the app wrote them) through what it injects.
printsAsNameOnly(PayoutRunEventsDispatcher.prototype, 'PayoutRunEventsDispatcher');

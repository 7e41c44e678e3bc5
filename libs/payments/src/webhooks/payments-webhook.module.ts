import {
  BadRequestException,
  Body,
  Controller,
  DynamicModule,
  Headers,
  HttpCode,
  Ip,
  Module,
  Post,
  Type,
  UnauthorizedException,
} from '@nestjs/common';
import { DiscoveryModule } from '@nestjs/core';
import { PaymentsValidationError } from '../errors';
import { parsePaymentWebhook } from './payment-webhook-event';
import {
  PaymentWebhookDispatch,
  PAYMENTS_WEBHOOK_STORE,
  PaymentsWebhookDispatcher,
} from './payments-webhook.dispatcher';
import { InMemoryPaymentsWebhookStore, PaymentsWebhookStore } from './payments-webhook.store';

/** Options of {@link PaymentsWebhookModule.forRoot}. */
export interface PaymentsWebhookModuleOptions {
  /** Route of the callback (the `callbackUrl` path). Default `webhooks/payments`. */
  path?: string;
  /** Deduplication store. Default: {@link InMemoryPaymentsWebhookStore}. */
  store?: PaymentsWebhookStore;
  /**
   * Decides whether a delivery is genuine (shared secret header, IP allow-list, signature...):
   * false answers 401 and runs nothing. The interface document defines no signing, so without it
   * anyone who can reach the route can post events: re-check important outcomes with the service.
   */
  verify?: (delivery: PaymentWebhookDelivery) => boolean | Promise<boolean>;
}

/** What `verify` sees of a delivery. */
export interface PaymentWebhookDelivery {
  headers: Record<string, string | string[] | undefined>;
  body: unknown;
  ip?: string;
}

/** The route is an option, and decorators take constants: the controller is made per registration. */
function createWebhookController(
  path: string,
  verify: PaymentsWebhookModuleOptions['verify'],
): Type {
  @Controller(path)
  class PaymentsWebhookController {
    constructor(private readonly dispatcher: PaymentsWebhookDispatcher) {}

    @Post()
    @HttpCode(200)
    async receive(
      @Body() body: unknown,
      @Headers() headers: PaymentWebhookDelivery['headers'],
      @Ip() ip: string,
    ): Promise<{ received: true } & PaymentWebhookDispatch> {
      if (verify && !(await verify({ headers, body, ip }))) {
        throw new UnauthorizedException('The webhook delivery could not be verified');
      }
      let event;
      try {
        event = parsePaymentWebhook(body);
      } catch (error) {
        if (error instanceof PaymentsValidationError) {
          throw new BadRequestException({
            statusCode: 400,
            message: error.message,
            errors: error.errors,
          });
        }
        throw error;
      }
      return { received: true, ...(await this.dispatcher.dispatch(event)) };
    }
  }
  return PaymentsWebhookController;
}

/**
 * Mounts the webhook route: `PaymentsWebhookModule.forRoot({ path: 'webhooks/payments' })`.
 * Deliveries are parsed into `PaymentWebhookEvent`s (400 when malformed), deduplicated, and
 * handed to the `@OnPaymentEvent()` methods of the app's providers.
 */
@Module({})
export class PaymentsWebhookModule {
  static forRoot(options: PaymentsWebhookModuleOptions = {}): DynamicModule {
    return {
      module: PaymentsWebhookModule,
      imports: [DiscoveryModule],
      controllers: [createWebhookController(options.path ?? 'webhooks/payments', options.verify)],
      providers: [
        {
          provide: PAYMENTS_WEBHOOK_STORE,
          useValue: options.store ?? new InMemoryPaymentsWebhookStore(),
        },
        PaymentsWebhookDispatcher,
      ],
      exports: [PaymentsWebhookDispatcher],
    };
  }
}

import {
  BadRequestException,
  Body,
  ConflictException,
  Controller,
  Headers,
  HttpCode,
  Inject,
  Ip,
  Post,
  Req,
  ServiceUnavailableException,
  Type,
  UnauthorizedException,
  UnsupportedMediaTypeException,
} from '@nestjs/common';
import { PaymentsValidationError } from '../errors';
import { type PaymentWebhookEvent, parsePaymentWebhook } from './payment-webhook-event';
import { PAYMENTS_WEBHOOK_OPTIONS } from '../payments.constants';
import {
  type PaymentWebhookDispatch,
  PaymentsWebhookDispatcher,
} from './payments-webhook.dispatcher';
import {
  PaymentWebhookBudgetError,
  PaymentWebhookBusyError,
  PaymentWebhookConcurrentFailureError,
  PaymentWebhookConfirmationError,
  PaymentWebhookContradictedError,
  PaymentWebhookNotFinalError,
  PaymentWebhookCallInFlightError,
  PaymentWebhookStoreError,
} from './payments-webhook.errors';
import type {
  PaymentsWebhookModuleOptions,
  PaymentWebhookDelivery,
} from './payments-webhook.interfaces';

/** Answer of an accepted delivery (HTTP 200). */
export type PaymentWebhookReceipt = { received: true } & PaymentWebhookDispatch;

/** The part of the platform's request the controller reads (Express and Fastify both have it). */
interface WebhookRequest {
  originalUrl?: string;
  url?: string;
  /** Set by Nest when the app was created with `rawBody: true`. */
  rawBody?: Buffer;
}

/**
 * `application/json`, with or without parameters. A form-encoded or text body would be a "simple"
 * cross-site request that any web page can make a browser send; JSON needs a CORS preflight.
 */
function isJson(contentType: string | string[] | undefined): boolean {
  const value = Array.isArray(contentType) ? contentType[0] : contentType;
  return value?.split(';')[0].trim().toLowerCase() === 'application/json';
}

/**
 * The webhook route. Statuses: 200 accepted (handled, or a duplicate of a processed event); 400
 * not a JSON object or no usable `transaction_reference`; 401 refused by `verify`; 409 contradicted
 * by the service's record; 415 not `application/json`; 500 a handler failed; 503 not confirmable
 * now (look-up failed, or the record still not final), a concurrent copy of a delivery that
 * failed, another delivery holds the event's claim (another instance is handling it), the store
 * failed (Redis unreachable), or the status look-up budget is spent (nothing was looked up). Every non-2xx leaves the event unprocessed, so a re-delivery is
 * handled in full.
 *
 * The route is an option, and decorators take constants: the controller is made per registration.
 */
export function createPaymentsWebhookController(path: string): Type {
  @Controller(path)
  class PaymentsWebhookController {
    constructor(
      @Inject(PAYMENTS_WEBHOOK_OPTIONS) private readonly options: PaymentsWebhookModuleOptions,
      private readonly dispatcher: PaymentsWebhookDispatcher,
    ) {}

    @Post()
    @HttpCode(200)
    async receive(
      @Body() body: unknown,
      @Headers() headers: PaymentWebhookDelivery['headers'],
      @Ip() ip: string,
      @Req() request: WebhookRequest,
    ): Promise<PaymentWebhookReceipt> {
      if (!isJson(headers['content-type'])) {
        throw new UnsupportedMediaTypeException('Webhook deliveries must be application/json');
      }
      const url = request.originalUrl ?? request.url;
      const { verify } = this.options;
      if (verify && !(await verify({ headers, body, rawBody: request.rawBody, ip, url }))) {
        throw new UnauthorizedException('The webhook delivery could not be verified');
      }
      let event: PaymentWebhookEvent;
      try {
        // After verify, which may need the body as it came (a signature over it). The URL too:
        // its `malipo_key` is written to the webhook store and logs as the call's key.
        event = parsePaymentWebhook(this.dispatcher.redacted(body), {
          url: this.dispatcher.redacted(url) as string,
        });
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
      try {
        return { received: true, ...(await this.dispatcher.dispatch(event)) };
      } catch (error) {
        // The reason is logged, not answered: it would tell a forger what to fix.
        if (error instanceof PaymentWebhookContradictedError) {
          throw new ConflictException("The event does not match the service's record");
        }
        if (error instanceof PaymentWebhookBusyError) {
          throw new ServiceUnavailableException(
            'The event is being processed by another delivery; deliver it again later',
          );
        }
        if (
          error instanceof PaymentWebhookConfirmationError ||
          error instanceof PaymentWebhookNotFinalError ||
          error instanceof PaymentWebhookCallInFlightError ||
          error instanceof PaymentWebhookConcurrentFailureError ||
          error instanceof PaymentWebhookStoreError ||
          error instanceof PaymentWebhookBudgetError
        ) {
          throw new ServiceUnavailableException(
            'The event could not be processed now; deliver it again',
          );
        }
        throw error;
      }
    }
  }
  return PaymentsWebhookController;
}

import { Body, Controller, HttpCode, Post, UsePipes, ValidationPipe } from '@nestjs/common';
import { ApiOperation, ApiTags } from '@nestjs/swagger';
import { OrdersService, WebhookOutcome } from '../orders/orders.service';
import { PaymentWebhookDto } from './payment-webhook.dto';

/** Receives the service's outcome callbacks (the `callbackUrl` of every request). */
@ApiTags('webhooks')
@Controller('webhooks')
export class WebhooksController {
  constructor(private readonly orders: OrdersService) {}

  @Post('payments')
  @HttpCode(200)
  @ApiOperation({ summary: 'Payment outcome callback; duplicates are acknowledged and ignored' })
  @UsePipes(new ValidationPipe({ transform: true, whitelist: false }))
  receive(@Body() payload: PaymentWebhookDto): { received: true; outcome: WebhookOutcome } {
    const outcome = this.orders.applyOutcome({
      transactionReference: payload.transaction_reference,
      status: payload.status,
      event: payload.event,
    });
    return { received: true, outcome };
  }
}

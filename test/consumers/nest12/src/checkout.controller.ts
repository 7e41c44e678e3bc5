import {
  Body,
  Controller,
  Get,
  NotFoundException,
  Param,
  Post,
  UseFilters,
} from '@nestjs/common';
import { CollectionsService, PaymentsExceptionFilter } from '@malipo/nestjs';
import { PaymentOutcomes } from './payment-outcomes.js';
import type { PaidCollection } from './payment-outcomes.js';

export interface MpesaCheckout {
  orderId: string;
  amount: number;
  phoneNumber: string;
}

@Controller('checkout')
// As in the README: a bad request or a reused key answers 400 naming the field and rule.
@UseFilters(PaymentsExceptionFilter)
export class CheckoutController {
  constructor(
    private readonly collections: CollectionsService,
    private readonly outcomes: PaymentOutcomes,
  ) {}

  /** Starts an M-Pesa STK push; the outcome arrives later by webhook. */
  @Post('mpesa')
  async mpesa(
    @Body() order: MpesaCheckout,
  ): Promise<{ reference: string; accepted: boolean }> {
    const response = await this.collections.mpesa(
      {
        amount: order.amount,
        phoneNumber: order.phoneNumber,
        narration: `Order ${order.orderId}`,
      },
      { idempotencyKey: `order-${order.orderId}` },
    );
    return {
      reference: response.transactionReference,
      accepted: response.success,
    };
  }

  /** The confirmed outcome of a collection, 404 until its webhook was handled. */
  @Get('outcomes/:reference')
  outcome(@Param('reference') reference: string): PaidCollection {
    const paid = this.outcomes.find(reference);
    if (!paid)
      throw new NotFoundException(`no confirmed payment for ${reference} yet`);
    return paid;
  }
}

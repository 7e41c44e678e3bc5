import {
  Body,
  Controller,
  Get,
  Param,
  ParseUUIDPipe,
  Post,
  UsePipes,
  ValidationPipe,
} from '@nestjs/common';
import { ApiOperation, ApiTags } from '@nestjs/swagger';
import {
  CardCollectionRequest,
  MerchantPayoutRequest,
  MpesaCollectionRequest,
  MpesaPayoutRequest,
  PanAfricanCollectionRequest,
  PanAfricanPayoutRequest,
} from '@malipo/nestjs';
import type { Order } from './order';
import { OrdersService } from './orders.service';

/** Takes orders and starts each of the six payment operations with the library's DTOs. */
@ApiTags('orders')
@Controller('orders')
@UsePipes(new ValidationPipe({ transform: true, whitelist: true, forbidNonWhitelisted: true }))
export class OrdersController {
  constructor(private readonly orders: OrdersService) {}

  @Post('collections/mpesa')
  @ApiOperation({ summary: 'Collect with an M-Pesa STK push' })
  collectMpesa(@Body() request: MpesaCollectionRequest): Promise<Order> {
    return this.orders.start('collections.mpesa', request);
  }

  @Post('collections/card')
  @ApiOperation({ summary: 'Collect through the hosted card checkout' })
  collectCard(@Body() request: CardCollectionRequest): Promise<Order> {
    return this.orders.start('collections.card', request);
  }

  @Post('collections/pan-african')
  @ApiOperation({ summary: 'Collect by pan-African mobile money or bank' })
  collectPanAfrican(@Body() request: PanAfricanCollectionRequest): Promise<Order> {
    return this.orders.start('collections.panAfrican', request);
  }

  @Post('payouts/mpesa')
  @ApiOperation({ summary: 'Pay out to an M-Pesa user' })
  payoutMpesa(@Body() request: MpesaPayoutRequest): Promise<Order> {
    return this.orders.start('payouts.mpesa', request);
  }

  @Post('payouts/pan-african')
  @ApiOperation({ summary: 'Pay out to a wallet or bank elsewhere in Africa' })
  payoutPanAfrican(@Body() request: PanAfricanPayoutRequest): Promise<Order> {
    return this.orders.start('payouts.panAfrican', request);
  }

  @Post('payouts/merchant')
  @ApiOperation({ summary: 'Pay a Kenyan Paybill or Till' })
  payoutMerchant(@Body() request: MerchantPayoutRequest): Promise<Order> {
    return this.orders.start('payouts.merchant', request);
  }

  @Get()
  @ApiOperation({ summary: 'List orders' })
  list(): Order[] {
    return this.orders.list();
  }

  @Get(':id')
  @ApiOperation({ summary: 'Show one order and its payment status' })
  get(@Param('id', new ParseUUIDPipe()) id: string): Order {
    return this.orders.get(id);
  }
}

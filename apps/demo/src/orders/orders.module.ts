import { Module } from '@nestjs/common';
import { OrderOutcomesHandler } from './order-outcomes.handler';
import { OrdersController } from './orders.controller';
import { OrdersService } from './orders.service';

@Module({
  controllers: [OrdersController],
  providers: [OrdersService, OrderOutcomesHandler],
  exports: [OrdersService],
})
export class OrdersModule {}

import { Body, Controller, Delete, Get, HttpCode, Param, Post, Put } from '@nestjs/common';
import { FaultsService } from './faults.service';
import { SandboxHttpError } from './http-io';
import { IdempotencyService } from './idempotency.service';
import { LedgerService, Transaction } from './ledger.service';
import { RateLimitService } from './rate-limit.service';
import { RequestLogEntry, RequestLogService } from './request-log.service';
import { SandboxTimers } from './sandbox-timers.service';
import { WebhookDispatcher } from './webhook.dispatcher';

/**
 * Test controls under `/__sandbox`: inspection, reset and fault injection. No authentication:
 * the sandbox listens on loopback by default and holds no real money.
 */
@Controller('__sandbox')
export class ControlController {
  constructor(
    private readonly ledger: LedgerService,
    private readonly requestLog: RequestLogService,
    private readonly faults: FaultsService,
    private readonly idempotency: IdempotencyService,
    private readonly timers: SandboxTimers,
    private readonly dispatcher: WebhookDispatcher,
    private readonly rateLimit: RateLimitService,
  ) {}

  @Get('transactions')
  transactions(): Transaction[] {
    return this.ledger.list();
  }

  @Get('transactions/:reference')
  transaction(@Param('reference') reference: string): Transaction {
    const transaction = this.ledger.get(reference);
    if (!transaction) {
      throw new SandboxHttpError(404, `No transaction with reference ${reference}`);
    }
    return transaction;
  }

  /** The default account's wallets. */
  @Get('wallets')
  wallets() {
    return this.ledger.wallets();
  }

  /** Both accounts and their wallets. */
  @Get('accounts')
  accounts() {
    return this.ledger.accounts();
  }

  @Get('requests')
  requests(): RequestLogEntry[] {
    return this.requestLog.list();
  }

  @Post('reset')
  @HttpCode(200)
  reset() {
    // Timers first, so no settlement or retry of the old ledger lands in the new one.
    this.timers.cancelAll();
    this.dispatcher.cancelAll();
    this.ledger.reset();
    this.requestLog.clear();
    this.faults.clear();
    this.idempotency.clear();
    this.rateLimit.restore();
    return { success: true, wallets: this.ledger.wallets() };
  }

  @Get('faults')
  listFaults() {
    return this.faults.snapshot();
  }

  @Post('faults')
  @HttpCode(200)
  addFault(@Body() body: unknown) {
    const fault = this.faults.enqueue(body);
    return { success: true, fault, ...this.faults.snapshot() };
  }

  @Post('faults/random')
  @HttpCode(200)
  randomFaults(@Body() body: unknown) {
    const random = this.faults.enableRandom(body);
    return { success: true, random };
  }

  @Delete('faults')
  clearFaults() {
    this.faults.clear();
    return { success: true, ...this.faults.snapshot() };
  }

  @Get('rate-limit')
  rateLimitInForce() {
    return { rateLimit: this.rateLimit.snapshot() };
  }

  @Put('rate-limit')
  setRateLimit(@Body() body: unknown) {
    return { success: true, rateLimit: this.rateLimit.set(body) };
  }

  @Delete('rate-limit')
  clearRateLimit() {
    this.rateLimit.clear();
    return { success: true, rateLimit: null };
  }
}

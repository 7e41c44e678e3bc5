import { Injectable } from '@nestjs/common';
import type { Balances } from './dto/lookups';
import { OPERATIONS } from './operations';
import type { PaymentsCallOptions } from './payments-options.interface';
import { OperationRunner } from './operation-runner';

/** Wallet balances of an account. */
@Injectable()
export class BalancesService {
  constructor(private readonly runner: OperationRunner) {}

  /**
   * Both wallets of `username` (default: `defaultUsername`), as
   * `GET /api/v1/accounts/{username}/all_balances` reports them.
   */
  all(username?: string, options?: PaymentsCallOptions): Promise<Balances> {
    return this.runner.execute(OPERATIONS.balancesAll, { username }, options);
  }
}

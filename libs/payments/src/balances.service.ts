import { Injectable } from '@nestjs/common';
import type { Balances } from './dto/lookups';
import { OPERATIONS } from './operations';
import type { PaymentsCallOptions } from './payments-options.interface';
import { PaymentsTransport } from './payments-transport';

/** Wallet balances of an account. */
@Injectable()
export class BalancesService {
  constructor(private readonly transport: PaymentsTransport) {}

  /**
   * Both wallets of `username` (default: `defaultUsername`), as
   * `GET /api/v1/accounts/{username}/all_balances` reports them.
   */
  all(username?: string, options?: PaymentsCallOptions): Promise<Balances> {
    return this.transport.execute(OPERATIONS.balancesAll, { username }, options);
  }
}

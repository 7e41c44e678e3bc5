import { Injectable } from '@nestjs/common';
import { BalancesService } from './balances.service';
import { CollectionsService } from './collections.service';
import { NetworksService } from './networks.service';
import type { PaymentsDefaults } from './payments-options.interface';
import { OperationRunner } from './operation-runner';
import { PayoutsService } from './payouts.service';
import { PaymentsReconciler } from './payments-reconciler';
import { TransactionsService } from './transactions.service';
import { TransfersService } from './transfers.service';

/** The whole client in one injectable: every service and the `defaults`. */
@Injectable()
export class PaymentsClient {
  constructor(
    /** Collections (pay-in). */
    readonly collections: CollectionsService,
    /** Payouts (disbursement). */
    readonly payouts: PayoutsService,
    /** Network discovery for pan-African requests. */
    readonly networks: NetworksService,
    /** Transaction status look-ups. */
    readonly transactions: TransactionsService,
    /** Wallet balances. */
    readonly balances: BalancesService,
    /** Transfers between accounts. */
    readonly transfers: TransfersService,
    private readonly runner: OperationRunner,
    /** The payments journal's answers and `reconcile()` (needs the `journal` option). */
    readonly reconciler: PaymentsReconciler,
  ) {}

  /** Client defaults (section 2.2). */
  get defaults(): PaymentsDefaults {
    return this.runner.defaults;
  }

  /**
   * Stops the client (the module does this when the app closes): new calls and calls waiting for
   * a retry reject with `code: 'CLIENT_CLOSED'`; attempts on the wire finish. Call it when a
   * client from {@link createPaymentsClient} is no longer needed, so the process can exit.
   */
  close(): Promise<void> {
    return this.runner.close();
  }
}

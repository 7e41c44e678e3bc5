import { Injectable } from '@nestjs/common';
import { CollectionsService } from './collections.service';
import type { PaymentsDefaults } from './payments-options.interface';
import { PaymentsTransport } from './payments-transport';
import { PayoutsService } from './payouts.service';

/** The whole client in one injectable: `collections`, `payouts` and `defaults`. */
@Injectable()
export class PaymentsClient {
  constructor(
    /** Collections (pay-in). */
    readonly collections: CollectionsService,
    /** Payouts (disbursement). */
    readonly payouts: PayoutsService,
    private readonly transport: PaymentsTransport,
  ) {}

  /** Client defaults (section 2.2). */
  get defaults(): PaymentsDefaults {
    return this.transport.defaults;
  }

  /**
   * Stops the client (the module does this when the app closes): new calls and calls waiting for
   * a retry reject with `code: 'CLIENT_CLOSED'`; attempts on the wire finish. Call it when a
   * client from {@link createPaymentsClient} is no longer needed, so the process can exit.
   */
  close(): Promise<void> {
    return this.transport.close();
  }
}

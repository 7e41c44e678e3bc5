import { Injectable } from '@nestjs/common';
import { CollectionsService } from './collections.service';
import type { PaymentsDefaults } from './payments-options.interface';
import { PayoutsService } from './payouts.service';

/** The whole client in one injectable: `collections`, `payouts` and `defaults`. */
@Injectable()
export class PaymentsClient {
  constructor(
    /** Collections (pay-in). */
    readonly collections: CollectionsService,
    /** Payouts (disbursement). */
    readonly payouts: PayoutsService,
  ) {}

  /** Client defaults (section 2.2). */
  get defaults(): PaymentsDefaults {
    return this.collections.defaults;
  }
}

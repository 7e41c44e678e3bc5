import { Injectable } from '@nestjs/common';
import {
  MerchantPayoutRequest,
  MpesaPayoutRequest,
  PanAfricanPayoutRequest,
} from './dto/payout-requests';
import type {
  MerchantPayoutResponse,
  MpesaPayoutResponse,
  PanAfricanPayoutResponse,
} from './dto/responses';
import { OPERATIONS } from './operations';
import type { PaymentsCallOptions, PaymentsDefaults } from './payments-options.interface';
import { OperationRunner } from './operation-runner';

/**
 * Payouts (disbursement). The funding wallet is the request's `walletType`, else the client's.
 * Retries reuse one idempotency key, so a retried payout is not executed twice by the service.
 */
@Injectable()
export class PayoutsService {
  constructor(private readonly runner: OperationRunner) {}

  /**
   * A key for `purpose` derived from the account's secret (payout-run item keys).
   * @internal
   */
  deriveKey(purpose: string): Buffer {
    return this.runner.deriveKey(purpose);
  }

  /** Client defaults (section 2.2). */
  get defaults(): PaymentsDefaults {
    return this.runner.defaults;
  }

  /** Payout to a Kenyan M-Pesa user. */
  mpesa(request: MpesaPayoutRequest, options?: PaymentsCallOptions): Promise<MpesaPayoutResponse> {
    return this.runner.execute(OPERATIONS.payoutsMpesa, request, options);
  }

  /** Payout to a mobile wallet or bank account elsewhere in Africa. */
  panAfrican(
    request: PanAfricanPayoutRequest,
    options?: PaymentsCallOptions,
  ): Promise<PanAfricanPayoutResponse> {
    return this.runner.execute(OPERATIONS.payoutsPanAfrican, request, options);
  }

  /** Payout to a Kenyan Paybill or Till. */
  merchant(
    request: MerchantPayoutRequest,
    options?: PaymentsCallOptions,
  ): Promise<MerchantPayoutResponse> {
    return this.runner.execute(OPERATIONS.payoutsMerchant, request, options);
  }
}

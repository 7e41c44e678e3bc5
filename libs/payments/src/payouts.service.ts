import type { SecretRedactor } from './secret-redactor';
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
import type { PaymentsOperation } from './operations';
import type { PaymentsJournalEntry } from './journal/payments-journal.interfaces';
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

  /**
   * The account's credentials redactor: payout runs redact with it what BullMQ keeps of a failure.
   * @internal
   */
  get credentialsRedactor(): SecretRedactor {
    return this.runner.credentialsRedactor;
  }

  /**
   * Whether the keys {@link deriveKey} gives come from `apiPassword`, which a rotation changes.
   * @internal
   */
  keysFromPassword(): boolean {
    return this.runner.keysFromPassword();
  }

  /**
   * Journals a payout as `state` under `idempotencyKey` without sending it, unless the key holds
   * an entry: payout runs fence an item whose worker stopped before it journaled the send
   * (`in_doubt`), and close the key of an item cancelled before it was sent (`refused`).
   * @internal
   */
  holdKey(
    operation: PaymentsOperation<object, unknown>,
    request: object,
    idempotencyKey: string,
    state: 'in_doubt' | 'refused',
    reason: string,
  ): Promise<PaymentsJournalEntry> {
    return this.runner.holdKey(operation, request, idempotencyKey, state, reason);
  }

  /**
   * Whether `entry` is of another payout than `request` (edited since it was journaled): payout
   * runs take an entry's state for an item unless it is.
   * @internal
   */
  journalsAnotherRequest(
    operation: PaymentsOperation<object, unknown>,
    request: object,
    entry: PaymentsJournalEntry,
  ): boolean {
    return this.runner.journalsAnotherRequest(operation, request, entry);
  }

  /**
   * `request` as a payout under `idempotencyKey` would be sent, nothing sent: payout runs check
   * every item before a run starts.
   * @throws PaymentsValidationError for a request that breaks a rule.
   * @internal
   */
  prepare(
    operation: PaymentsOperation<object, unknown>,
    request: unknown,
    idempotencyKey: string | undefined,
  ): object {
    return this.runner.prepare(operation, request, idempotencyKey);
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

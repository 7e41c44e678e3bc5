import { Injectable } from '@nestjs/common';
import type { TransactionStatus } from './dto/lookups';
import { OPERATIONS } from './operations';
import type { PaymentsCallOptions } from './payments-options.interface';
import { OperationRunner } from './operation-runner';

/** Transaction look-ups. A GET: safe to retry, so transient failures are always retried. */
@Injectable()
export class TransactionsService {
  constructor(private readonly runner: OperationRunner) {}

  /**
   * The service's record of one transaction (`GET /api/v1/status/{reference}`): use it to confirm
   * a webhook or to learn the outcome of a call whose answer was lost.
   */
  status(reference: string, options?: PaymentsCallOptions): Promise<TransactionStatus> {
    return this.runner.execute(OPERATIONS.transactionsStatus, { reference }, options);
  }
}

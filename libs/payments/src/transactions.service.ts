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

/**
 * `value` with the credentials of the client `transactions` belongs to redacted: a webhook's body
 * comes from whoever posts it, and its `_raw` must hold no credential either. `value` itself when
 * `transactions` is another class (a test double). @internal
 */
export function redactCredentialsOf(transactions: TransactionsService, value: unknown): unknown {
  // The runner is private to the service: read here only, for the webhook module.
  const runner: unknown = transactions['runner'];
  return runner instanceof OperationRunner ? runner.redactCredentials(value) : value;
}

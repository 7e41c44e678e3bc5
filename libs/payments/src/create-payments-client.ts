import { BalancesService } from './balances.service';
import { CollectionsService } from './collections.service';
import { NetworksService } from './networks.service';
import { PaymentsClient } from './payments-client';
import { createPaymentsHttpService, HttpPaymentsWire } from './http-payments-wire';
import { resolvePaymentsOptions } from './payments-options';
import type { PaymentsModuleOptions } from './payments-options.interface';
import { OperationRunner } from './operation-runner';
import { PayoutsService } from './payouts.service';
import { PaymentsReconciler } from './payments-reconciler';
import { TransactionsService } from './transactions.service';
import { TransfersService } from './transfers.service';

/**
 * The client without a Nest application (scripts, workers, queues): same validation, retries,
 * logging and errors as the module.
 * @throws PaymentsValidationError when the options are invalid.
 */
export function createPaymentsClient(options: PaymentsModuleOptions): PaymentsClient {
  const resolved = resolvePaymentsOptions(options);
  const wire = new HttpPaymentsWire(createPaymentsHttpService(resolved), resolved);
  const transport = new OperationRunner(wire, resolved);
  const transactions = new TransactionsService(transport);
  return new PaymentsClient(
    new CollectionsService(transport),
    new PayoutsService(transport),
    new NetworksService(transport),
    transactions,
    new BalancesService(transport),
    new TransfersService(transport),
    transport,
    new PaymentsReconciler(transport, transactions),
  );
}

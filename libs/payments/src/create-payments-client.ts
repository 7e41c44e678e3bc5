import { CollectionsService } from './collections.service';
import { PaymentsClient } from './payments.client';
import { createPaymentsHttpService } from './payments-http';
import { resolvePaymentsOptions } from './payments-options';
import type { PaymentsModuleOptions } from './payments-options.interface';
import { PaymentsTransport } from './payments-transport';
import { PayoutsService } from './payouts.service';

/**
 * The client without a Nest application (scripts, workers, queues): same validation, retries,
 * logging and errors as the module.
 * @throws PaymentsValidationError when the options are invalid.
 */
export function createPaymentsClient(options: PaymentsModuleOptions): PaymentsClient {
  const resolved = resolvePaymentsOptions(options);
  const transport = new PaymentsTransport(createPaymentsHttpService(resolved), resolved);
  return new PaymentsClient(
    new CollectionsService(transport),
    new PayoutsService(transport),
    transport,
  );
}

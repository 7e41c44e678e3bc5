import { assertKnownOptions, moduleOptionError } from '../known-options';
import type { PaymentsWebhookModuleOptions } from './payments-webhook.interfaces';

/** Every option of the module: a key not here is a typo, refused rather than ignored. */
const OPTION_NAMES: Readonly<Record<keyof PaymentsWebhookModuleOptions, true>> = {
  confirm: true,
  account: true,
  store: true,
  leaseMs: true,
  pendingRecheckDelaysMs: true,
  inFlightHoldMs: true,
  lookupBudget: true,
  foreignLookupBudget: true,
  unjournaledEvents: true,
  unknownReferenceTtlMs: true,
  verify: true,
};

/** The values an option may only take: a misspelt one would fall back to the weaker default. */
const CHOICES: Partial<Record<keyof PaymentsWebhookModuleOptions, readonly unknown[]>> = {
  confirm: [true, false],
  unjournaledEvents: ['confirm', 'refuse'],
};

/**
 * Fails the boot on an option that is not one (`confrim`), or a value outside its choices
 * (`unjournaledEvents: 'Refuse'` would confirm what it was meant to refuse).
 * @throws PaymentsValidationError naming the option.
 */
export function checkPaymentsWebhookOptions(options: PaymentsWebhookModuleOptions): void {
  assertKnownOptions(
    'PaymentsWebhookModule',
    options,
    OPTION_NAMES,
    '; path is given beside them to forRoot, and beside useFactory to forRootAsync',
  );
  for (const [name, allowed] of Object.entries(CHOICES)) {
    const value: unknown = options[name as keyof PaymentsWebhookModuleOptions];
    if (value !== undefined && !allowed.includes(value)) {
      throw moduleOptionError(
        'PaymentsWebhookModule',
        name,
        'isIn',
        `${name} must be one of ${allowed.map((choice) => JSON.stringify(choice)).join(', ')}`,
      );
    }
  }
}

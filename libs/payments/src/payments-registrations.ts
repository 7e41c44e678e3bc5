import { forwardRef, Inject, Injectable, type OnModuleInit } from '@nestjs/common';
import type { ModulesContainer } from '@nestjs/core';
import {
  DEFAULT_REGISTRATION_NAME,
  PAYMENTS_HTTP_SERVICE,
  PAYMENTS_REGISTRATION_NAME,
  PAYMENTS_RESOLVED_OPTIONS,
} from './payments.constants';
import type { ResolvedPaymentsOptions } from './payments-options';
import { moduleOptionError } from './known-options';
import { registrationNameOf } from './registration-lookup';
import { printsAsNameOnly } from './secret-holders';

/** What tells one account at the service from another. */
const ACCOUNT_OPTIONS = ['baseUrl', 'apiUsername', 'apiPassword'] as const;

/** An account option as it tells accounts apart: `https://x` and `https://x/` are one service. */
function accountOption(
  options: ResolvedPaymentsOptions,
  option: (typeof ACCOUNT_OPTIONS)[number],
): string {
  const value = options[option];
  return option === 'baseUrl' && URL.canParse(value) ? new URL(value).href : value;
}

/**
 * Nest's container of the app's modules, named only when Nest injects it: the main entry point
 * must not load `@nestjs/core` (scripts/verify-package.js), which the app has loaded by then.
 */
const MODULES_CONTAINER = forwardRef(
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  () => (require('@nestjs/core') as { ModulesContainer: typeof ModulesContainer }).ModulesContainer,
);

/**
 * Fails the boot when another `PaymentsModule` registration of the app has this one's name (or
 * neither has one) but another account: the journal files calls under the name, and the webhook
 * and runs modules find a registration's services by it, so one account's calls would be looked up,
 * settled or sent with the other's credentials. The same account twice (a feature module each) is
 * fine.
 * @internal
 */
@Injectable()
export class PaymentsRegistrationCheck implements OnModuleInit {
  constructor(
    @Inject(MODULES_CONTAINER) private readonly modules: ModulesContainer,
    @Inject(PAYMENTS_REGISTRATION_NAME) private readonly name: string,
    @Inject(PAYMENTS_RESOLVED_OPTIONS) private readonly options: ResolvedPaymentsOptions,
  ) {}

  onModuleInit(): void {
    for (const module of this.modules.values()) {
      const { providers } = module;
      if (!providers.has(PAYMENTS_HTTP_SERVICE)) continue;
      const other = providers.get(PAYMENTS_RESOLVED_OPTIONS)?.instance as
        ResolvedPaymentsOptions | undefined;
      if (!other || other === this.options) continue;
      if (registrationNameOf(module) !== this.name) continue;
      // Names of the options only: their values are credentials.
      const differing = ACCOUNT_OPTIONS.filter(
        (option) => accountOption(other, option) !== accountOption(this.options, option),
      );
      if (differing.length === 0) continue;
      throw moduleOptionError(
        'PaymentsModule',
        'name',
        'isUnique',
        `Two PaymentsModule registrations are named "${this.name}"` +
          `${this.name === DEFAULT_REGISTRATION_NAME ? ' (or have no name)' : ''} with different accounts ` +
          `(${differing.join(', ')} ${differing.length === 1 ? 'differs' : 'differ'}): the payments journal files calls by name, and the ` +
          'webhook and payout-run modules find a registration by it, so one account would act ' +
          "with the other's credentials. Give each account its own name (forRoot({ ..., name })).",
      );
    }
  }
}

// It holds the app's module container and the resolved options, credentials included.
printsAsNameOnly(PaymentsRegistrationCheck.prototype, 'PaymentsRegistrationCheck');

import { forwardRef, Inject, Injectable, type OnModuleInit } from '@nestjs/common';
import type { ModulesContainer } from '@nestjs/core';
import {
  DEFAULT_REGISTRATION_NAME,
  PAYMENTS_HTTP_SERVICE,
  PAYMENTS_REGISTRATION_NAME,
  PAYMENTS_RESOLVED_OPTIONS,
} from './payments.constants';
import type { ResolvedPaymentsOptions } from './payments-options';
import { InMemoryPaymentsJournal } from './journal/in-memory-payments-journal';
import type { PaymentsJournalStore } from './journal/payments-journal.interfaces';
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

/** Where a store keeps its entries, when it says (an in-memory journal does not). */
const locationOf = (store: PaymentsJournalStore): string | undefined => store.location;

/**
 * How two registrations of one account keep their calls apart, or undefined when they share a
 * journal: one with a journal and one without, two in-memory journals, journals of two kinds, or
 * one journal fingerprinting with two keys (a retry through the other would be refused as
 * another request), or two stores of one kind naming two locations. Two stores of one kind
 * otherwise (two `RedisPaymentsJournal` on one Redis and prefix, a feature module each) are taken
 * for one.
 */
function journalsApart(
  one: ResolvedPaymentsOptions,
  other: ResolvedPaymentsOptions,
): string | undefined {
  const [a, b] = [one.journal, other.journal];
  if (a === undefined && b === undefined) return undefined;
  if (a === undefined || b === undefined) return 'a journal in one and none in the other';
  if (a !== b && a instanceof InMemoryPaymentsJournal && b instanceof InMemoryPaymentsJournal) {
    return 'an InMemoryPaymentsJournal each';
  }
  if (a.constructor !== b.constructor) {
    return `journals of two kinds (${a.constructor.name} and ${b.constructor.name})`;
  }
  const [here, there] = [locationOf(a), locationOf(b)];
  if (here !== undefined && there !== undefined && here !== there) {
    return `journals in two places (${here} and ${there})`;
  }
  if (one.journalFingerprintSecret !== other.journalFingerprintSecret) {
    return 'journalFingerprintSecret set differently';
  }
  return undefined;
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
 * fine, with one journal: a call journaled by one and not by the other would be sent twice.
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
      if (differing.length === 0) {
        const apart = journalsApart(other, this.options);
        if (apart === undefined) continue;
        throw moduleOptionError(
          'PaymentsModule',
          'journal',
          'isShared',
          `Two PaymentsModule registrations of one account are named "${this.name}"` +
            `${this.name === DEFAULT_REGISTRATION_NAME ? ' (or have no name)' : ''}, with ${apart}: ` +
            'a call journaled through one is unknown to the other, which would send its key again. ' +
            'Register the account once (isGlobal: true, or a module that exports it), or give both ' +
            'the same journal.',
        );
      }
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

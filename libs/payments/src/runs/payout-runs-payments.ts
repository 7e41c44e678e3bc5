import { printsAsNameOnly } from '../secret-holders';
import { Inject, Injectable, type InjectionToken, OnModuleInit } from '@nestjs/common';
import { ModuleRef, ModulesContainer } from '@nestjs/core';
import type { BalancesService } from '../balances.service';
import type { PaymentsClient } from '../payments-client';
import type { PaymentsReconciler } from '../payments-reconciler';
import type { PayoutsService } from '../payouts.service';
import { moduleOptionError } from '../known-options';
import { PaymentsValidationError } from '../errors';
import { registrationProvider } from '../registration-lookup';
import { PAYOUT_RUNS_OPTIONS } from '../payments.constants';
import {
  getBalancesToken,
  getPaymentsClientToken,
  getPaymentsReconcilerToken,
  getPayoutsToken,
} from '../payments.decorators';

/**
 * The services of the app's `PaymentsModule` a run goes through, found at boot by token (as the
 * webhook module finds its `TransactionsService`), so a run's payouts are the library's own calls:
 * validation, journal, retries and redaction included.
 */
@Injectable()
export class PayoutRunsPayments implements OnModuleInit {
  private services?: {
    payouts: PayoutsService;
    balances: BalancesService;
    reconciler: PaymentsReconciler;
  };

  /** The module's `account`: the rest of its options (the item key secret) is not kept here. */
  private readonly account: string | undefined;

  constructor(
    // Typed with `account` only: the options also name the engine.
    @Inject(PAYOUT_RUNS_OPTIONS) options: { readonly account?: string },
    private readonly moduleRef: ModuleRef,
    private readonly modules: ModulesContainer,
  ) {
    this.account = options.account;
  }

  /**
   * Fails the boot, not a run, when the payments module, its journal or its `defaultUsername` is
   * missing.
   */
  onModuleInit(): void {
    const { account } = this;
    const which = account ? `PaymentsModule registration named "${account}"` : 'PaymentsModule';
    let services: NonNullable<typeof this.services>;
    let username: string | undefined;
    try {
      const of = <T>(token: InjectionToken): T =>
        registrationProvider<T>(this.moduleRef, this.modules, token, account);
      username = of<PaymentsClient>(getPaymentsClientToken(account)).defaults.username;
      services = {
        payouts: of<PayoutsService>(getPayoutsToken(account)),
        balances: of<BalancesService>(getBalancesToken(account)),
        reconciler: of<PaymentsReconciler>(getPaymentsReconcilerToken(account)),
      };
    } catch (error) {
      // A registration that is there but request-scoped says so itself.
      if (error instanceof PaymentsValidationError) throw error;
      throw moduleOptionError(
        'PayoutRunsModule',
        'account',
        'isRegistered',
        `PayoutRunsModule sends payouts with the ${which}, and the app has none. Import ` +
          `PaymentsModule.forRoot({ ..., journal${account ? `, name: '${account}'` : ''} }) in the app, or set the option account to the name of a registration.`,
      );
    }
    // Exactly once per item rests on the journal: without it a re-sent item could pay twice.
    if (!services.reconciler.enabled) {
      throw moduleOptionError(
        'PaymentsModule',
        'journal',
        'isNotEmpty',
        `PayoutRunsModule needs the payments journal: the ${which} has no journal option ` +
          '(InMemoryPaymentsJournal, RedisPaymentsJournal or your own store; in a unit test, ' +
          "PaymentsTestingModule's journal option; docs/payout-runs.md).",
      );
    }
    // Every run's balance check reads the wallets of this username (`balances.all()`).
    if (!username?.trim()) {
      throw moduleOptionError(
        'PaymentsModule',
        'defaultUsername',
        'isNotEmpty',
        `PayoutRunsModule checks the balance of the account before each run, by its ` +
          `defaultUsername: the ${which} has none. Set defaultUsername to the account's username ` +
          'at the service (docs/payout-runs.md).',
      );
    }
    this.services = services;
  }

  get payouts(): PayoutsService {
    return this.resolved().payouts;
  }

  /** The digest of the account runs are sent through (its `apiUsername`). */
  accountDigest(): string {
    return this.resolved().payouts.accountDigest();
  }

  get balances(): BalancesService {
    return this.resolved().balances;
  }

  get reconciler(): PaymentsReconciler {
    return this.resolved().reconciler;
  }

  private resolved(): NonNullable<typeof this.services> {
    if (!this.services) throw new Error('PayoutRunsModule is not initialised yet');
    return this.services;
  }
}

// It reaches Nest's container (and the options as the app wrote them) through what it injects.
printsAsNameOnly(PayoutRunsPayments.prototype, 'PayoutRunsPayments');

import { createHash } from 'node:crypto';
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
    /** The account's username at the service (`defaultUsername`). */
    username: string;
  };
  private digest?: string;

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
    let services: Omit<NonNullable<typeof this.services>, 'username'>;
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
    this.services = { ...services, username };
  }

  /** The account's username at the service (`defaultUsername`): every run pays from it. */
  get username(): string {
    return this.resolved().username;
  }

  get payouts(): PayoutsService {
    return this.resolved().payouts;
  }

  /**
   * A digest of the payment account runs are sent from: its username at the service
   * (`defaultUsername`, which names the account; not the API user, which a rotation of API keys
   * may change, nor the `baseUrl`, which instances may reach through a relay or a proxy). A run
   * is marked with it, so that an app of another account sharing the store never pays it.
   */
  accountDigest(): string {
    this.digest ??= createHash('sha256')
      .update(`malipo payment account v1\n${this.resolved().username}`)
      .digest('hex')
      .slice(0, 32);
    return this.digest;
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

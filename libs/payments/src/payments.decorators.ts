import { Inject } from '@nestjs/common';
import { namedServiceToken } from './payments.constants';
import { BalancesService } from './balances.service';
import { CollectionsService } from './collections.service';
import { NetworksService } from './networks.service';
import { PaymentsClient } from './payments-client';
import { PaymentsReconciler } from './payments-reconciler';
import { PayoutsService } from './payouts.service';
import { TransactionsService } from './transactions.service';
import { TransfersService } from './transfers.service';

/** What a registration exports, by name. */
export const EXPORTED_SERVICES = {
  CollectionsService,
  PayoutsService,
  NetworksService,
  TransactionsService,
  BalancesService,
  TransfersService,
  PaymentsReconciler,
  PaymentsClient,
} as const;
type Exported = keyof typeof EXPORTED_SERVICES;

function tokenOf<K extends Exported>(
  what: K,
  name: string | undefined,
): string | (typeof EXPORTED_SERVICES)[K] {
  return name ? namedServiceToken(name, what) : EXPORTED_SERVICES[what];
}

/** Injection token of the `CollectionsService` of the registration `name` (default: the unnamed one). */
export const getCollectionsToken = (name?: string) => tokenOf('CollectionsService', name);
/** Injection token of the `PayoutsService` of the registration `name`. */
export const getPayoutsToken = (name?: string) => tokenOf('PayoutsService', name);
/** Injection token of the `NetworksService` of the registration `name`. */
export const getNetworksToken = (name?: string) => tokenOf('NetworksService', name);
/** Injection token of the `TransactionsService` of the registration `name`. */
export const getTransactionsToken = (name?: string) => tokenOf('TransactionsService', name);
/** Injection token of the `BalancesService` of the registration `name`. */
export const getBalancesToken = (name?: string) => tokenOf('BalancesService', name);
/** Injection token of the `TransfersService` of the registration `name`. */
export const getTransfersToken = (name?: string) => tokenOf('TransfersService', name);
/** Injection token of the `PaymentsReconciler` of the registration `name`. */
export const getPaymentsReconcilerToken = (name?: string) => tokenOf('PaymentsReconciler', name);
/** Injection token of the `PaymentsClient` of the registration `name`. */
export const getPaymentsClientToken = (name?: string) => tokenOf('PaymentsClient', name);

/** Injects the `CollectionsService` of the registration `name`: `@InjectCollections('kes')`. */
export const InjectCollections = (name?: string) => Inject(getCollectionsToken(name));
/** Injects the `PayoutsService` of the registration `name`: `@InjectPayouts('usd')`. */
export const InjectPayouts = (name?: string) => Inject(getPayoutsToken(name));
/** Injects the `NetworksService` of the registration `name`. */
export const InjectNetworks = (name?: string) => Inject(getNetworksToken(name));
/** Injects the `TransactionsService` of the registration `name`. */
export const InjectTransactions = (name?: string) => Inject(getTransactionsToken(name));
/** Injects the `BalancesService` of the registration `name`. */
export const InjectBalances = (name?: string) => Inject(getBalancesToken(name));
/** Injects the `TransfersService` of the registration `name`. */
export const InjectTransfers = (name?: string) => Inject(getTransfersToken(name));
/** Injects the `PaymentsReconciler` of the registration `name`. */
export const InjectPaymentsReconciler = (name?: string) => Inject(getPaymentsReconcilerToken(name));
/** Injects the `PaymentsClient` of the registration `name`. */
export const InjectPaymentsClient = (name?: string) => Inject(getPaymentsClientToken(name));

/** Aliases of a named registration's services under their named tokens. */
export function namedProviders(name: string) {
  return (Object.keys(EXPORTED_SERVICES) as Exported[]).map((what) => ({
    provide: tokenOf(what, name) as string,
    useExisting: EXPORTED_SERVICES[what],
  }));
}

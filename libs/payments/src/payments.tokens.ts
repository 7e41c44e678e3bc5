import { Inject } from '@nestjs/common';
import { CollectionsService } from './collections.service';
import { PaymentsClient } from './payments.client';
import { PayoutsService } from './payouts.service';

/** What a named registration exports, by name. */
const EXPORTED = { CollectionsService, PayoutsService, PaymentsClient } as const;
type Exported = keyof typeof EXPORTED;

function namedToken(name: string, what: Exported): string {
  return `MalipoPayments:${name}:${what}`;
}

/** Injection token of the `CollectionsService` of the registration `name` (default: the unnamed one). */
export function getCollectionsToken(name?: string): string | typeof CollectionsService {
  return name ? namedToken(name, 'CollectionsService') : CollectionsService;
}

/** Injection token of the `PayoutsService` of the registration `name` (default: the unnamed one). */
export function getPayoutsToken(name?: string): string | typeof PayoutsService {
  return name ? namedToken(name, 'PayoutsService') : PayoutsService;
}

/** Injection token of the `PaymentsClient` of the registration `name` (default: the unnamed one). */
export function getPaymentsClientToken(name?: string): string | typeof PaymentsClient {
  return name ? namedToken(name, 'PaymentsClient') : PaymentsClient;
}

/** Injects the `CollectionsService` of the registration `name`: `@InjectCollections('kes')`. */
export const InjectCollections = (name?: string) => Inject(getCollectionsToken(name));
/** Injects the `PayoutsService` of the registration `name`: `@InjectPayouts('usd')`. */
export const InjectPayouts = (name?: string) => Inject(getPayoutsToken(name));
/** Injects the `PaymentsClient` of the registration `name`. */
export const InjectPaymentsClient = (name?: string) => Inject(getPaymentsClientToken(name));

/** Aliases of a named registration's services under their named tokens. */
export function namedProviders(name: string) {
  return (Object.keys(EXPORTED) as Exported[]).map((what) => ({
    provide: namedToken(name, what),
    useExisting: EXPORTED[what],
  }));
}

import { Injectable } from '@nestjs/common';
import type {
  Network,
  NetworkDiscovery,
  NetworkRequestFields,
  NetworkTransactionType,
} from './dto/lookups';
import { REQUEST_RULES } from './request-rules';
import type { AccountType } from './request-rules';
import { PaymentsValidationError } from './errors';
import { OPERATIONS } from './operations';
import type { PaymentsCallOptions } from './payments-options.interface';
import { OperationRunner } from './operation-runner';

/** Network discovery: where the `networkCode`, `channelId` and provider of a pan-African request come from. */
@Injectable()
export class NetworksService {
  constructor(private readonly runner: OperationRunner) {}

  /**
   * The mobile-money networks and banks of one country (`GET /v2/networks/grouped`).
   * @param transactionType `receipt` for collections, `withdrawal` for payouts.
   * @param dialCode the country's dial code, e.g. `+234`.
   */
  discover(
    transactionType: NetworkTransactionType,
    dialCode: string,
    options?: PaymentsCallOptions,
  ): Promise<NetworkDiscovery> {
    return this.runner.execute(OPERATIONS.networksDiscover, { transactionType, dialCode }, options);
  }
}

/** Longest part of a caller's network name shown in an error message. */
const MAX_SHOWN_NAME_LENGTH = 64;

/**
 * The network whose name matches `name` (case-insensitive; an exact name wins over a partial
 * one), among the mobile networks, the banks, or both. Never a guess: a name that matches several
 * networks (`Bank`) is refused, since a payout would go to whichever came first.
 * @throws PaymentsValidationError naming the networks on offer when none or several match.
 */
export function findNetwork(
  discovery: Pick<NetworkDiscovery, 'mobile' | 'banks'>,
  name: string,
  among: 'mobile' | 'banks' | 'all' = 'all',
): Network {
  const candidates = among === 'all' ? [...discovery.mobile, ...discovery.banks] : discovery[among];
  const wanted = name.trim().toLowerCase();
  const exact = candidates.filter((network) => network.name.toLowerCase() === wanted);
  const matches =
    exact.length > 0 || wanted === ''
      ? exact
      : candidates.filter((network) => network.name.toLowerCase().includes(wanted));
  if (matches.length === 1) return matches[0];
  const shown = JSON.stringify(name.slice(0, MAX_SHOWN_NAME_LENGTH));
  const kind = among === 'all' ? 'network' : `${among} network`;
  const names = (networks: readonly Network[]) =>
    networks.map((network) => network.name).join(', ') || 'none';
  throw new PaymentsValidationError('Network', [
    matches.length === 0
      ? {
          field: 'name',
          rule: 'isKnownNetwork',
          message: `no ${kind} matches the name ${shown}; on offer: ${names(candidates)}`,
        }
      : {
          field: 'name',
          rule: 'isUniqueNetwork',
          message: `the name ${shown} matches more than one ${kind}: ${names(matches)}; give the whole name`,
        },
  ]);
}

/**
 * The fields of a pan-African collection or payout that come from `network`: spread them into
 * the request (`{ ...toNetworkRequestFields(network), amount, ... }`).
 * @throws PaymentsValidationError when the network's `accountNumberType` is neither bank nor phone.
 */
export function toNetworkRequestFields(network: Network): NetworkRequestFields {
  const channel = network.accountNumberType;
  if (!(REQUEST_RULES.accountTypes as readonly string[]).includes(channel)) {
    throw new PaymentsValidationError('Network', [
      {
        field: 'accountNumberType',
        rule: 'isIn',
        message: 'accountNumberType must be "bank" or "phone"',
      },
    ]);
  }
  return {
    networkCode: network.id,
    channelId: network.selectedChannelId,
    transactionChannel: channel as AccountType,
    providerName: network.name,
    providerCode: network.code,
  };
}

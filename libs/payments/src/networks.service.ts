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

/**
 * The network whose name matches `name` (case-insensitive; an exact name wins over a partial
 * one), among the mobile networks, the banks, or both.
 * @throws PaymentsValidationError naming the networks on offer when none matches.
 */
export function findNetwork(
  discovery: Pick<NetworkDiscovery, 'mobile' | 'banks'>,
  name: string,
  among: 'mobile' | 'banks' | 'all' = 'all',
): Network {
  const candidates = among === 'all' ? [...discovery.mobile, ...discovery.banks] : discovery[among];
  const wanted = name.trim().toLowerCase();
  const found =
    candidates.find((network) => network.name.toLowerCase() === wanted) ??
    (wanted === ''
      ? undefined
      : candidates.find((network) => network.name.toLowerCase().includes(wanted)));
  if (found) return found;
  const offered = candidates.map((network) => network.name).join(', ') || 'none';
  throw new PaymentsValidationError('Network', [
    {
      field: 'name',
      rule: 'isKnownNetwork',
      message: `no ${among === 'all' ? '' : `${among} `}network matches the name; on offer: ${offered}`,
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

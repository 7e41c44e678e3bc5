import type { NetworkTransactionType } from './networks';
import { findNetwork } from './networks';
import type { FieldSpec } from './wire-validation';
import { rule, WIRE_RULES } from './wire-validation';

/**
 * The sandbox's own names of the service's operations (the wire contract's names). The sandbox
 * keeps its own list: it emulates the service, it does not follow the client library.
 */
export const OPERATION_NAMES = [
  'collections.mpesa',
  'collections.card',
  'collections.panAfrican',
  'payouts.mpesa',
  'payouts.panAfrican',
  'payouts.merchant',
  'transfers.send',
  'networks.discover',
  'transactions.status',
  'balances.all',
] as const;
export type OperationName = (typeof OPERATION_NAMES)[number];

/** The operations that take a JSON body and move money. */
export type MoneyOperationName = Extract<
  OperationName,
  `collections.${string}` | `payouts.${string}` | 'transfers.send'
>;
/** The read-only look-ups (GET). */
export type LookupName = Exclude<OperationName, MoneyOperationName>;

/** The five POST paths. */
export const POST_PATHS = [
  '/api/v2/payments',
  '/api/v3/payments',
  '/api/v2/withdrawal',
  '/api/v3/withdrawal',
  '/api/v2/p2p',
] as const;
export type PostPath = (typeof POST_PATHS)[number];

/** The GET look-ups: route template (as the README and fault `path` spell it) and Nest route. */
export const LOOKUPS: Readonly<
  Record<LookupName, { template: string; route: string; pattern: RegExp }>
> = {
  'networks.discover': {
    template: '/v2/networks/grouped',
    route: '/v2/networks/grouped',
    pattern: /^\/v2\/networks\/grouped$/i,
  },
  'transactions.status': {
    template: '/api/v1/status/{reference}',
    route: '/api/v1/status/:reference',
    pattern: /^\/api\/v1\/status\/[^/]+$/i,
  },
  'balances.all': {
    template: '/api/v1/accounts/{username}/all_balances',
    route: '/api/v1/accounts/:username/all_balances',
    pattern: /^\/api\/v1\/accounts\/[^/]+\/all_balances$/i,
  },
};

/** Every API route (POST paths and look-up templates): what fault injection can target. */
export const API_ROUTES: readonly string[] = [
  ...POST_PATHS,
  ...Object.values(LOOKUPS).map((l) => l.template),
];

export type WireBody = Record<string, unknown>;

/** Kenyan operations fail with result_code 1 and status ""; pan-African ones with 3000, "failed". */
export type Region = 'kenya' | 'panAfrican' | 'internal';

export interface SandboxOperation {
  readonly name: MoneyOperationName;
  readonly kind: 'collection' | 'payout' | 'transfer';
  readonly region: Region;
  readonly path: PostPath;
  /** On the shared `/api/v2/payments`: the `channel` values that pick this operation. */
  readonly dispatch?: readonly string[];
  /** The wire keys of the contract's "Request bodies" table and their rules. */
  readonly fields: Readonly<Record<string, FieldSpec>>;
  /** Rules across keys (network look-ups), run once every key passed. */
  crossChecks?(body: WireBody): string[];
  /** `message` of the acceptance answer (absent for a pan-African bank collection). */
  readonly message: string;
  /** Settled by the customer on the hosted checkout page instead of automatically. */
  viaCheckout(body: WireBody): boolean;
}

const kes = WIRE_RULES.kesMobileMoneyAmount;

/** Every money operation the sandbox serves, as data: paths, dispatch, wire keys and rules. */
export const SANDBOX_OPERATIONS: Readonly<Record<MoneyOperationName, SandboxOperation>> = {
  'collections.mpesa': {
    name: 'collections.mpesa',
    kind: 'collection',
    region: 'kenya',
    path: '/api/v2/payments',
    dispatch: ['MOBILE_MONEY_KE'],
    fields: {
      username: rule.text(),
      channel: rule.constant('MOBILE_MONEY_KE'),
      amount: rule.amount({ min: kes.min, max: kes.max }),
      phone_number: rule.phone('kenyanLocal'),
      narration: rule.text(),
      currency: rule.constant('KES'),
      callback_url: rule.url(),
    },
    message: 'Processed successfully',
    viaCheckout: () => false,
  },
  'collections.card': {
    name: 'collections.card',
    kind: 'collection',
    region: 'kenya',
    path: '/api/v2/payments',
    dispatch: ['card'],
    fields: {
      username: rule.text(),
      channel: rule.constant('card'),
      payment_method: rule.constant('card'),
      amount: rule.amount({ min: WIRE_RULES.cardAmount.min }),
      phone_number: rule.phone('kenyanLocal'),
      narration: rule.text(),
      currency: rule.constant('KES'),
      callback_url: rule.url(),
    },
    message: 'Payment request sent successfully',
    viaCheckout: () => true,
  },
  'collections.panAfrican': {
    name: 'collections.panAfrican',
    kind: 'collection',
    region: 'panAfrican',
    path: '/api/v3/payments',
    fields: {
      username: rule.text(),
      account_name: rule.accountType(),
      amount: rule.amount({ positive: true }),
      phone_number: rule.phone('international'),
      account_number: rule.text(),
      network_code: rule.text(),
      channel_id: rule.text(),
      narration: rule.text(),
      currency: rule.currency(),
      callback_url: rule.url(),
      transaction_channel: rule.accountType(),
      redirect_url: rule.optional(rule.url()),
    },
    crossChecks: (body) => networkProblems(body, 'receipt'),
    message: 'processing',
    // Some countries pay on a hosted page: the sandbox does so whenever a redirect_url is given.
    viaCheckout: (body) => typeof body.redirect_url === 'string',
  },
  'payouts.mpesa': {
    name: 'payouts.mpesa',
    kind: 'payout',
    region: 'kenya',
    path: '/api/v2/withdrawal',
    fields: {
      phone_number: rule.phone('kenyanLocal'),
      amount: rule.amount({ min: kes.min, max: kes.max }),
      narration: rule.text(),
      callback_url: rule.url(),
      channel: rule.constant('MOBILE_MONEY_KE'),
      currency: rule.constant('KES'),
      wallet_type: rule.walletType(),
    },
    message: 'Transaction request sent successfully',
    viaCheckout: () => false,
  },
  'payouts.panAfrican': {
    name: 'payouts.panAfrican',
    kind: 'payout',
    region: 'panAfrican',
    path: '/api/v2/payments',
    dispatch: ['bank', 'phone'],
    fields: {
      username: rule.text(),
      network_code: rule.text(),
      account_name: rule.accountType(),
      account_holder_name: rule.text(),
      account_number: rule.text(),
      amount: rule.amount({ positive: true }),
      phone_number: rule.phone('international'),
      channel_id: rule.text(),
      narration: rule.text(),
      currency: rule.currency(),
      callback_url: rule.url(),
      transaction_channel: rule.accountType(),
      channel: rule.accountType(),
      provider_name: rule.text(),
      provider_code: rule.text(),
      wallet_type: rule.walletType(),
    },
    crossChecks: (body) => [
      ...(body.channel === body.transaction_channel
        ? []
        : [`channel must equal transaction_channel ("${String(body.transaction_channel)}")`]),
      ...networkProblems(body, 'withdrawal'),
    ],
    message: 'Transaction request sent successfully',
    viaCheckout: () => false,
  },
  'payouts.merchant': {
    name: 'payouts.merchant',
    kind: 'payout',
    region: 'kenya',
    path: '/api/v3/withdrawal',
    fields: {
      username: rule.text(),
      amount: rule.amount({ positive: true }),
      currency: rule.constant('KES'),
      phone_number: rule.phone('kenyanInternational'),
      narration: rule.text(),
      transaction_channel: rule.constant('bank'),
      channel: rule.constant('bank'),
      business_account: rule.digits(),
      business_number: rule.text(),
      callback_url: rule.url(),
      wallet_type: rule.walletType(),
    },
    message: 'Transaction request sent successfully',
    viaCheckout: () => false,
  },
  'transfers.send': {
    name: 'transfers.send',
    kind: 'transfer',
    region: 'internal',
    path: '/api/v2/p2p',
    fields: {
      receiver_username: rule.text(),
      amount: rule.amount({ positive: true }),
      narration: rule.text(),
      phone_number: rule.optional(rule.phone('international')),
      // The service converts a transfer in another currency (docs/wire-contract.md); the sandbox
      // knows one rate, usdRate.
      currency: rule.optional(rule.oneOf(['KES', 'USD'])),
      wallet_type: rule.walletType(),
    },
    message: 'Transaction request sent successfully',
    viaCheckout: () => false,
  },
};

/**
 * A pan-African request must name a network of the discovery table and stay within its limits.
 * Called once every key passed its own rule, so the types are known.
 */
function networkProblems(body: WireBody, direction: NetworkTransactionType): string[] {
  const network = findNetwork(String(body.network_code));
  if (!network) {
    return [
      `network_code (${String(body.network_code)}) is not a known network id: take it from GET /v2/networks/grouped`,
    ];
  }
  const label = `network ${network.name} (${network.country})`;
  const problems: string[] = [];
  if (!network.transactionTypes.includes(direction)) {
    problems.push(`network_code: ${label} does not serve transaction_type ${direction}`);
  }
  if (!network.channelIds.includes(String(body.channel_id))) {
    problems.push(
      `channel_id (${String(body.channel_id)}) must be one of the channel_ids of ${label}`,
    );
  }
  for (const key of ['transaction_channel', 'account_name']) {
    if (body[key] !== network.accountNumberType) {
      problems.push(
        `${key} must be "${network.accountNumberType}", the account_number_type of ${label}`,
      );
    }
  }
  if (direction === 'withdrawal') {
    if (body.provider_name !== network.name) {
      problems.push(`provider_name must be "${network.name}", the name of ${label}`);
    }
    if (body.provider_code !== network.code) {
      problems.push(`provider_code must be "${network.code}", the code of ${label}`);
    }
  }
  const amount = body.amount as number;
  if (amount < network.minAmount) {
    problems.push(`amount must be at least ${network.minAmount}, the min_amount of ${label}`);
  }
  if (amount > network.maxAmount) {
    problems.push(`amount must be at most ${network.maxAmount}, the max_amount of ${label}`);
  }
  return problems;
}

export function isPostPath(path: string): path is PostPath {
  return (POST_PATHS as readonly string[]).includes(path);
}

/** Trailing slashes and case are ignored by the router, so they are by the tables too. */
export function normalizeApiPath(path: string): string {
  return path.replace(/\/+$/, '').toLowerCase();
}

/** The API route (a POST path or a look-up template) a request path belongs to, if any. */
export function apiRouteOf(path: string): string | undefined {
  const normalized = path.replace(/\/+$/, '');
  const lower = normalized.toLowerCase();
  if (isPostPath(lower)) return lower;
  return Object.values(LOOKUPS).find((l) => l.pattern.test(normalized))?.template;
}

/** The operation a body on `path` asks for, or the reason it names none. */
export function resolveOperation(
  path: PostPath,
  body: WireBody,
): { operation: SandboxOperation } | { problem: string } {
  const candidates = Object.values(SANDBOX_OPERATIONS).filter((op) => op.path === path);
  if (candidates.length === 1) return { operation: candidates[0] };
  // The shared /api/v2/payments: `channel` tells the operations apart.
  const channel = body.channel;
  const operation = candidates.find(
    (op) => typeof channel === 'string' && op.dispatch?.includes(channel),
  );
  if (operation) return { operation };
  const choices = candidates.flatMap((op) => op.dispatch ?? []).map((c) => `"${c}"`);
  const rule = `must be ${choices.slice(0, -1).join(', ')} or ${choices.at(-1)} on ${path}`;
  return { problem: channel === undefined ? `channel is required: it ${rule}` : `channel ${rule}` };
}

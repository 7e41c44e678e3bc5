import type { PaymentsOperationName } from '@malipo/nestjs';
import { REQUEST_RULES } from '@malipo/nestjs/dto/rules';
import { FieldSpec, rule } from './wire-validation';

/** The four API paths of section 4.1. */
export const API_PATHS = [
  '/api/v2/payments',
  '/api/v3/payments',
  '/api/v2/withdrawal',
  '/api/v3/withdrawal',
] as const;
export type ApiPath = (typeof API_PATHS)[number];

/** The service's operations carry the client's names. */
export type OperationName = PaymentsOperationName;

export type WireBody = Record<string, unknown>;

export interface SandboxOperation {
  readonly name: OperationName;
  readonly kind: 'collection' | 'payout';
  readonly path: ApiPath;
  /**
   * The body's `channel`: on the shared `/api/v2/payments` it picks the operation (undefined means
   * "no channel key"); elsewhere the key may be left out but must match when sent.
   */
  readonly channel?: string;
  /** Snake_case wire keys and their rules (wire contract; limits of sections 2.5, 2.7, 8). */
  readonly fields: Readonly<Record<string, FieldSpec>>;
  /** `payment_method` of a collection, `channel` of a payout; also the webhook's `channel`. */
  channelOf(body: WireBody): string;
  /** Settled by the customer on the hosted checkout page instead of automatically. */
  viaCheckout(body: WireBody): boolean;
  readonly message: string;
}

const kes = REQUEST_RULES.kesMobileMoneyAmount;

/** Every operation the sandbox serves, as data: paths, dispatch, wire rules, response channel. */
export const SANDBOX_OPERATIONS: Readonly<Record<OperationName, SandboxOperation>> = {
  'collections.mpesa': {
    name: 'collections.mpesa',
    kind: 'collection',
    path: '/api/v2/payments',
    channel: 'MOBILE_MONEY_KE',
    fields: {
      username: rule.text(),
      amount: rule.amount({ min: kes.min, max: kes.max }),
      phone_number: rule.phone('kenyanPhone'),
      narration: rule.text(),
      callback_url: rule.url(),
    },
    channelOf: () => 'MOBILE_MONEY_KE',
    viaCheckout: () => false,
    message: 'STK push sent to the customer',
  },
  'collections.card': {
    name: 'collections.card',
    kind: 'collection',
    path: '/api/v2/payments',
    channel: 'card',
    fields: {
      username: rule.text(),
      amount: rule.amount({ min: REQUEST_RULES.cardAmount.min }),
      phone_number: rule.phone('kenyanPhone'),
      narration: rule.text(),
      callback_url: rule.url(),
    },
    channelOf: () => 'card',
    viaCheckout: () => true,
    message: 'Checkout created',
  },
  'collections.panAfrican': {
    name: 'collections.panAfrican',
    kind: 'collection',
    path: '/api/v3/payments',
    fields: {
      username: rule.text(),
      account_name: rule.accountType(),
      amount: rule.amount({ positive: true }),
      phone_number: rule.phone('internationalPhone'),
      account_number: rule.text(),
      network_code: rule.text(),
      channel_id: rule.text(),
      narration: rule.text(),
      currency: rule.currency(),
      callback_url: rule.url(),
      transaction_channel: rule.accountType(),
      redirect_url: rule.optional(rule.url()),
    },
    channelOf: (body) => (body.account_name === 'bank' ? 'BANK_TRANSFER' : 'MOBILE_MONEY'),
    // Some countries pay on a hosted page: the sandbox does so whenever a redirect_url is given.
    viaCheckout: (body) => typeof body.redirect_url === 'string',
    message: 'Collection request accepted',
  },
  'payouts.mpesa': {
    name: 'payouts.mpesa',
    kind: 'payout',
    path: '/api/v2/withdrawal',
    channel: 'MOBILE_MONEY_KE',
    fields: {
      phone_number: rule.phone('kenyanPhone'),
      amount: rule.amount({ min: kes.min, max: kes.max }),
      narration: rule.text(),
      callback_url: rule.url(),
      wallet_type: rule.walletType(),
    },
    channelOf: () => 'MOBILE_MONEY_KE',
    viaCheckout: () => false,
    message: 'Payout queued',
  },
  'payouts.panAfrican': {
    name: 'payouts.panAfrican',
    kind: 'payout',
    path: '/api/v2/payments',
    fields: {
      username: rule.text(),
      network_code: rule.text(),
      account_name: rule.accountType(),
      account_holder_name: rule.text(),
      account_number: rule.text(),
      amount: rule.amount({ positive: true }),
      phone_number: rule.phone('internationalPhone'),
      channel_id: rule.text(),
      narration: rule.text(),
      currency: rule.currency(),
      callback_url: rule.url(),
      transaction_channel: rule.accountType(),
      provider_name: rule.text(),
      provider_code: rule.text(),
      wallet_type: rule.walletType(),
    },
    channelOf: (body) => (body.account_name === 'bank' ? 'BANK' : 'MOBILE_MONEY'),
    viaCheckout: () => false,
    message: 'Payout queued',
  },
  'payouts.merchant': {
    name: 'payouts.merchant',
    kind: 'payout',
    path: '/api/v3/withdrawal',
    fields: {
      username: rule.text(),
      amount: rule.amount({ positive: true }),
      phone_number: rule.phone('kenyanInternationalPhone'),
      narration: rule.text(),
      business_account: rule.digits(),
      business_number: rule.text(),
      callback_url: rule.url(),
      wallet_type: rule.walletType(),
    },
    // A Till has no account number: the document sends the literal N/A for it.
    channelOf: (body) => (body.business_number === 'N/A' ? 'TILL' : 'PAYBILL'),
    viaCheckout: () => false,
    message: 'Payout queued',
  },
};

export function isApiPath(path: string): path is ApiPath {
  return (API_PATHS as readonly string[]).includes(path);
}

/** Trailing slashes and case are ignored by the router, so they are by the tables too. */
export function normalizeApiPath(path: string): string {
  return path.replace(/\/+$/, '').toLowerCase();
}

/** The operation a body on `path` asks for, or the reason it names none. */
export function resolveOperation(
  path: ApiPath,
  body: WireBody,
): { operation: SandboxOperation } | { problem: string } {
  const candidates = Object.values(SANDBOX_OPERATIONS).filter((op) => op.path === path);
  const channel = body.channel ?? undefined;
  if (candidates.length === 1) {
    const [operation] = candidates;
    if (channel !== undefined && operation.channel !== undefined && channel !== operation.channel) {
      return { problem: `channel must be "${operation.channel}"` };
    }
    return { operation };
  }
  const operation = candidates.find((op) => op.channel === channel);
  if (operation) return { operation };
  const choices = candidates.map((op) => (op.channel ? `"${op.channel}"` : 'absent'));
  return { problem: `channel must be ${choices.slice(0, -1).join(', ')} or ${choices.at(-1)}` };
}

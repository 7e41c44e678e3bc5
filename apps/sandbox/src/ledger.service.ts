import { Injectable } from '@nestjs/common';
import { randomBytes } from 'node:crypto';
import type { WalletType } from '@malipo/nestjs/payments-options.interface';
import type { Outcome } from './outcomes';
import { Balances, SandboxConfig } from './sandbox.config';
import type { OperationName } from './sandbox-operations';

export type TransactionStatus = 'PENDING' | 'QUEUED' | 'SUCCESS' | 'FAILED';

export interface WebhookDelivery {
  attempt: number;
  /** ISO time the attempt started. */
  at: string;
  /** HTTP status of the receiver's answer, when there was one. */
  status?: number;
  /** Network error or timeout, when there was no answer. */
  error?: string;
}

export interface Transaction {
  reference: string;
  trackingId: string;
  operation: OperationName;
  kind: 'collection' | 'payout';
  status: TransactionStatus;
  amount: number;
  currency: string;
  /** `payment_method` of a collection, `channel` of a payout. */
  channel: string;
  /** Funding wallet of a payout. */
  walletType?: WalletType;
  /** Amount taken from the wallet, in the wallet's currency (payouts). */
  debited?: number;
  phoneNumber: string;
  narration: string;
  callbackUrl: string;
  redirectUrl?: string;
  /** `checkout`: waits for the hosted page; `automatic`: settled after the webhook delay. */
  settlement: 'automatic' | 'checkout';
  idempotencyKey: string | null;
  createdAt: string;
  settledAt: string | null;
  /** Outcome message once settled (also the webhook's `message`). */
  message: string | null;
  webhookDeliveries: WebhookDelivery[];
}

export type NewTransaction = Omit<
  Transaction,
  | 'reference'
  | 'trackingId'
  | 'status'
  | 'debited'
  | 'createdAt'
  | 'settledAt'
  | 'message'
  | 'webhookDeliveries'
>;

export class InsufficientFundsError extends Error {
  constructor(wallet: WalletType, needed: number, available: number) {
    super(`Insufficient funds in the ${wallet} wallet: needs ${needed}, has ${available}`);
  }
}

/** Money is kept in cents so that repeated debits and refunds add up exactly. */
function roundCents(value: number): number {
  return Math.round(value * 100) / 100;
}

function newId(prefix: string): string {
  return `${prefix}-${randomBytes(6).toString('hex').toUpperCase()}`;
}

/** The sandbox's bookkeeping: transactions and the two wallets (section 2.4). */
@Injectable()
export class LedgerService {
  private readonly transactions = new Map<string, Transaction>();
  private balances: Balances;

  constructor(private readonly config: SandboxConfig) {
    this.balances = { ...config.initialBalances };
  }

  /** Records an accepted transaction; a payout is debited now and refused if it would overdraw. */
  open(draft: NewTransaction): Transaction {
    let debited: number | undefined;
    if (draft.kind === 'payout') {
      const wallet = draft.walletType ?? 'local';
      // The request amount is in local currency; the USD wallet pays its converted value.
      debited = roundCents(wallet === 'USD' ? draft.amount / this.config.usdRate : draft.amount);
      if (debited > this.balances[wallet]) {
        throw new InsufficientFundsError(wallet, debited, this.balances[wallet]);
      }
      this.balances[wallet] = roundCents(this.balances[wallet] - debited);
    }
    const transaction: Transaction = {
      reference: newId('SBX'),
      trackingId: newId('TRK'),
      ...draft,
      status: draft.kind === 'payout' ? 'QUEUED' : 'PENDING',
      ...(debited === undefined ? {} : { debited }),
      createdAt: new Date().toISOString(),
      settledAt: null,
      message: null,
      webhookDeliveries: [],
    };
    this.transactions.set(transaction.reference, transaction);
    return structuredClone(transaction);
  }

  /**
   * Moves a pending transaction to its outcome and its money accordingly: a successful
   * collection credits the local wallet, a failed payout is refunded. Undefined if unknown or
   * already settled.
   */
  settle(reference: string, outcome: Outcome): Transaction | undefined {
    const transaction = this.transactions.get(reference);
    if (!transaction || transaction.settledAt !== null) return undefined;
    transaction.status = outcome.status;
    transaction.message = outcome.message;
    transaction.settledAt = new Date().toISOString();
    if (transaction.kind === 'collection' && outcome.status === 'SUCCESS') {
      this.balances.local = roundCents(this.balances.local + transaction.amount);
    }
    if (transaction.kind === 'payout' && outcome.status === 'FAILED') {
      const wallet = transaction.walletType ?? 'local';
      this.balances[wallet] = roundCents(this.balances[wallet] + (transaction.debited ?? 0));
    }
    return structuredClone(transaction);
  }

  recordDelivery(reference: string, delivery: WebhookDelivery): void {
    this.transactions.get(reference)?.webhookDeliveries.push(delivery);
  }

  /** Copies, so that callers cannot change the books. */
  get(reference: string): Transaction | undefined {
    const transaction = this.transactions.get(reference);
    return transaction && structuredClone(transaction);
  }

  /** Oldest first (a Map keeps insertion order). */
  list(): Transaction[] {
    return [...this.transactions.values()].map((t) => structuredClone(t));
  }

  wallets(): { local: number; USD: number; usdRate: number } {
    return { ...this.balances, usdRate: this.config.usdRate };
  }

  reset(): void {
    this.transactions.clear();
    this.balances = { ...this.config.initialBalances };
  }
}

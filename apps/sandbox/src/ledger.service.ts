import { Injectable } from '@nestjs/common';
import { randomInt, randomUUID } from 'node:crypto';
import type { Outcome } from './outcomes';
import { Balances, SandboxConfig } from './sandbox.config';
import type { MoneyOperationName, Region } from './sandbox-operations';

/** The status look-up's `transaction_details.status`. */
export type TransactionStatus = 'pending' | 'success' | 'failed';
/** The status look-up's `type`. */
export type TransactionType = 'receipt' | 'withdrawal' | 'transfer';
export type WalletType = 'local' | 'USD';
export type TransactionKind = 'collection' | 'payout' | 'transfer';

/** Reference suffixes of the real service: receipt, withdrawal, transfer. */
const SUFFIX: Readonly<Record<TransactionKind, string>> = {
  collection: 'eR',
  payout: 'eW',
  transfer: 'eS',
};
const TYPE: Readonly<Record<TransactionKind, TransactionType>> = {
  collection: 'receipt',
  payout: 'withdrawal',
  transfer: 'transfer',
};

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
  /** `9BD` + 9 digits + `eR` / `eW` / `eS`. */
  reference: string;
  /** The status look-up's `id`. */
  id: string;
  operation: MoneyOperationName;
  kind: TransactionKind;
  type: TransactionType;
  region: Region;
  /** Username of the account whose API credentials made the request. */
  account: string;
  status: TransactionStatus;
  amount: number;
  currency: string;
  /** The status look-up's `transaction_details.channel`: mobile, card or bank. */
  channel: string;
  /** Funding wallet of a payout or transfer. */
  walletType?: WalletType;
  /** Amount taken from the wallet, in the wallet's currency (payouts and transfers). */
  debited?: number;
  /** The account credited by a transfer. */
  receiverUsername?: string;
  /** The request's `phone_number` ('' when a transfer has none). */
  phoneNumber: string;
  /** Pan-African `account_number`, merchant `business_account`. */
  accountNumber?: string;
  /** The webhook's `customer_name`. */
  customerName: string;
  narration: string;
  /** The request's `callback_url`, verbatim with its query; null for transfers (none sent). */
  callbackUrl: string | null;
  redirectUrl?: string;
  /** `checkout`: the hosted page; `automatic`: after the webhook delay; `immediate`: transfers. */
  settlement: 'automatic' | 'checkout' | 'immediate';
  idempotencyKey: string | null;
  createdAt: string;
  settledAt: string | null;
  /** The webhook's `result_code` once settled. */
  resultCode: number | null;
  /** The webhook's `remarks` once settled. */
  remarks: string | null;
  /** The webhook's `third_party_trans_id`, on success. */
  thirdPartyTransId: string | null;
  webhookDeliveries: WebhookDelivery[];
}

export type NewTransaction = Omit<
  Transaction,
  | 'reference'
  | 'id'
  | 'type'
  | 'status'
  | 'debited'
  | 'createdAt'
  | 'settledAt'
  | 'resultCode'
  | 'remarks'
  | 'thirdPartyTransId'
  | 'webhookDeliveries'
>;

export class InsufficientFundsError extends Error {
  constructor(wallet: WalletType, needed: number, available: number) {
    super(`Insufficient funds in the ${wallet} wallet: needs ${needed}, has ${available}`);
  }
}

/** Money is kept in cents so that repeated debits and refunds add up exactly. */
export function roundCents(value: number): number {
  return Math.round(value * 100) / 100;
}

/** An M-Pesa-like receipt number, e.g. UB9C46DH3Q. */
function mpesaReceipt(): string {
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789';
  let receipt = 'U';
  for (let i = 0; i < 9; i += 1) receipt += alphabet[randomInt(alphabet.length)];
  return receipt;
}

/** The sandbox's bookkeeping: transactions and the two wallets of each account (section 2.4). */
@Injectable()
export class LedgerService {
  private readonly transactions = new Map<string, Transaction>();
  private balances = new Map<string, Balances>();

  constructor(private readonly config: SandboxConfig) {
    this.initBalances();
  }

  /**
   * Records an accepted transaction. A payout is debited now and refused if it would overdraw; a
   * transfer moves the money between the two accounts at once and is settled.
   */
  open(draft: NewTransaction): Transaction {
    let debited: number | undefined;
    if (draft.kind !== 'collection') {
      const wallet = draft.walletType ?? 'local';
      const balances = this.walletsOf(draft.account);
      // The request amount is in local currency (a transfer's may be in USD, converted at
      // usdRate); the USD wallet pays its converted value.
      const local =
        draft.kind === 'transfer' && draft.currency === 'USD'
          ? draft.amount * this.config.usdRate
          : draft.amount;
      debited = roundCents(wallet === 'USD' ? local / this.config.usdRate : local);
      if (debited > balances[wallet]) {
        throw new InsufficientFundsError(wallet, debited, balances[wallet]);
      }
      balances[wallet] = roundCents(balances[wallet] - debited);
      if (draft.kind === 'transfer' && draft.receiverUsername !== undefined) {
        const receiver = this.walletsOf(draft.receiverUsername);
        receiver[wallet] = roundCents(receiver[wallet] + debited);
      }
    }
    const now = new Date().toISOString();
    const immediate = draft.settlement === 'immediate';
    const transaction: Transaction = {
      reference: this.newReference(draft.kind),
      id: randomUUID(),
      ...draft,
      type: TYPE[draft.kind],
      status: immediate ? 'success' : 'pending',
      ...(debited === undefined ? {} : { debited }),
      createdAt: now,
      settledAt: immediate ? now : null,
      resultCode: immediate ? 0 : null,
      remarks: immediate ? 'Transfer completed' : null,
      thirdPartyTransId: null,
      webhookDeliveries: [],
    };
    this.transactions.set(transaction.reference, transaction);
    return structuredClone(transaction);
  }

  /**
   * Moves a pending transaction to its outcome and its money accordingly: a successful
   * collection credits the account's local wallet, a failed payout is refunded. Undefined if
   * unknown or already settled.
   */
  settle(reference: string, outcome: Outcome): Transaction | undefined {
    const transaction = this.transactions.get(reference);
    if (!transaction || transaction.settledAt !== null) return undefined;
    transaction.status = outcome.status;
    transaction.resultCode = outcome.resultCode;
    transaction.remarks = outcome.remarks;
    transaction.settledAt = new Date().toISOString();
    const balances = this.walletsOf(transaction.account);
    if (outcome.status === 'success') {
      // M-Pesa-like receipts for Kenyan operations; pan-African ones echo the reference.
      transaction.thirdPartyTransId =
        transaction.region === 'panAfrican' ? transaction.reference : mpesaReceipt();
      if (transaction.kind === 'collection') {
        balances.local = roundCents(balances.local + transaction.amount);
      }
    }
    if (transaction.kind === 'payout' && outcome.status === 'failed') {
      const wallet = transaction.walletType ?? 'local';
      balances[wallet] = roundCents(balances[wallet] + (transaction.debited ?? 0));
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

  /** The wallets of one account (default: the default account) and the fixed rate. */
  wallets(username = this.config.defaultAccount.username): {
    local: number;
    USD: number;
    usdRate: number;
  } {
    return { ...this.walletsOf(username), usdRate: this.config.usdRate };
  }

  /** Every account with its wallets, default account first. */
  accounts(): {
    username: string;
    apiUsername: string;
    userId: string;
    local: number;
    USD: number;
  }[] {
    return this.config.accounts.map(({ username, apiUsername, userId }) => ({
      username,
      apiUsername,
      userId,
      ...this.walletsOf(username),
    }));
  }

  reset(): void {
    this.transactions.clear();
    this.initBalances();
  }

  private walletsOf(username: string): Balances {
    const balances = this.balances.get(username);
    if (!balances) throw new Error(`No sandbox account ${username}`);
    return balances;
  }

  private initBalances(): void {
    this.balances = new Map(
      this.config.accounts.map((account) => [account.username, { ...account.initialBalances }]),
    );
  }

  /** Like the real ones: 9BD, 9 digits, the type suffix; unique in this ledger. */
  private newReference(kind: TransactionKind): string {
    for (;;) {
      const digits = String(randomInt(1_000_000_000)).padStart(9, '0');
      const reference = `9BD${digits}${SUFFIX[kind]}`;
      if (!this.transactions.has(reference)) return reference;
    }
  }
}

import { Injectable } from '@nestjs/common';
import { ApiReply, errorReply } from './http-io';
import { LedgerService, roundCents, Transaction } from './ledger.service';
import { discoverNetworks, NetworkTransactionType } from './networks';
import { SandboxAccount, SandboxConfig } from './sandbox.config';

const TRANSACTION_TYPES: readonly NetworkTransactionType[] = ['receipt', 'withdrawal'];

/** The three GET look-ups: network discovery, transaction status, balances. */
@Injectable()
export class LookupsService {
  constructor(
    private readonly ledger: LedgerService,
    private readonly config: SandboxConfig,
  ) {}

  /** `GET /v2/networks/grouped?transaction_type=receipt|withdrawal&dial_code=%2B234`. */
  networks(query: URLSearchParams): ApiReply {
    const problems: string[] = [];
    for (const key of new Set(query.keys())) {
      if (key !== 'transaction_type' && key !== 'dial_code') {
        problems.push(`${key} is not an accepted query parameter`);
      } else if (query.getAll(key).length > 1) {
        problems.push(`${key} must be given once`);
      }
    }
    const transactionType = query.get('transaction_type');
    if (transactionType === null) problems.push('transaction_type is required');
    else if (!(TRANSACTION_TYPES as readonly string[]).includes(transactionType)) {
      problems.push('transaction_type must be "receipt" or "withdrawal"');
    }
    const dialCode = query.get('dial_code');
    if (dialCode === null) problems.push('dial_code is required');
    else if (!/^\+\d{1,4}$/.test(dialCode)) {
      // An unencoded + arrives as a space: the query must carry %2B.
      problems.push(`dial_code (${dialCode}) must be + and 1 to 4 digits, URL-encoded (%2B234)`);
    }
    if (problems.length > 0) return errorReply(400, problems.join('; '));
    return {
      status: 200,
      body: discoverNetworks(transactionType as NetworkTransactionType, dialCode as string),
    };
  }

  /** `GET /api/v1/status/{reference}`: the account's own transactions only. */
  status(reference: string, account: SandboxAccount): ApiReply {
    const transaction = this.ledger.get(reference);
    if (!transaction || transaction.account !== account.username) {
      return errorReply(404, `transaction ${reference} not found`);
    }
    return { status: 200, body: this.statusBody(transaction, account) };
  }

  /** `GET /api/v1/accounts/{username}/all_balances`: either sandbox account. */
  balances(username: string): ApiReply {
    const account = this.config.findAccount(username);
    if (!account) return errorReply(404, `account ${username} not found`);
    const { local, USD, usdRate } = this.ledger.wallets(account.username);
    return {
      status: 200,
      body: {
        fiat_balance: {
          balance: local,
          converted_balance: roundCents(local / usdRate),
          currency: 'KES',
        },
        onchain_balance: {
          balance: USD,
          converted_balance: roundCents(USD * usdRate),
          currency: 'USD',
        },
      },
    };
  }

  private statusBody(tx: Transaction, account: SandboxAccount): Record<string, unknown> {
    const wallets = this.ledger.wallets(account.username);
    const usd = tx.walletType === 'USD';
    const processedAt = Date.parse(tx.settledAt ?? tx.createdAt);
    const recipient: Record<Transaction['kind'], string> = {
      collection: account.username,
      payout: tx.customerName || tx.accountNumber || tx.phoneNumber,
      transfer: tx.receiverUsername ?? '',
    };
    return {
      id: tx.id,
      account_id: '',
      billing_currency: usd ? 'USD' : '',
      currency: tx.currency,
      code: tx.reference,
      conversion_rate: usd ? this.config.usdRate : 0,
      amount: tx.amount,
      billing_currency_amount: usd ? (tx.debited ?? 0) : 0,
      balance: usd ? wallets.USD : wallets.local,
      type: tx.type,
      transaction_details: {
        payer: tx.kind === 'collection' ? tx.phoneNumber : account.username,
        merchant_id: tx.thirdPartyTransId ? `${tx.reference}:${tx.thirdPartyTransId}` : '',
        phone_number: tx.phoneNumber,
        processed_at: {
          seconds: Math.floor(processedAt / 1000),
          nanos: (processedAt % 1000) * 1_000_000,
        },
        reason: tx.remarks ?? '',
        channel: tx.channel,
        account_number: tx.accountNumber ?? account.userId,
        status: tx.status,
        receiver: recipient[tx.kind],
        email_address: `${account.username}@sandbox.example.com`,
      },
      transaction_category: 'fiat',
      user_id: '',
      request_metadata: null,
      created_at: tx.createdAt,
    };
  }
}

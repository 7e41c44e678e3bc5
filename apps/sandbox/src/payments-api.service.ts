import { Injectable } from '@nestjs/common';
import type { WalletType } from '@malipo/nestjs/payments-options.interface';
import { ApiReply, errorReply, isJsonObject } from './http-io';
import { InsufficientFundsError, LedgerService, Transaction } from './ledger.service';
import { SandboxConfig } from './sandbox.config';
import { ApiPath, resolveOperation, SandboxOperation, WireBody } from './sandbox-operations';
import { SettlementService } from './settlement.service';
import { validateWireBody } from './wire-validation';

/** The bank account a pan-African bank-transfer payer pays into (one fixed sandbox account). */
const SANDBOX_BANK = {
  name: 'Sandbox Bank',
  branch_code: '001',
  account_number: '0011223344',
  account_name: 'Malipo Sandbox Collections',
};

/** Executes one authorised API request: validation, ledger entry, scheduling, response body. */
@Injectable()
export class PaymentsApiService {
  constructor(
    private readonly ledger: LedgerService,
    private readonly settlement: SettlementService,
    private readonly config: SandboxConfig,
  ) {}

  execute(path: ApiPath, body: unknown, idempotencyKey: string | undefined): ApiReply {
    if (!isJsonObject(body)) {
      return errorReply(400, 'VALIDATION_ERROR', 'body must be a JSON object');
    }
    const resolved = resolveOperation(path, body);
    if ('problem' in resolved) return errorReply(400, 'VALIDATION_ERROR', resolved.problem);
    const { operation } = resolved;
    const problems = validateWireBody(operation.fields, body);
    if (problems.length > 0) return errorReply(400, 'VALIDATION_ERROR', problems.join('; '));

    let transaction: Transaction;
    try {
      transaction = this.ledger.open(newTransaction(operation, body, idempotencyKey));
    } catch (error) {
      if (error instanceof InsufficientFundsError) {
        return errorReply(402, 'INSUFFICIENT_FUNDS', error.message);
      }
      throw error;
    }
    if (transaction.settlement === 'automatic') this.settlement.settleLater(transaction);
    return {
      status: 200,
      body:
        operation.kind === 'collection'
          ? this.collectionBody(operation, transaction)
          : payoutBody(operation, transaction),
    };
  }

  private collectionBody(
    operation: SandboxOperation,
    transaction: Transaction,
  ): Record<string, unknown> {
    const response: Record<string, unknown> = {
      success: true,
      message: operation.message,
      status: transaction.status,
      transaction_reference: transaction.reference,
      tracking_id: transaction.trackingId,
      reference: transaction.reference,
      result: { settlement: transaction.settlement },
      payment_method: transaction.channel,
    };
    if (transaction.channel === 'BANK_TRANSFER') {
      response.bank_account = { ...SANDBOX_BANK, account_reference: transaction.reference };
    }
    if (transaction.settlement === 'checkout') {
      response.checkout_url = `${this.config.publicUrl}/checkout/${encodeURIComponent(transaction.reference)}`;
    }
    return response;
  }
}

function payoutBody(operation: SandboxOperation, transaction: Transaction) {
  return {
    success: true,
    message: operation.message,
    status: transaction.status,
    transaction_reference: transaction.reference,
    channel: transaction.channel,
    amount: transaction.amount,
  };
}

function newTransaction(
  operation: SandboxOperation,
  body: WireBody,
  idempotencyKey: string | undefined,
) {
  const text = (key: string) => (typeof body[key] === 'string' ? body[key] : '');
  return {
    operation: operation.name,
    kind: operation.kind,
    amount: body.amount as number,
    currency: text('currency') || 'KES',
    channel: operation.channelOf(body),
    ...(operation.kind === 'payout'
      ? { walletType: (text('wallet_type') || 'local') as WalletType }
      : {}),
    phoneNumber: text('phone_number'),
    narration: text('narration'),
    callbackUrl: text('callback_url'),
    ...(text('redirect_url') ? { redirectUrl: text('redirect_url') } : {}),
    settlement: operation.viaCheckout(body) ? ('checkout' as const) : ('automatic' as const),
    idempotencyKey: idempotencyKey ?? null,
  };
}

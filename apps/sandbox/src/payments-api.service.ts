import { Injectable } from '@nestjs/common';
import { ApiReply, errorReply, isJsonObject } from './http-io';
import {
  InsufficientFundsError,
  LedgerService,
  NewTransaction,
  Transaction,
} from './ledger.service';
import { REJECT_NARRATION } from './outcomes';
import { SandboxAccount, SandboxConfig } from './sandbox.config';
import { PostPath, resolveOperation, SandboxOperation, WireBody } from './sandbox-operations';
import { SettlementService } from './settlement.service';
import { validateWireBody } from './wire-validation';

/** The account a pan-African bank-transfer payer pays into (a virtual account per reference). */
const SANDBOX_BANK = {
  name: 'Sandbox Bank',
  branch_code: '',
  account_name: 'Malipo Sandbox Collections',
};

/** Executes one authorised money request: validation, ledger entry, scheduling, response body. */
@Injectable()
export class PaymentsApiService {
  constructor(
    private readonly ledger: LedgerService,
    private readonly settlement: SettlementService,
    private readonly config: SandboxConfig,
  ) {}

  execute(
    path: PostPath,
    body: unknown,
    idempotencyKey: string | undefined,
    account: SandboxAccount,
  ): ApiReply {
    if (!isJsonObject(body)) return errorReply(400, 'body must be a JSON object');
    const resolved = resolveOperation(path, body);
    if ('problem' in resolved) return errorReply(400, resolved.problem);
    const { operation } = resolved;
    const problems = validateWireBody(operation.fields, body);
    if (problems.length === 0 && operation.crossChecks)
      problems.push(...operation.crossChecks(body));
    if (operation.kind === 'transfer' && problems.length === 0) {
      problems.push(...this.receiverProblems(body, account));
    }
    if (problems.length > 0) return errorReply(400, problems.join('; '));

    // The documented magic value: a valid request the service refuses with HTTP 200.
    if (body.narration === REJECT_NARRATION) {
      return errorReply(
        200,
        `request rejected: narration "${REJECT_NARRATION}" (sandbox magic value)`,
        400,
      );
    }

    let transaction: Transaction;
    try {
      transaction = this.ledger.open(newTransaction(operation, body, idempotencyKey, account));
    } catch (error) {
      if (error instanceof InsufficientFundsError) return errorReply(402, error.message);
      throw error;
    }
    if (transaction.settlement === 'automatic') this.settlement.settleLater(transaction);
    return { status: 200, body: this.responseBody(operation, transaction, body) };
  }

  private receiverProblems(body: WireBody, account: SandboxAccount): string[] {
    const receiver = String(body.receiver_username);
    if (!this.config.findAccount(receiver)) {
      return [`receiver_username (${receiver}) is not a known account`];
    }
    if (receiver === account.username) {
      return [`receiver_username must be another account than the sender (${receiver})`];
    }
    return [];
  }

  /** The real service's answers, keys in its order. */
  private responseBody(
    operation: SandboxOperation,
    transaction: Transaction,
    body: WireBody,
  ): Record<string, unknown> {
    const reference = transaction.reference;
    switch (operation.kind) {
      case 'payout':
        return {
          success: true,
          correlator_id: reference,
          message: operation.message,
          status: 'SUCCESS',
          channel: '',
          amount: 0,
        };
      case 'transfer':
        return {
          transaction_reference: reference,
          success: true,
          message: operation.message,
          trackingId: '',
          reference: '',
          result: null,
        };
      case 'collection': {
        const bank = operation.name === 'collections.panAfrican' && body.account_name === 'bank';
        return {
          payment_method: 'mobile',
          status: 'SUCCESS',
          ...(transaction.settlement === 'checkout'
            ? { checkout_url: `${this.config.publicUrl}/checkout/${encodeURIComponent(reference)}` }
            : {}),
          ...(bank
            ? {
                bank_account: {
                  name: SANDBOX_BANK.name,
                  branch_code: SANDBOX_BANK.branch_code,
                  account_number: `0${reference.slice(3, 12)}`,
                  account_name: SANDBOX_BANK.account_name,
                  account_reference: reference,
                },
              }
            : {}),
          transaction_reference: reference,
          success: true,
          // The real bank-transfer answer has no message.
          ...(bank ? {} : { message: operation.message }),
          trackingId: '',
          reference: '',
          result: null,
        };
      }
    }
  }
}

/** The status look-up's `transaction_details.channel`. */
function detailsChannel(operation: SandboxOperation, body: WireBody): string {
  if (operation.kind === 'transfer') return 'p2p';
  if (operation.name === 'collections.card') return 'card';
  if (operation.name === 'payouts.merchant' || body.account_name === 'bank') return 'bank';
  return 'mobile';
}

function newTransaction(
  operation: SandboxOperation,
  body: WireBody,
  idempotencyKey: string | undefined,
  account: SandboxAccount,
): NewTransaction {
  const text = (key: string) => (typeof body[key] === 'string' ? body[key] : '');
  const accountNumber = text('account_number') || text('business_account');
  const customerName =
    operation.name === 'collections.panAfrican'
      ? text('phone_number')
      : operation.name === 'payouts.panAfrican'
        ? text('account_holder_name')
        : '';
  return {
    operation: operation.name,
    kind: operation.kind,
    region: operation.region,
    account: account.username,
    amount: body.amount as number,
    currency: text('currency') || 'KES',
    channel: detailsChannel(operation, body),
    ...(operation.kind === 'collection'
      ? {}
      : { walletType: body.wallet_type === 'USD' ? ('USD' as const) : ('local' as const) }),
    ...(operation.kind === 'transfer' ? { receiverUsername: text('receiver_username') } : {}),
    phoneNumber: text('phone_number'),
    ...(accountNumber ? { accountNumber } : {}),
    customerName,
    narration: text('narration'),
    callbackUrl: operation.kind === 'transfer' ? null : text('callback_url'),
    ...(text('redirect_url') ? { redirectUrl: text('redirect_url') } : {}),
    settlement:
      operation.kind === 'transfer'
        ? 'immediate'
        : operation.viaCheckout(body)
          ? 'checkout'
          : 'automatic',
    idempotencyKey: idempotencyKey ?? null,
  };
}

import { Injectable, Logger, OnModuleDestroy } from '@nestjs/common';
import { LedgerService, Transaction } from './ledger.service';
import { SandboxConfig } from './sandbox.config';
import { SandboxTimers } from './sandbox-timers.service';

/**
 * The real service's webhook (callback) payload, as its examples show it: a success carries
 * `third_party_trans_id`, `amount`, `user_id`, `customer_name` and `web3_transaction_reference`; a
 * failure carries none of them, and `status` instead ("" for Kenyan operations, "failed" for
 * pan-African ones). Neither carries the phone number.
 */
export type WebhookPayload = {
  transaction_reference: string;
  result_code: number;
  remarks: string;
  transaction_date: string;
  forward_url: string;
  order_id: string;
  success: boolean;
} & (
  | {
      success: true;
      third_party_trans_id: string;
      amount: number;
      user_id: string;
      customer_name: string;
      web3_transaction_reference: string;
    }
  | { success: false; status: '' | 'failed' }
);

/** A time as Go prints it, the real service's format: `2026-02-09 10:37:50.286 +0000 UTC`. */
export function goTimeString(iso: string): string {
  const date = new Date(iso);
  const [day, time] = date.toISOString().replace('Z', '').split('T');
  const [clock, millis = '000'] = time.split('.');
  const fraction = millis.replace(/0+$/, '');
  return `${day} ${clock}${fraction ? `.${fraction}` : ''} +0000 UTC`;
}

/** The payload of a settled transaction: a function of the transaction only, so re-deliveries are identical. */
export function webhookPayload(transaction: Transaction, userId: string): WebhookPayload {
  const reference = transaction.reference;
  const remarks = transaction.remarks ?? '';
  const date = goTimeString(transaction.settledAt ?? transaction.createdAt);
  const forward = transaction.callbackUrl ?? '';
  // Keys in the order of the real service's examples.
  if (transaction.status === 'success') {
    return {
      transaction_reference: reference,
      result_code: transaction.resultCode ?? 0,
      remarks,
      third_party_trans_id: transaction.thirdPartyTransId ?? '',
      amount: transaction.amount,
      transaction_date: date,
      forward_url: forward,
      order_id: '',
      user_id: userId,
      customer_name: transaction.customerName,
      success: true,
      web3_transaction_reference: '',
    };
  }
  return {
    transaction_reference: reference,
    result_code: transaction.resultCode ?? 1,
    remarks,
    transaction_date: date,
    forward_url: forward,
    order_id: '',
    success: false,
    status: transaction.region === 'panAfrican' ? 'failed' : '',
  };
}

/**
 * Posts outcome webhooks to `callback_url`. A non-2xx answer or a network error is re-delivered
 * after each of `webhookRetryDelaysMs`, then given up; every attempt is recorded on the
 * transaction.
 */
@Injectable()
export class WebhookDispatcher implements OnModuleDestroy {
  private readonly logger = new Logger('SandboxWebhooks');
  /** Aborts the requests in flight on reset or close, so none outlives its sandbox. */
  private cancel = new AbortController();

  constructor(
    private readonly ledger: LedgerService,
    private readonly timers: SandboxTimers,
    private readonly config: SandboxConfig,
  ) {}

  /** Delivers the settled transaction's webhook now (retries follow on failure). */
  deliver(transaction: Transaction): void {
    // Transfers carry no callback_url: nothing to deliver.
    if (!transaction.callbackUrl) return;
    const userId = this.config.findAccount(transaction.account)?.userId ?? '';
    void this.attempt(transaction.callbackUrl, webhookPayload(transaction, userId), 1);
  }

  cancelAll(): void {
    this.cancel.abort();
    this.cancel = new AbortController();
  }

  onModuleDestroy(): void {
    this.cancel.abort();
  }

  private async attempt(url: string, payload: WebhookPayload, attempt: number): Promise<void> {
    const cancel = this.cancel.signal;
    const at = new Date().toISOString();
    let outcome: { status: number } | { error: string };
    try {
      const response = await fetch(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'user-agent': 'malipo-sandbox' },
        body: JSON.stringify(payload),
        redirect: 'manual',
        signal: AbortSignal.any([cancel, AbortSignal.timeout(this.config.webhookTimeoutMs)]),
      });
      // Drain the body so the connection is released.
      await response.arrayBuffer().catch(() => undefined);
      outcome = { status: response.status };
    } catch (error) {
      if (cancel.aborted) return;
      outcome = { error: describeFetchError(error, this.config.webhookTimeoutMs) };
    }
    if (cancel.aborted) return;
    this.ledger.recordDelivery(payload.transaction_reference, { attempt, at, ...outcome });

    const delivered = 'status' in outcome && outcome.status >= 200 && outcome.status < 300;
    if (delivered) return;
    const retryDelay = this.config.webhookRetryDelaysMs[attempt - 1];
    const reason = 'status' in outcome ? `HTTP ${outcome.status}` : outcome.error;
    if (retryDelay === undefined) {
      this.logger.warn(
        `Webhook for ${payload.transaction_reference} to ${url} given up after ${attempt} attempt(s): ${reason}`,
      );
      return;
    }
    this.logger.debug(
      `Webhook attempt ${attempt} for ${payload.transaction_reference} failed (${reason}), retrying in ${retryDelay} ms`,
    );
    this.timers.after(retryDelay, () => void this.attempt(url, payload, attempt + 1));
  }
}

function describeFetchError(error: unknown, timeoutMs: number): string {
  if (error instanceof Error && error.name === 'TimeoutError')
    return `timeout after ${timeoutMs} ms`;
  if (error instanceof Error) {
    // undici hides the useful part (ECONNREFUSED, ENOTFOUND...) in `cause`.
    const cause = error.cause instanceof Error ? error.cause : undefined;
    const code = cause && 'code' in cause ? String(cause.code) : undefined;
    return [error.message, code ?? cause?.message].filter(Boolean).join(': ');
  }
  return String(error);
}

import { Injectable, Logger, OnModuleDestroy } from '@nestjs/common';
import { LedgerService, Transaction } from './ledger.service';
import { SandboxConfig } from './sandbox.config';
import { SandboxTimers } from './sandbox-timers.service';

/** The webhook payload of the wire contract. */
export interface WebhookPayload {
  transaction_reference: string;
  status: 'SUCCESS' | 'FAILED';
  success: boolean;
  amount: number;
  currency: string;
  message: string;
  channel: string;
  event: 'payment.completed' | 'payment.failed' | 'payout.completed' | 'payout.failed';
  occurred_at: string;
}

export function webhookPayload(transaction: Transaction): WebhookPayload {
  const succeeded = transaction.status === 'SUCCESS';
  const noun = transaction.kind === 'collection' ? 'payment' : 'payout';
  return {
    transaction_reference: transaction.reference,
    status: succeeded ? 'SUCCESS' : 'FAILED',
    success: succeeded,
    amount: transaction.amount,
    currency: transaction.currency,
    message: transaction.message ?? '',
    channel: transaction.channel,
    event: `${noun}.${succeeded ? 'completed' : 'failed'}`,
    // The time of the outcome, identical on every re-delivery, so receivers can de-duplicate.
    occurred_at: transaction.settledAt ?? new Date().toISOString(),
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
    void this.attempt(transaction.callbackUrl, webhookPayload(transaction), 1);
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
        `Webhook ${payload.event} for ${payload.transaction_reference} to ${url} given up after ${attempt} attempt(s): ${reason}`,
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

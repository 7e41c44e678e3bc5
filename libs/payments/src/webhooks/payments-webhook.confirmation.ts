import { Inject, Injectable, Logger, OnModuleInit } from '@nestjs/common';
import { ModuleRef } from '@nestjs/core';
import type { TransactionStatus } from '../dto/lookups';
import { PaymentsValidationError, ServiceAPIError } from '../errors';
import { getTransactionsToken } from '../payments.decorators';
import type { TransactionsService } from '../transactions.service';
import type { PaymentWebhookEvent } from './payment-webhook-event';
import { PAYMENTS_WEBHOOK_LOGGER_CONTEXT } from './payments-webhook.constants';
import { PAYMENTS_WEBHOOK_OPTIONS } from '../payments.constants';
import {
  PaymentWebhookConfirmationError,
  PaymentWebhookContradictedError,
  PaymentWebhookContradiction,
} from './payments-webhook.errors';
import type { PaymentsWebhookModuleOptions } from './payments-webhook.interfaces';
import { forLog } from './payments-webhook.logging';

/** Amounts closer than half a minor unit are equal (JSON decimals need not round-trip exactly). */
const AMOUNT_TOLERANCE = 0.005;

/**
 * HTTP statuses of a look-up that say nothing about the reference: our credentials, rate limits,
 * timeouts. The event may be genuine, so it is not refused as unknown; it is retried later.
 */
const TRANSIENT_CLIENT_STATUSES = new Set([401, 403, 408, 425, 429]);

/** Whether the look-up's failure means the service knows no transaction with this reference. */
function isUnknownReference(error: unknown): boolean {
  // The reference is not even a valid path segment: no transaction can have it.
  if (error instanceof PaymentsValidationError) return true;
  if (!(error instanceof ServiceAPIError)) return false;
  // A 2xx with `success: false` carries its status in the body only.
  const status =
    error.status !== undefined && error.status >= 400 ? error.status : error.serviceStatus;
  return (
    status !== undefined && status >= 400 && status < 500 && !TRANSIENT_CLIENT_STATUSES.has(status)
  );
}

/** What of the record contradicts the event, if anything. */
function contradiction(
  event: PaymentWebhookEvent,
  record: TransactionStatus,
): [PaymentWebhookContradiction, string] | undefined {
  const code: unknown = record.code;
  if (code !== event.transactionReference) {
    return [
      'reference-mismatch',
      `the record is of ${typeof code === 'string' ? forLog(code) : 'no reference'}`,
    ];
  }
  const status: unknown = record.transactionDetails?.status;
  const recordSucceeded = typeof status === 'string' && status.toLowerCase() === 'success';
  if (event.succeeded !== recordSucceeded) {
    const shown = typeof status === 'string' ? `"${forLog(status, 32)}"` : 'no status';
    return [
      'outcome-mismatch',
      `the event ${event.succeeded ? 'succeeded' : 'failed'}, the record has ${shown}`,
    ];
  }
  const amount: unknown = record.amount;
  if (
    typeof event.amount === 'number' &&
    typeof amount === 'number' &&
    Math.abs(event.amount - amount) >= AMOUNT_TOLERANCE
  ) {
    return ['amount-mismatch', `the event has amount ${event.amount}, the record ${amount}`];
  }
  return undefined;
}

/**
 * Confirms webhook events with the service's status look-up before any handler sees them: the
 * service does not sign its callbacks, so the look-up is what tells a genuine outcome from a
 * forged one. The `TransactionsService` is found in the whole app at boot, so `PaymentsModule`
 * needs to be neither global nor imported here.
 */
@Injectable()
export class PaymentsWebhookConfirmation implements OnModuleInit {
  private readonly logger = new Logger(PAYMENTS_WEBHOOK_LOGGER_CONTEXT);
  private transactions?: TransactionsService;

  constructor(
    @Inject(PAYMENTS_WEBHOOK_OPTIONS) private readonly options: PaymentsWebhookModuleOptions,
    private readonly moduleRef: ModuleRef,
  ) {}

  /** Resolves the look-up at boot, so a missing `PaymentsModule` fails the boot, not a payment. */
  onModuleInit(): void {
    if (this.options.confirm === false) {
      if (!this.options.verify) {
        this.logger.warn(
          'Webhook confirmation is off (confirm: false) and no verify hook is set: anyone who ' +
            'can reach the webhook route can post a fake success. Set verify, or keep confirm on.',
        );
      }
      return;
    }
    const { account } = this.options;
    try {
      this.transactions = this.moduleRef.get<TransactionsService>(getTransactionsToken(account), {
        strict: false,
      });
    } catch {
      const which = account ? `PaymentsModule registration named "${account}"` : 'PaymentsModule';
      throw new Error(
        `PaymentsWebhookModule confirms webhooks with the TransactionsService of the ${which}, ` +
          `and the app has none. Import PaymentsModule.forRoot(${account ? `{ ..., name: '${account}' }` : '...'}) ` +
          'in the app, set the webhook option account to the name of a registration, or set confirm: false with a verify hook.',
      );
    }
  }

  /**
   * The event with the service's record as `confirmation`, or the event as it is when `confirm` is
   * off.
   * @throws PaymentWebhookContradictedError when the record contradicts the event (logged).
   * @throws PaymentWebhookConfirmationError when the look-up failed (logged).
   */
  async confirm(event: PaymentWebhookEvent): Promise<PaymentWebhookEvent> {
    if (!this.transactions) return event;
    const reference = event.transactionReference;
    let record: TransactionStatus;
    try {
      record = await this.transactions.status(reference);
    } catch (error) {
      if (isUnknownReference(error)) {
        throw this.refused(event, 'unknown-reference', 'the service has no such transaction');
      }
      this.logger.warn(
        `Could not confirm a ${event.kind} webhook for ${forLog(reference)}: the status look-up ` +
          `failed (${error instanceof Error ? error.name : 'error'}); the service should deliver it again`,
      );
      throw new PaymentWebhookConfirmationError(reference, error);
    }
    const found = contradiction(event, record);
    if (found) throw this.refused(event, ...found);
    return { ...event, confirmation: record };
  }

  private refused(
    event: PaymentWebhookEvent,
    reason: PaymentWebhookContradiction,
    detail: string,
  ): PaymentWebhookContradictedError {
    // Reference, kind and reason only: the body may carry phone numbers and names.
    this.logger.warn(
      `Refused a ${event.kind} webhook for ${forLog(event.transactionReference)} (${reason}): ${detail}`,
    );
    return new PaymentWebhookContradictedError(event.transactionReference, reason, detail);
  }
}

import { Injectable } from '@nestjs/common';
import { LedgerService, Transaction } from './ledger.service';
import { decideOutcome, Outcome } from './outcomes';
import { SandboxConfig } from './sandbox.config';
import { SandboxTimers } from './sandbox-timers.service';
import { WebhookDispatcher } from './webhook.dispatcher';

/** Turns pending transactions into outcomes, and each outcome into a webhook. */
@Injectable()
export class SettlementService {
  constructor(
    private readonly ledger: LedgerService,
    private readonly dispatcher: WebhookDispatcher,
    private readonly timers: SandboxTimers,
    private readonly config: SandboxConfig,
  ) {}

  /** The outcome of the magic values (see outcomes.ts), after `webhookDelayMs`. */
  settleLater(transaction: Transaction): void {
    const outcome = decideOutcome(transaction);
    this.timers.after(this.config.webhookDelayMs, () => {
      this.settle(transaction.reference, outcome);
    });
  }

  /** Settles now and fires the webhook; undefined when unknown or already settled. */
  settle(reference: string, outcome: Outcome): Transaction | undefined {
    const settled = this.ledger.settle(reference, outcome);
    if (settled) this.dispatcher.deliver(settled);
    return settled;
  }
}

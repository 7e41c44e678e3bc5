import { Injectable, Module } from '@nestjs/common';
import { waitFor } from '../../libs/payments/spec-support/wait-for';
import type { INestApplication } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { InMemoryPaymentsJournal, PaymentsModule, PaymentsReconciler } from '@malipo/nestjs';
import type { PaymentsJournalStore } from '@malipo/nestjs';
import { PaymentsWebhookModule } from '@malipo/nestjs/webhooks';
import { OnPayoutRunEvent, PayoutRunsModule, PayoutRunsService } from '@malipo/nestjs/runs';
import type { PayoutRun, PayoutRunEvent, PayoutRunStore } from '@malipo/nestjs/runs';
import type { RunningSandbox, SandboxOptions } from '../../apps/sandbox/src/sandbox';
import { startSandbox } from '../../apps/sandbox/src/sandbox';
import { mpesaItems, type MpesaRunItem } from './payout-run-items';

export type { MpesaRunItem };

/** Every payout-run event the app received, in order. */
@Injectable()
export class RecordedRunEvents {
  readonly events: PayoutRunEvent[] = [];

  @OnPayoutRunEvent()
  record(event: PayoutRunEvent): void {
    this.events.push(event);
  }
}

/**
 * The sandbox and a Nest app on loopback: PaymentsModule with a journal, the webhook route (the
 * sandbox's webhooks settle the journal) and PayoutRunsModule. No mock: every payout goes over
 * HTTP to the sandbox.
 */
export class PayoutRunsHarness {
  private constructor(
    readonly sandbox: RunningSandbox,
    readonly app: INestApplication,
    readonly url: string,
  ) {}

  static async start(
    options: {
      sandbox?: SandboxOptions;
      maxRetries?: number;
      store?: PayoutRunStore;
      /** The payments journal; a new in-memory one by default. */
      journal?: PaymentsJournalStore;
      /** PayoutRunsModule's `statusLookupAfterMs`; its default when absent. */
      statusLookupAfterMs?: number;
      /** PayoutRunsModule's `itemKeySecret`; keys derive from the account's password when absent. */
      itemKeySecret?: string;
      /** PaymentsModule's `correlateCallbacks`; its default when absent. */
      correlateCallbacks?: boolean;
    } = {},
  ): Promise<PayoutRunsHarness> {
    const sandbox = await startSandbox({
      port: 0,
      logger: false,
      webhookDelayMs: 20,
      webhookRetryDelaysMs: [50, 200, 500],
      ...options.sandbox,
    });
    @Module({
      imports: [
        PaymentsModule.forRoot({
          ...sandbox.credentials,
          baseUrl: sandbox.url,
          defaultUsername: 'sandbox',
          journal: options.journal ?? new InMemoryPaymentsJournal(),
          ...(options.maxRetries === undefined ? {} : { maxRetries: options.maxRetries }),
          ...(options.correlateCallbacks === undefined
            ? {}
            : { correlateCallbacks: options.correlateCallbacks }),
        }),
        PaymentsWebhookModule.forRoot({ pendingRecheckDelaysMs: [50, 100] }),
        PayoutRunsModule.forRoot({
          settlementPollMs: 50,
          progressIntervalMs: 50,
          ...(options.store ? { store: options.store } : {}),
          ...(options.statusLookupAfterMs === undefined
            ? {}
            : { statusLookupAfterMs: options.statusLookupAfterMs }),
          ...(options.itemKeySecret === undefined ? {} : { itemKeySecret: options.itemKeySecret }),
        }),
      ],
      providers: [RecordedRunEvents],
    })
    class AppModule {}
    const app = await NestFactory.create(AppModule, {
      // Keep-alive sockets of the sandbox's webhook deliveries would otherwise hold close() open.
      forceCloseConnections: true,
      logger: process.env.RUNS_DEBUG ? ['warn', 'error'] : false,
    });
    await app.listen(0, '127.0.0.1');
    const { port } = (app.getHttpServer() as Server).address() as AddressInfo;
    return new PayoutRunsHarness(sandbox, app, `http://127.0.0.1:${port}`);
  }

  get runs(): PayoutRunsService {
    return this.app.get(PayoutRunsService);
  }

  get reconciler(): PaymentsReconciler {
    return this.app.get(PaymentsReconciler);
  }

  get events(): PayoutRunEvent[] {
    return this.app.get(RecordedRunEvents).events;
  }

  /** `count` M-Pesa payouts of 100 + i KES to distinct numbers; every tenth number fails. */
  mpesaItems(count: number): MpesaRunItem[] {
    return mpesaItems(count, `${this.url}/webhooks/payments`);
  }

  async close(): Promise<void> {
    await this.app.close();
    await this.sandbox.close();
  }
}

/** The run `runId` once it is `completed`, read through `runs` (any instance's service). */
export function completedRun(
  runs: Pick<PayoutRunsService, 'get'>,
  runId: string,
  what = `run ${runId} to complete`,
  timeoutMs = 60_000,
): Promise<PayoutRun> {
  return eventually(
    async () => {
      const run = await runs.get(runId);
      return run.state === 'completed' ? run : undefined;
    },
    what,
    timeoutMs,
  );
}

/** The run `runId` once it paused itself and no item of it is being sent. */
export function pausedRun(runs: Pick<PayoutRunsService, 'get'>, runId: string): Promise<PayoutRun> {
  return eventually(async () => {
    const run = await runs.get(runId);
    return run.state === 'paused' && run.counts.sending === 0 ? run : undefined;
  }, `run ${runId} to pause itself`);
}

/** `waitFor` with a run's patience: a minute by default. */
export function eventually<T>(
  probe: () => Promise<T | undefined>,
  what: string,
  timeoutMs = 60_000,
): Promise<T> {
  return waitFor(probe, what, timeoutMs);
}

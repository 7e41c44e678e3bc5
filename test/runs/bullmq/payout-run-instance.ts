// One instance of an app that pays runs on BullMQ, for the several-instances tests: PaymentsModule
// with its journal on Redis, the webhook route, PayoutRunsModule with RedisPayoutRunStore and the
// BullMQ engine, and a small HTTP API to create and read runs. Built in the jest process
// (startRunsInstance), or run as a child process that a test SIGKILLs or stops mid-run
// (`node -r ts-node/register/transpile-only -r tsconfig-paths/register
// test/runs/bullmq/payout-run-instance.ts`, configured by environment variables, reporting JSON
// lines on stdout; SIGTERM closes the app gracefully).
import {
  Body,
  Controller,
  Get,
  Injectable,
  type INestApplication,
  Module,
  Param,
  Post,
} from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { PaymentsModule, PaymentsReconciler } from '@malipo/nestjs';
import { RedisPaymentsJournal } from '@malipo/nestjs/redis';
import { mpesaItems } from '../payout-run-items';
import { PaymentsWebhookModule } from '@malipo/nestjs/webhooks';
import {
  OnPayoutRunEvent,
  PayoutRunsModule,
  PayoutRunsService,
  type PayoutRun,
  type PayoutRunEvent,
  type PayoutRunReport,
} from '@malipo/nestjs/runs';
import { bullmqPayoutRunEngine, RedisPayoutRunStore } from '@malipo/nestjs/runs/bullmq';

export interface RunsInstanceOptions {
  redisUrl: string;
  sandboxUrl: string;
  apiUsername: string;
  apiPassword: string;
  /** Retries of the payments client. Default the library's. */
  maxRetries?: number;
  /** How often the engine looks at its runs (ms). Default 200. */
  settlementPollMs?: number;
  /** The engine's `setupTimeoutMs`. Default the library's. */
  setupTimeoutMs?: number;
  /** PayoutRunsModule's `statusLookupAfterMs`. Default the library's. */
  statusLookupAfterMs?: number;
  /** Called with each payout-run event this instance emits (the child prints them). */
  report?: (event: PayoutRunEvent) => void;
  /** The run store. Default a `RedisPayoutRunStore` on `redisUrl`. */
  store?: RedisPayoutRunStore;
  /** The payments journal. Default a `RedisPaymentsJournal` on `redisUrl`. */
  journal?: RedisPaymentsJournal;
  /** The account's username at the service. Default `sandbox`, the sandbox's default account. */
  defaultUsername?: string;
}

/** What the test API's POST /runs takes: `count` M-Pesa payouts of 100 + i KES. */
export interface CreateRunBody {
  count: number;
  concurrency: number;
  ratePerSecond: number;
  /** Where the sandbox posts each payout's webhook. */
  callbackUrl: string;
}

export interface RunsInstance {
  app: INestApplication;
  /** The instance's base URL. */
  url: string;
  runs: PayoutRunsService;
  events: PayoutRunEvent[];
  close(): Promise<void>;
}

/** Starts an instance on a free loopback port. */
export async function startRunsInstance(options: RunsInstanceOptions): Promise<RunsInstance> {
  const events: PayoutRunEvent[] = [];

  @Injectable()
  class RunEvents {
    @OnPayoutRunEvent()
    record(event: PayoutRunEvent): void {
      events.push(event);
      options.report?.(event);
    }
  }

  @Controller('runs')
  class RunsController {
    constructor(
      private readonly runs: PayoutRunsService,
      private readonly reconciler: PaymentsReconciler,
    ) {}

    /** Settles the journal's open entries by status look-ups (docs/journal.md). */
    @Post('reconcile')
    async reconcile(): Promise<void> {
      await this.reconciler.reconcile();
    }

    @Post()
    create(@Body() body: CreateRunBody): Promise<PayoutRun> {
      return this.runs.create({
        name: 'payroll',
        items: mpesaItems(body.count, body.callbackUrl),
        concurrency: body.concurrency,
        ratePerSecond: body.ratePerSecond,
      });
    }

    @Get(':runId')
    get(@Param('runId') runId: string): Promise<PayoutRun> {
      return this.runs.get(runId);
    }

    @Get(':runId/report')
    report(@Param('runId') runId: string): Promise<PayoutRunReport> {
      return this.runs.report(runId, 'json');
    }
  }

  // Commands wait up to 10 s rather than 1 s: on a busy 2-core machine a command can stall past
  // a second, which is not what these tests are about (test/journal/journal-kit.ts does the same).
  const patient = { commandTimeout: 10_000 };
  @Module({
    imports: [
      PaymentsModule.forRoot({
        apiUsername: options.apiUsername,
        apiPassword: options.apiPassword,
        baseUrl: options.sandboxUrl,
        defaultUsername: options.defaultUsername ?? 'sandbox',
        journal:
          options.journal ??
          new RedisPaymentsJournal({ url: options.redisUrl, connection: patient }),
        ...(options.maxRetries === undefined ? {} : { maxRetries: options.maxRetries }),
      }),
      PaymentsWebhookModule.forRoot({ pendingRecheckDelaysMs: [50, 100] }),
      PayoutRunsModule.forRoot({
        settlementPollMs: options.settlementPollMs ?? 200,
        ...(options.statusLookupAfterMs === undefined
          ? {}
          : { statusLookupAfterMs: options.statusLookupAfterMs }),
        progressIntervalMs: 200,
        store:
          options.store ?? new RedisPayoutRunStore({ url: options.redisUrl, connection: patient }),
        // Short holds: a killed worker's items are taken over within seconds, not a minute.
        engine: bullmqPayoutRunEngine({
          url: options.redisUrl,
          lockDurationMs: 4000,
          stalledIntervalMs: 1000,
          ...(options.setupTimeoutMs === undefined
            ? {}
            : { setupTimeoutMs: options.setupTimeoutMs }),
        }),
      }),
    ],
    controllers: [RunsController],
    providers: [RunEvents],
  })
  class RunsInstanceModule {}

  const app = await NestFactory.create(RunsInstanceModule, {
    // Keep-alive sockets of the sandbox's webhook deliveries would otherwise hold close() open.
    forceCloseConnections: true,
    logger: process.env.RUNS_DEBUG ? ['warn', 'error'] : false,
  });
  try {
    await app.listen(0, '127.0.0.1');
  } catch (error) {
    await app.close();
    throw error;
  }
  return {
    app,
    url: await app.getUrl(),
    runs: app.get(PayoutRunsService),
    events,
    close: () => app.close(),
  };
}

/** As a child process: REDIS_URL, SANDBOX_URL, API_USERNAME, API_PASSWORD; prints JSON lines. */
async function main(): Promise<void> {
  const instance = await startRunsInstance({
    redisUrl: String(process.env.REDIS_URL),
    sandboxUrl: String(process.env.SANDBOX_URL),
    apiUsername: String(process.env.API_USERNAME),
    apiPassword: String(process.env.API_PASSWORD),
    report: (event) => {
      if (event.event === 'item.settled') {
        const { itemId, state, reason } = event.item;
        console.log(JSON.stringify({ step: 'settled', itemId, state, reason }));
      }
    },
  });
  process.once('SIGTERM', () => {
    void instance.close().then(() => {
      console.log(JSON.stringify({ step: 'closed' }));
      process.exit(0);
    });
  });
  console.log(JSON.stringify({ step: 'listening', url: instance.url }));
}

if (require.main === module) void main();

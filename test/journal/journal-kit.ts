// What the journal tests share: an app with PaymentsModule (its journal on Redis) and the webhook
// module, and small readers of the sandbox's request log and ledger.
import { type INestApplication, type LoggerService, Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import {
  type PaymentsCallOptions,
  PaymentsClient,
  PaymentsJournalError,
  PaymentsModule,
  type PaymentsModuleOptions,
  PaymentsReconciler,
} from '@malipo/nestjs';
import { RedisPaymentsJournal, type RedisPaymentsJournalOptions } from '@malipo/nestjs/redis';
import {
  type PaymentWebhookDelivery,
  PaymentsWebhookModule,
  type PaymentsWebhookModuleOptions,
} from '@malipo/nestjs/webhooks';
import type { RunningSandbox } from '../../apps/sandbox/src/sandbox';
import type { SandboxRequest, SandboxTransaction } from '../../apps/sandbox/src/sandbox-control';
import { callOperation, OPERATION_CASES } from '../../libs/payments/spec-support/operation-cases';

/** An app of one instance: the payments client, its reconciler and its webhook route. */
export interface JournalApp {
  app: INestApplication;
  /** The webhook route: the `callbackUrl` of the calls whose webhooks this app settles. */
  webhookUrl: string;
  client: PaymentsClient;
  reconciler: PaymentsReconciler;
  /** The app's own journal connection (the app closes it). */
  journal: RedisPaymentsJournal;
  /** What the app logged (warnings and errors), oldest first. */
  logs: string[];
  close(): Promise<void>;
}

export interface JournalAppOptions {
  sandbox: RunningSandbox;
  redisUrl: string;
  /** Options of the client over the sandbox's credentials and URL. */
  client?: Partial<PaymentsModuleOptions>;
  /** The webhook module's `verify` hook: lets a test hold the sandbox's webhooks back. */
  verify?: (delivery: PaymentWebhookDelivery) => boolean | Promise<boolean>;
  /** Other options of the webhook module. */
  webhooks?: PaymentsWebhookModuleOptions;
  /** Options of the journal's connection. Default: {@link patientJournal}'s. */
  journal?: Omit<RedisPaymentsJournalOptions, 'url' | 'client'>;
}

/**
 * A Redis journal whose commands wait up to 10 s rather than the default 1 s: on a busy 2-core
 * machine a command can stall past a second, and the call is then refused unsent
 * (`JOURNAL_UNAVAILABLE`), which is right but not what a test of another promise is about.
 */
export function patientJournal(
  url: string,
  options: Omit<RedisPaymentsJournalOptions, 'url' | 'client'> = {
    connection: { commandTimeout: 10_000 },
  },
): RedisPaymentsJournal {
  return new RedisPaymentsJournal({ url, ...options });
}

/** Starts an instance on a free loopback port: PaymentsModule with a Redis journal, and webhooks. */
export async function startJournalApp(options: JournalAppOptions): Promise<JournalApp> {
  const journal = patientJournal(options.redisUrl, options.journal);

  @Module({
    imports: [
      PaymentsModule.forRoot({
        ...options.sandbox.credentials,
        baseUrl: options.sandbox.url,
        journal,
        ...options.client,
      }),
      PaymentsWebhookModule.forRoot({
        ...(options.verify ? { verify: options.verify } : {}),
        // The sandbox posts its webhook once its record settled: no re-check is needed, and a
        // 503 is re-delivered by the sandbox anyway.
        pendingRecheckDelaysMs: [],
        ...options.webhooks,
      }),
    ],
  })
  class JournalAppModule {}

  const logs: string[] = [];
  const record = (message: unknown) => void logs.push(String(message));
  // Kept, not printed: a test reads the journal's warnings when it needs to know what happened.
  const logger: LoggerService = { log: () => undefined, warn: record, error: record };
  const app = await NestFactory.create(JournalAppModule, { logger });
  try {
    await app.listen(0, '127.0.0.1');
  } catch (error) {
    await app.close();
    throw error;
  }
  return {
    app,
    webhookUrl: `${await app.getUrl()}/webhooks/payments`,
    client: app.get(PaymentsClient),
    reconciler: app.get(PaymentsReconciler),
    journal,
    logs,
    close: () => app.close(),
  };
}

/** The rejection of `promise`, which must reject. */
export async function rejection(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    (value) => {
      throw new Error(`the call was not refused: it answered ${JSON.stringify(value)}`);
    },
    (error: unknown) => error,
  );
}

/** The rejection of `promise` as a `PaymentsJournalError`, which it must be. */
export async function journalRejection(promise: Promise<unknown>): Promise<PaymentsJournalError> {
  const error = await rejection(promise);
  if (!(error instanceof PaymentsJournalError)) {
    throw new Error(`expected a PaymentsJournalError, got ${String(error)}`);
  }
  return error;
}

/** The money-moving requests the sandbox received under `idempotencyKey`. */
export async function postsOf(
  sandbox: RunningSandbox,
  idempotencyKey: string,
): Promise<SandboxRequest[]> {
  return (await sandbox.control.requests()).filter(
    (request) => request.method === 'POST' && request.idempotencyKey === idempotencyKey,
  );
}

/** The sandbox's executions under `idempotencyKey`. */
export async function executionsOf(
  sandbox: RunningSandbox,
  idempotencyKey: string,
): Promise<SandboxTransaction[]> {
  return (await sandbox.control.transactions()).filter(
    (transaction) => transaction.idempotencyKey === idempotencyKey,
  );
}

/** The money-moving operations whose calls the sandbox settles by itself (no hosted checkout). */
export const MONEY_OPERATIONS = [
  'collections.mpesa',
  'collections.panAfrican',
  'payouts.mpesa',
  'payouts.panAfrican',
  'payouts.merchant',
  'transfers.send',
] as const;
export type MoneyOperation = (typeof MONEY_OPERATIONS)[number];

/** Small amounts, within each network's limits, so that hundreds of payouts fit the wallets. */
const AMOUNTS: Readonly<Record<MoneyOperation, number>> = {
  'collections.mpesa': 10,
  'collections.panAfrican': 1,
  'payouts.mpesa': 10,
  'payouts.panAfrican': 100,
  'payouts.merchant': 10,
  'transfers.send': 10,
};

/** What a test changes in an operation's valid request. */
export interface MoneyRequest {
  /** Where the sandbox posts the call's webhook (transfers have none). */
  callbackUrl: string;
  amount?: number;
  /** `REJECT` makes the sandbox refuse the call (HTTP 200, `success: false`). */
  narration?: string;
  /** Another receiver: 1000 to 9999 in place of the last four digits of the phone number. */
  receiver?: number;
}

/** Calls `operation` with its valid request of operation-cases.ts (a transfer goes to `beta`). */
export function callMoney(
  client: PaymentsClient,
  operation: MoneyOperation,
  request: MoneyRequest,
  callOptions: PaymentsCallOptions,
): Promise<Record<string, unknown>> {
  const amount = request.amount ?? AMOUNTS[operation];
  if (operation === 'transfers.send') {
    return client.transfers.send(
      { receiverUsername: 'beta', amount, narration: request.narration ?? 'Float top-up' },
      callOptions,
    ) as unknown as Promise<Record<string, unknown>>;
  }
  const testCase = OPERATION_CASES.find((candidate) => candidate.operation === operation)!;
  return callOperation(
    client,
    testCase,
    {
      ...testCase.request,
      amount,
      callbackUrl: request.callbackUrl,
      ...(request.narration === undefined ? {} : { narration: request.narration }),
      ...(request.receiver === undefined
        ? {}
        : {
            phoneNumber: `${String(testCase.request.phoneNumber).slice(0, -4)}${request.receiver}`,
          }),
    },
    callOptions,
  );
}

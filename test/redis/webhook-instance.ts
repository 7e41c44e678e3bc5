// One instance of a small app with the webhook module on a shared Redis, for the several-instances
// tests: built in the jest process (createWebhookInstance), or run as a child process that the
// crash test kills mid-handler (`node -r ts-node/register/transpile-only -r tsconfig-paths/register
// test/redis/webhook-instance.ts`, configured by environment variables, reporting on stdout).
import { Injectable, type INestApplication, Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import {
  OnPaymentEvent,
  type PaymentWebhookEvent,
  PaymentsWebhookModule,
} from '@malipo/nestjs/webhooks';
import { RedisPaymentsWebhookStore } from '@malipo/nestjs/redis';

/** The header the instances' `verify` hook expects (confirmation is off: no service here). */
export const WEBHOOK_SECRET_HEADER = 'x-test-webhook-secret';
const SECRET = 'several-instances-secret';

export interface WebhookInstanceOptions {
  redisUrl: string;
  /** Lease of a claim (ms). */
  leaseMs: number;
  /** How long the handler works (ms). */
  handlerMs?: number;
  /** The handler works until this resolves (after `handlerMs`), so a test decides when it ends. */
  hold?: (reference: string) => Promise<void>;
  /** Called when the handler starts and when it finishes (the child prints these). */
  report?: (line: { step: 'started' | 'finished'; reference: string }) => void;
}

export interface WebhookInstance {
  app: INestApplication;
  url: string;
  /** References whose handler finished here, in order. */
  handled: string[];
  /** POSTs a delivery of `reference` (a success) to this instance; resolves with the status. */
  deliver(reference: string): Promise<number>;
  close(): Promise<void>;
}

/** A webhook body of the service's shape, succeeded. */
export function webhookBody(reference: string): Record<string, unknown> {
  return {
    transaction_reference: reference,
    result_code: 0,
    remarks: 'Successfully processes m-pesa transaction',
    amount: 100,
    success: true,
  };
}

/** Starts an instance on a free loopback port. */
export async function createWebhookInstance(
  options: WebhookInstanceOptions,
): Promise<WebhookInstance> {
  const handled: string[] = [];

  @Injectable()
  class Fulfilment {
    @OnPaymentEvent()
    async fulfil(event: PaymentWebhookEvent): Promise<void> {
      options.report?.({ step: 'started', reference: event.transactionReference });
      if (options.handlerMs) await new Promise((r) => setTimeout(r, options.handlerMs));
      if (options.hold) await options.hold(event.transactionReference);
      handled.push(event.transactionReference);
      options.report?.({ step: 'finished', reference: event.transactionReference });
    }
  }

  @Module({
    imports: [
      PaymentsWebhookModule.forRootAsync({
        useFactory: () => ({
          confirm: false,
          verify: ({ headers }) => headers[WEBHOOK_SECRET_HEADER] === SECRET,
          leaseMs: options.leaseMs,
          store: new RedisPaymentsWebhookStore({ url: options.redisUrl }),
        }),
      }),
    ],
    providers: [Fulfilment],
  })
  class InstanceModule {}

  const app = await NestFactory.create(InstanceModule, { logger: false });
  await app.listen(0, '127.0.0.1');
  const url = `${await app.getUrl()}/webhooks/payments`;
  return {
    app,
    url,
    handled,
    deliver: async (reference) => {
      const response = await fetch(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', [WEBHOOK_SECRET_HEADER]: SECRET },
        body: JSON.stringify(webhookBody(reference)),
      });
      await response.arrayBuffer();
      return response.status;
    },
    close: () => app.close(),
  };
}

/** As a child process: REDIS_URL, LEASE_MS, HANDLER_MS; prints JSON lines. */
async function main(): Promise<void> {
  const instance = await createWebhookInstance({
    redisUrl: String(process.env.REDIS_URL),
    leaseMs: Number(process.env.LEASE_MS),
    handlerMs: Number(process.env.HANDLER_MS ?? 0),
    report: (line) => console.log(JSON.stringify(line)),
  });
  console.log(JSON.stringify({ step: 'listening', url: instance.url }));
}

if (require.main === module) void main();

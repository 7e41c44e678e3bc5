import { createServer } from 'node:net';
import type { LoggerService } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import type { NestExpressApplication } from '@nestjs/platform-express';
import { PaymentsExceptionFilter } from '@malipo/nestjs';
import { PayoutRunsExceptionFilter } from '@malipo/nestjs/runs';
import { AppModule, WEBHOOK_ROUTE } from './app.module';
import { setupOpenApi } from './openapi';

/** Largest JSON body the demo accepts (orders and webhooks are small). */
export const JSON_BODY_LIMIT = '64kb';

export interface DemoOptions {
  /** 0 picks a free port. */
  port: number;
  host?: string;
  /** Environment variables (default `process.env`); `PAYMENTS_DEFAULT_CALLBACK_URL` defaults to this app's webhook. */
  environment?: Record<string, string | undefined>;
  logger?: false | LoggerService;
}

export interface RunningDemo {
  app: NestExpressApplication;
  url: string;
  close(): Promise<void>;
}

/** A free TCP port, so the app knows its own webhook URL before it boots. */
async function freePort(host: string): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, host, resolve));
  const address = server.address();
  await new Promise((resolve) => server.close(resolve));
  if (address === null || typeof address === 'string') throw new Error('no free port');
  return address.port;
}

/** Creates and starts the demo shop. */
export async function startDemo(options: DemoOptions): Promise<RunningDemo> {
  const host = options.host ?? '127.0.0.1';
  const port = options.port === 0 ? await freePort(host) : options.port;
  const environment = { ...(options.environment ?? process.env) };
  environment.PAYMENTS_DEFAULT_CALLBACK_URL ||= `http://${host}:${port}/${WEBHOOK_ROUTE}`;

  const app = await NestFactory.create<NestExpressApplication>(
    AppModule.forEnvironment(environment),
    {
      logger: options.logger,
    },
  );
  app.useBodyParser('json', { limit: JSON_BODY_LIMIT });
  // A payout run's refusals, unknown runs and states that forbid an action, as HTTP answers.
  app.useGlobalFilters(new PaymentsExceptionFilter(), new PayoutRunsExceptionFilter());
  setupOpenApi(app, environment.PAYMENTS_DEFAULT_CALLBACK_URL);
  await app.listen(port, host);
  return { app, url: `http://${host}:${port}`, close: () => app.close() };
}

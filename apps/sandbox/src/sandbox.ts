import type { INestApplication, LoggerService } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { SandboxConfig } from './sandbox.config';
import { SandboxModule } from './sandbox.module';

export interface SandboxOptions {
  /** Default: env SANDBOX_PORT or 4010; 0 = ephemeral. */
  port?: number;
  /** Default '127.0.0.1'. */
  host?: string;
  /** Default: env SANDBOX_API_USERNAME or 'sandbox'. */
  apiUsername?: string;
  /** Default: env SANDBOX_API_PASSWORD or 'sandbox-secret'. */
  apiPassword?: string;
  /**
   * Username of the default account (the one of apiUsername/apiPassword). Default: env
   * SANDBOX_ACCOUNT_USERNAME or the apiUsername. The second account is always `beta`.
   */
  accountUsername?: string;
  /** Delay before an outcome webhook. Default: env SANDBOX_WEBHOOK_DELAY_MS or 1000. */
  webhookDelayMs?: number;
  /** Waits between re-deliveries of a failed webhook. Default [500, 1000, 2000]. */
  webhookRetryDelaysMs?: number[];
  /** KES per USD, fixed. Default 130. */
  usdRate?: number;
  /** Of each account. Default { local: 1_000_000, USD: 10_000 }. */
  initialBalances?: { local: number; USD: number };
  /** Default: Nest's console logger; false silences. */
  logger?: false | LoggerService;
}

export interface RunningSandbox {
  /** For example http://127.0.0.1:54321 (no trailing slash). */
  url: string;
  app: INestApplication;
  /** The default account's API credentials. */
  credentials: { apiUsername: string; apiPassword: string };
  /** Both accounts: the default one first, then `beta`. */
  accounts: { username: string; apiUsername: string; apiPassword: string }[];
  /**
   * Calls the control API (`/__sandbox/<path>`): `faults` (POST to inject, DELETE to clear),
   * `faults/random`, `transactions`, `wallets`, `accounts`, `requests`, `reset` (POST). Rejects
   * on a non-2xx answer.
   */
  control<T = unknown>(path: string, init?: { method?: string; body?: unknown }): Promise<T>;
  /** Stops the server and cancels pending webhooks; leaves no open handle. */
  close(): Promise<void>;
}

/** Starts an offline Payments Service emulator (see apps/sandbox/README.md). */
export async function startSandbox(options: SandboxOptions = {}): Promise<RunningSandbox> {
  const config = new SandboxConfig(options);
  const app = await NestFactory.create(SandboxModule.forRoot(config), {
    ...(options.logger === undefined ? {} : { logger: options.logger }),
    bodyParser: true,
    // Keep-alive sockets of clients would otherwise hold close() open.
    forceCloseConnections: true,
    // In-process users get an exception, not a process.exit, when start-up fails.
    abortOnError: false,
  });
  try {
    await app.listen(config.port, config.host);
  } catch (error) {
    await app.close();
    throw error;
  }
  const { port } = (app.getHttpServer() as Server).address() as AddressInfo;
  const url = `http://${urlHost(config.host)}:${port}`;
  config.publicUrl = url;

  let closing: Promise<void> | undefined;
  return {
    url,
    app,
    credentials: { apiUsername: config.apiUsername, apiPassword: config.apiPassword },
    accounts: config.accounts.map(({ username, apiUsername, apiPassword }) => ({
      username,
      apiUsername,
      apiPassword,
    })),
    control: async <T>(path: string, init: { method?: string; body?: unknown } = {}) => {
      const method = init.method ?? (init.body === undefined ? 'GET' : 'POST');
      const response = await fetch(`${url}/__sandbox/${path}`, {
        method,
        headers: init.body === undefined ? undefined : { 'content-type': 'application/json' },
        body: init.body === undefined ? undefined : JSON.stringify(init.body),
      });
      const text = await response.text();
      if (!response.ok)
        throw new Error(`sandbox ${method} ${path}: HTTP ${response.status} ${text}`);
      return (text === '' ? undefined : JSON.parse(text)) as T;
    },
    close: () => (closing ??= app.close()),
  };
}

/** A host a client can dial: wildcard binds are reached on loopback; IPv6 needs brackets. */
function urlHost(host: string): string {
  if (host === '0.0.0.0' || host === '') return '127.0.0.1';
  if (host === '::') return '[::1]';
  return host.includes(':') ? `[${host}]` : host;
}

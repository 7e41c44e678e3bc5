import type { INestApplication } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { SandboxControl } from './sandbox-control';
import { createSandboxControl } from './sandbox-control';
import { SandboxConfig } from './sandbox.config';
import type { SandboxOptions } from './sandbox.config';

export type { SandboxOptions } from './sandbox.config';
import { SandboxModule } from './sandbox.module';

/** A started sandbox, answered by {@link startSandbox}. */
export interface RunningSandbox {
  /** For example http://127.0.0.1:54321 (no trailing slash): the client's `baseUrl`. */
  url: string;
  /** The underlying Nest application (advanced use; prefer `control` and `close`). */
  app: INestApplication;
  /** The default account's API credentials. */
  credentials: { apiUsername: string; apiPassword: string };
  /** Both accounts: the default one first, then `beta`. */
  accounts: { username: string; apiUsername: string; apiPassword: string }[];
  /**
   * The control API (`/__sandbox/...`): `control.injectFault({ status: 503 })`,
   * `control.randomFaults({ rate: 0.2 })`, `control.clearFaults()`, `control.transactions()`,
   * `control.wallets()`, `control.accounts()`, `control.requests()`, `control.setRateLimit({
   * requestsPerSecond: 20 })`, `control.clearRateLimit()`, `control.reset()`; or
   * `control(path, { method, body })` for any path. Rejects with a `SandboxControlError` on a
   * non-2xx answer.
   */
  control: SandboxControl;
  /** Stops the server and cancels pending webhooks; leaves no open handle. */
  close(): Promise<void>;
}

/**
 * Starts an offline Payments Service emulator in this process, listening on `options.port`
 * (`0`: a free port). Call `close()` when done (for example in `afterAll`).
 * @example
 * const sandbox = await startSandbox({ port: 0, logger: false, webhookDelayMs: 20 });
 * const client = createPaymentsClient({ ...sandbox.credentials, baseUrl: sandbox.url });
 * await sandbox.control.injectFault({ status: 503 });
 * await sandbox.close();
 * @throws when the port is taken (`EADDRINUSE`) or an option is invalid.
 */
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
    control: createSandboxControl(url),
    close: () => (closing ??= app.close()),
  };
}

/** A host a client can dial: wildcard binds are reached on loopback; IPv6 needs brackets. */
function urlHost(host: string): string {
  if (host === '0.0.0.0' || host === '') return '127.0.0.1';
  if (host === '::') return '[::1]';
  return host.includes(':') ? `[${host}]` : host;
}

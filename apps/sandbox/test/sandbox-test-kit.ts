/* eslint-disable @typescript-eslint/no-unsafe-assignment, @typescript-eslint/no-unsafe-member-access -- a test helper: the specs' lint rules */
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import { createServer } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import type { Transaction } from '../src/ledger.service';
import type { RequestLogEntry } from '../src/request-log.service';
import type { RunningSandbox, SandboxOptions } from '../src/sandbox';
import { startSandbox } from '../src/sandbox';
import type { ExampleOperation } from './wire-examples';
import { WIRE_EXAMPLES } from './wire-examples';

/** Fast timings, so webhook specs take milliseconds. */
export const FAST_OPTIONS: SandboxOptions = {
  port: 0,
  logger: false,
  webhookDelayMs: 20,
  webhookRetryDelaysMs: [20, 40],
};

export function startFastSandbox(options: SandboxOptions = {}): Promise<RunningSandbox> {
  return startSandbox({ ...FAST_OPTIONS, ...options });
}

/** What `setUpSandbox` hands a spec: filled in by its `beforeAll`, so read it inside tests. */
export interface SandboxTestEnv {
  sandbox: RunningSandbox;
  client: SandboxClient;
  receiver: WebhookReceiver;
}

/**
 * Registers the usual jest hooks of a sandbox spec: `beforeAll` starts a webhook receiver and a
 * fast sandbox (with `options`), `afterAll` closes both, and unless `resetBeforeEach` is false,
 * `beforeEach` resets the sandbox. Call it at the top of a `describe`.
 */
export function setUpSandbox(
  options: SandboxOptions = {},
  { resetBeforeEach = true }: { resetBeforeEach?: boolean } = {},
): SandboxTestEnv {
  const env = {} as SandboxTestEnv;

  beforeAll(async () => {
    env.receiver = await WebhookReceiver.start();
    env.sandbox = await startFastSandbox(options);
    env.client = new SandboxClient(env.sandbox);
  });

  afterAll(async () => {
    await env.sandbox?.close();
    await env.receiver?.close();
  });

  if (resetBeforeEach) beforeEach(() => env.client.reset());

  return env;
}

/** Specs read deep into JSON answers; a loose type keeps them readable. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type Json = any;

export interface ApiResult {
  status: number;
  headers: Headers;
  text: string;
  /** Parsed JSON, or undefined when the body is not JSON. */
  json: Json;
}

export function basicAuth(username: string, password: string): string {
  return `Basic ${Buffer.from(`${username}:${password}`).toString('base64')}`;
}

async function toResult(response: Response): Promise<ApiResult> {
  const text = await response.text();
  let json: Json;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { status: response.status, headers: response.headers, text, json };
}

/** One entry of `GET /__sandbox/accounts`. */
export interface SandboxAccountState {
  username: string;
  apiUsername: string;
  userId: string;
  local: number;
  USD: number;
}

/** A small HTTP client for one sandbox: API calls with its credentials, and the controls. */
export class SandboxClient {
  constructor(private readonly sandbox: RunningSandbox) {}

  get url(): string {
    return this.sandbox.url;
  }

  async post(
    path: string,
    body: unknown,
    options: { idempotencyKey?: string; authorization?: string | null; raw?: string } = {},
  ): Promise<ApiResult> {
    const { apiUsername, apiPassword } = this.sandbox.credentials;
    const headers: Record<string, string> = { 'content-type': 'application/json' };
    const authorization =
      options.authorization === undefined
        ? basicAuth(apiUsername, apiPassword)
        : options.authorization;
    if (authorization !== null) headers.authorization = authorization;
    if (options.idempotencyKey) headers['idempotency-key'] = options.idempotencyKey;
    const response = await fetch(`${this.url}${path}`, {
      method: 'POST',
      headers,
      body: options.raw ?? JSON.stringify(body),
    });
    return toResult(response);
  }

  async get(path: string, init: RequestInit = {}): Promise<ApiResult> {
    return toResult(await fetch(`${this.url}${path}`, init));
  }

  /** An authenticated GET look-up (default: the default account's credentials). */
  async lookup(path: string, options: { authorization?: string | null } = {}): Promise<ApiResult> {
    const { apiUsername, apiPassword } = this.sandbox.credentials;
    const authorization =
      options.authorization === undefined
        ? basicAuth(apiUsername, apiPassword)
        : options.authorization;
    return this.get(path, authorization === null ? {} : { headers: { authorization } });
  }

  /** POSTs an operation's example body with `overrides` (see `wireBody`). */
  async send(
    operation: ExampleOperation,
    overrides: Record<string, unknown> = {},
    options: { idempotencyKey?: string; authorization?: string | null } = {},
  ): Promise<ApiResult> {
    return this.post(examplePath(operation), wireBody(operation, overrides), options);
  }

  async control(method: 'POST' | 'DELETE', path: string, body?: unknown): Promise<ApiResult> {
    const response = await fetch(`${this.url}${path}`, {
      method,
      headers: { 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return toResult(response);
  }

  async transactions(): Promise<Transaction[]> {
    return (await this.get('/__sandbox/transactions')).json as Transaction[];
  }

  async transaction(reference: string): Promise<Transaction> {
    return (await this.get(`/__sandbox/transactions/${reference}`)).json as Transaction;
  }

  async wallets(): Promise<{ local: number; USD: number; usdRate: number }> {
    return (await this.get('/__sandbox/wallets')).json as {
      local: number;
      USD: number;
      usdRate: number;
    };
  }

  async accounts(): Promise<SandboxAccountState[]> {
    return (await this.get('/__sandbox/accounts')).json as SandboxAccountState[];
  }

  async requests(): Promise<RequestLogEntry[]> {
    return (await this.get('/__sandbox/requests')).json as RequestLogEntry[];
  }

  async reset(): Promise<void> {
    await this.control('POST', '/__sandbox/reset');
  }
}

export interface ReceivedWebhook {
  path: string;
  contentType: string | undefined;
  body: Json;
  /** The status this receiver answered. */
  answered: number;
}

/**
 * A webhook receiver on 127.0.0.1 that records every delivery. Each callback path has its own
 * script of statuses (then 200), so a spec steering one transaction cannot disturb another.
 */
export class WebhookReceiver {
  readonly received: ReceivedWebhook[] = [];
  private readonly scripts = new Map<string, number[]>();
  private readonly sockets = new Set<Socket>();

  private constructor(
    private readonly server: Server,
    readonly baseUrl: string,
  ) {}

  static async start(): Promise<WebhookReceiver> {
    const server = createServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    const receiver = new WebhookReceiver(server, `http://127.0.0.1:${port}`);
    server.on('connection', (socket) => {
      receiver.sockets.add(socket);
      socket.on('close', () => receiver.sockets.delete(socket));
    });
    server.on('request', (req, res) => receiver.handle(req, res));
    return receiver;
  }

  /** The default callback URL: always answers 200. */
  get url(): string {
    return `${this.baseUrl}/webhook`;
  }

  /** A callback URL of its own whose deliveries are answered `statuses` in order, then 200. */
  scripted(name: string, ...statuses: number[]): string {
    this.scripts.set(`/${name}`, statuses);
    return `${this.baseUrl}/${name}`;
  }

  /** Deliveries for one transaction reference, in arrival order. */
  for(reference: string): ReceivedWebhook[] {
    return this.received.filter((w) => w.body?.transaction_reference === reference);
  }

  /** Waits until `count` deliveries for `reference` arrived (the bound only ends a broken run). */
  async waitFor(reference: string, count = 1, timeoutMs = 20_000): Promise<ReceivedWebhook[]> {
    await waitUntil(() => this.for(reference).length >= count, timeoutMs);
    return this.for(reference);
  }

  async close(): Promise<void> {
    const closed = new Promise<void>((resolve) => this.server.close(() => resolve()));
    for (const socket of this.sockets) socket.destroy();
    await closed;
  }

  private handle(req: IncomingMessage, res: ServerResponse): void {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const path = req.url ?? '';
      const answered = this.scripts.get(path)?.shift() ?? 200;
      let body: Json;
      try {
        body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
      } catch {
        body = undefined;
      }
      this.received.push({ path, contentType: req.headers['content-type'], body, answered });
      res.statusCode = answered;
      res.end(answered < 300 ? 'ok' : 'nope');
    });
  }
}

/**
 * Polls `condition` every 5 ms until it holds, or fails after `timeoutMs`: generous, so that only
 * a broken run reaches it, never a busy machine.
 */
export async function waitUntil(condition: () => boolean, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`Condition not met within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** A URL on which nothing listens (a port just released), for network-error deliveries. */
export async function deadUrl(): Promise<string> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return `http://127.0.0.1:${port}/webhook`;
}

/** The API path of an operation's example. */
export function examplePath(operation: ExampleOperation): string {
  return WIRE_EXAMPLES[operation].path;
}

/** The example wire body of an operation, with `overrides` (undefined removes a key). */
export function wireBody(
  operation: ExampleOperation,
  overrides: Record<string, unknown> = {},
): Record<string, unknown> {
  const body: Record<string, unknown> = { ...WIRE_EXAMPLES[operation].body, ...overrides };
  for (const [key, value] of Object.entries(overrides)) if (value === undefined) delete body[key];
  return body;
}

/** Credentials of the second sandbox account. */
export const BETA_AUTH = basicAuth('beta', 'beta-secret');

import { createServer } from 'node:http';
import type { Server, ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { ConsoleLogger, Logger } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import {
  createPaymentsClient,
  PaymentsError,
  PaymentsModule,
  PaymentsValidationError,
  PayoutsService,
  ServiceAPIError,
} from '@malipo/nestjs';
import type { PaymentsModuleOptions } from '@malipo/nestjs';
import { CapturingLogger, everythingVisibleIn } from '../../libs/payments/spec-support/capture';
import { OPERATION_CASES, successBody } from '../../libs/payments/spec-support/operation-cases';
import { RecordingServer } from '../../libs/payments/spec-support/recording-server';
import { steady } from '../../libs/payments/spec-support/steady';
import { waitFor } from '../../libs/payments/spec-support/wait-for';

const PASSWORD = 'S3cret-P4ss/word';
const USERNAME = 'api-user';
const PAYOUT = OPERATION_CASES[3].request;
const PAYOUT_ANSWER = successBody('payout');
/** A client timeout for the deadline scenarios: long enough for any attempt to be sent. */
const TIMEOUT_MS = 1_000;
/** How late the slow server answers: far beyond TIMEOUT_MS, however busy the machine. */
const SLOW_MS = 10_000;

/** A loopback server whose every request is answered by `handle`; it counts requests. */
class HostileServer {
  requests = 0;
  private readonly sockets = new Set<Socket>();

  private constructor(
    private readonly server: Server,
    readonly url: string,
  ) {}

  static async start(handle: (res: ServerResponse) => void): Promise<HostileServer> {
    const server = createServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    const hostile = new HostileServer(server, `http://127.0.0.1:${port}`);
    server.on('connection', (socket) => {
      hostile.sockets.add(socket);
      socket.on('close', () => hostile.sockets.delete(socket));
    });
    server.on('request', (req, res) => {
      hostile.requests += 1;
      req.resume();
      req.on('end', () => handle(res));
    });
    return hostile;
  }

  close(): Promise<void> {
    for (const socket of this.sockets) socket.destroy();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}

/** Headers and two bytes of a 200, then one byte every 500 ms: never complete in time. */
function drip(res: ServerResponse): void {
  res.writeHead(200, { 'content-type': 'application/json' });
  res.write('{"');
  const timer = setInterval(() => {
    if (!res.writableEnded && !res.destroyed) res.write(' ');
  }, 500);
  res.on('close', () => clearInterval(timer));
}

async function failure(promise: Promise<unknown>): Promise<ServiceAPIError> {
  const error: unknown = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(ServiceAPIError);
  expect(error).toBeInstanceOf(PaymentsError);
  return error as ServiceAPIError;
}

const clientOf = (baseUrl: string, options: Partial<PaymentsModuleOptions> = {}) =>
  createPaymentsClient({ apiUsername: USERNAME, apiPassword: PASSWORD, baseUrl, ...options });

describe('money safety under hostile conditions', () => {
  describe('retries must not pay twice', () => {
    let slow: HostileServer;
    beforeAll(async () => {
      // Ignores Idempotency-Key and answers long after the client's timeout: every attempt
      // "executes", none is answered in time.
      slow = await HostileServer.start((res) => {
        const timer = setTimeout(() => res.end(JSON.stringify(PAYOUT_ANSWER)), SLOW_MS);
        res.on('close', () => clearTimeout(timer));
      });
    });
    /** The requests that reached the server, once they stopped coming (it runs in this process). */
    const executions = (atLeast: number) =>
      steady(() => slow.requests, 'the attempts to arrive', { done: (n) => n >= atLeast });
    afterEach(() => {
      slow.requests = 0;
    });
    afterAll(() => slow.close());

    it('executes a slow payout 3 times by default (the document rule), and says it may have', async () => {
      const client = clientOf(slow.url, { timeout: TIMEOUT_MS });
      const error = await failure(client.payouts.mpesa(PAYOUT));
      await client.close();

      expect(await executions(3)).toBe(3);
      expect(error).toMatchObject({ code: 'TIMEOUT', attempts: 3, mayHaveExecuted: true });
    });

    it('executes it once with retryAmbiguous: false, as a module option or per call', async () => {
      const module = clientOf(slow.url, { timeout: TIMEOUT_MS, retryAmbiguous: false });
      const byModule = await failure(module.payouts.mpesa(PAYOUT));
      const perCall = clientOf(slow.url, { timeout: TIMEOUT_MS });
      const byCall = await failure(perCall.payouts.mpesa(PAYOUT, { retryAmbiguous: false }));
      await Promise.all([module.close(), perCall.close()]);

      expect(await executions(2)).toBe(2);
      expect([byModule.attempts, byCall.attempts]).toEqual([1, 1]);
      expect(byModule.mayHaveExecuted && byCall.mayHaveExecuted).toBe(true);
    });

    it('retries a DNS failure (not sent), also with retryAmbiguous: false', async () => {
      const client = clientOf('https://no-such-host.invalid', { retryAmbiguous: false });
      const error = await failure(client.payouts.mpesa(PAYOUT));
      await client.close();

      expect(error).toMatchObject({ code: 'NETWORK_ERROR', attempts: 3, mayHaveExecuted: false });
      expect(['ENOTFOUND', 'EAI_AGAIN']).toContain((error.cause as { code?: string }).code);
    });
  });

  describe('Retry-After', () => {
    let server: RecordingServer;
    beforeAll(async () => {
      server = await RecordingServer.start();
    });
    afterEach(() => server.reset());
    afterAll(() => server.close());

    it('waits max(backoff, Retry-After) before retrying a 503', async () => {
      server.reply(
        { status: 503, headers: { 'Retry-After': '1' } },
        { status: 200, body: PAYOUT_ANSWER },
      );
      const client = clientOf(server.url);
      await client.payouts.mpesa(PAYOUT);
      await client.close();

      // At least the Retry-After (a lower bound holds on a busy machine), and retried once.
      expect(server.requests).toHaveLength(2);
      const gap = server.requests[1].at - server.requests[0].at;
      expect(gap).toBeGreaterThanOrEqual(990);
    });

    it('does not wait for a Retry-After above maxRetryAfterMs, and reports it', async () => {
      // An hour: a client that waited for it would never settle, and jest's timeout would fail it.
      server.fallback = () => ({ status: 503, headers: { 'Retry-After': '3600' } });
      const client = clientOf(server.url);
      const error = await failure(client.payouts.mpesa(PAYOUT));
      await client.close();

      expect(server.requests).toHaveLength(1);
      expect(error).toMatchObject({ status: 503, attempts: 1, retryAfterMs: 3_600_000 });
    });

    it('exposes Retry-After and sanitised headers of a 429, not retried', async () => {
      server.fallback = () => ({
        status: 429,
        headers: { 'Retry-After': '2', 'Set-Cookie': 'session=abc', 'X-Request-Id': 'r-1' },
        body: { status: 429, success: false, message: 'slow down' },
      });
      const client = clientOf(server.url);
      const error = await failure(client.payouts.mpesa(PAYOUT));
      await client.close();

      expect(server.requests).toHaveLength(1);
      expect(error).toMatchObject({ status: 429, retryAfterMs: 2_000, mayHaveExecuted: false });
      expect(error.headers).toMatchObject({ 'retry-after': '2', 'x-request-id': 'r-1' });
      expect(error.headers).not.toHaveProperty('set-cookie');
    });
  });

  describe('every attempt has a wall-clock deadline', () => {
    let dripping: HostileServer;
    let silent: HostileServer;
    beforeAll(async () => {
      dripping = await HostileServer.start(drip);
      silent = await HostileServer.start(() => undefined);
    });
    afterAll(() => Promise.all([dripping.close(), silent.close()]));

    // The drip never ends and the silent server never answers: a call that outlived its deadline
    // would never settle, and jest's timeout would fail the test.
    it('cuts a body dripped at 2 bytes/s at the timeout, and does not retry it', async () => {
      const client = clientOf(dripping.url, { timeout: TIMEOUT_MS });
      const error = await failure(client.payouts.mpesa(PAYOUT));
      await client.close();

      expect(error).toMatchObject({
        code: 'RESPONSE_INCOMPLETE',
        status: 200,
        attempts: 1,
        mayHaveExecuted: true,
      });
      expect(dripping.requests).toBe(1);
    });

    it('times out a server that never answers, per attempt', async () => {
      const client = clientOf(silent.url, { timeout: TIMEOUT_MS, maxRetries: 1 });
      const error = await failure(client.payouts.mpesa(PAYOUT));
      await client.close();

      expect(error).toMatchObject({ code: 'TIMEOUT', attempts: 2, mayHaveExecuted: true });
      expect(
        await steady(() => silent.requests, 'the attempts to arrive', { done: (n) => n >= 2 }),
      ).toBe(2);
    });

    it('lets app.close() resolve within timeout + grace while a call is stuck', async () => {
      dripping.requests = 0;
      const moduleRef = await Test.createTestingModule({
        imports: [
          PaymentsModule.forRoot({
            apiUsername: USERNAME,
            apiPassword: PASSWORD,
            baseUrl: dripping.url,
            // Long enough that close() surely comes while the attempt is on the wire.
            timeout: 3 * TIMEOUT_MS,
          }),
        ],
      }).compile();
      const call = moduleRef
        .get(PayoutsService)
        .mpesa(PAYOUT)
        .catch((e: unknown) => e);
      await waitFor(
        () => (dripping.requests > 0 ? true : undefined),
        'the call to reach the server',
      );

      // The drip never ends: a close() that waited for the call would never resolve.
      await moduleRef.close();
      const error = (await call) as ServiceAPIError;

      expect(error).toBeInstanceOf(ServiceAPIError);
      expect(error).toMatchObject({ code: 'CLIENT_CLOSED', mayHaveExecuted: true });
      expect(dripping.requests).toBe(1);
    });
  });

  describe('credentials never reach a proxy in clear', () => {
    it('never sends a plain-http call through HTTP_PROXY', async () => {
      const proxy = await RecordingServer.start();
      proxy.fallback = () => ({
        status: 200,
        body: { ...PAYOUT_ANSWER, correlator_id: 'FORGEDeW' },
      });
      const service = await RecordingServer.start();
      service.fallback = () => ({ status: 200, body: PAYOUT_ANSWER });
      const saved = { upper: process.env.HTTP_PROXY, lower: process.env.http_proxy };
      process.env.HTTP_PROXY = proxy.url;
      process.env.http_proxy = proxy.url;
      try {
        const client = clientOf(service.url);
        const response = await client.payouts.mpesa(PAYOUT);
        await client.close();

        expect(proxy.requests).toHaveLength(0);
        expect(service.requests).toHaveLength(1);
        expect(response.transactionReference).toBe('9BD141203407eW');
      } finally {
        for (const [name, value] of [
          ['HTTP_PROXY', saved.upper],
          ['http_proxy', saved.lower],
        ] as const) {
          if (value === undefined) delete process.env[name];
          else process.env[name] = value;
        }
        await proxy.close();
        await service.close();
      }
    });

    it('validates an explicit proxy, and refuses it for a plain-http service', () => {
      const invalid = () =>
        clientOf('https://payments.example.com', { proxy: { host: 'proxy.internal', port: 0 } });
      const inClear = () =>
        clientOf('http://payments.internal', {
          proxy: { host: 'proxy.internal', port: 3128 },
          allowInsecureHttp: false,
        });
      for (const build of [invalid, inClear]) {
        let error: unknown;
        try {
          build();
        } catch (e) {
          error = e;
        }
        expect(error).toBeInstanceOf(PaymentsValidationError);
        expect((error as PaymentsValidationError).errors.map((e) => e.field)).toContain('proxy');
      }
    });
  });

  describe('credentials never reach a log or an error, in any encoding', () => {
    const token = Buffer.from(`${USERNAME}:${PASSWORD}`).toString('base64');
    const hex = Buffer.from(PASSWORD).toString('hex');
    const escaped = [...PASSWORD]
      .map((c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`)
      .join('');
    const FORMS: [string, string][] = [
      ['the URL-encoded Basic token', encodeURIComponent(token)],
      ['the token without padding', token.replace(/=+$/, '')],
      ['the base64url token', Buffer.from(token, 'base64').toString('base64url')],
      ['base64 of the password', Buffer.from(PASSWORD).toString('base64')],
      ['hex of the password', hex],
      ['upper-case hex of the password', hex.toUpperCase()],
      ['the password \\u-escaped in a non-JSON body', escaped],
    ];
    let server: RecordingServer;
    const logger = new CapturingLogger();
    beforeAll(async () => {
      server = await RecordingServer.start();
      Logger.overrideLogger(logger);
    });
    afterEach(() => server.reset());
    afterAll(async () => {
      Logger.overrideLogger(new ConsoleLogger());
      await server.close();
    });

    it.each(FORMS)('redacts %s from logs, errors and _raw', async (_label, form) => {
      server.reply(
        { status: 400, raw: `<html>denied ${form}</html>` },
        { status: 200, body: { ...PAYOUT_ANSWER, echo: form } },
      );
      const client = clientOf(server.url, { debug: true });
      const error = await failure(client.payouts.mpesa(PAYOUT));
      const response = await client.payouts.mpesa(PAYOUT);
      await client.close();

      const visible = [
        everythingVisibleIn(error),
        JSON.stringify(response._raw),
        ...logger.lines.map((line) => line.message),
      ].join('\n');
      expect(logger.lines.length).toBeGreaterThan(0);
      expect(visible).not.toContain(form);
      expect(visible).toContain('[REDACTED]');
    });
  });

  describe('no untyped failure', () => {
    let server: RecordingServer;
    beforeAll(async () => {
      server = await RecordingServer.start();
    });
    afterAll(() => server.close());

    it('reads a 100,000-deep JSON answer the same way with debug off and on', async () => {
      const depth = 100_000;
      const raw = `${JSON.stringify(PAYOUT_ANSWER).slice(0, -1)},"deep":${'['.repeat(depth)}${']'.repeat(depth)}}`;
      server.fallback = () => ({ status: 200, raw });
      Logger.overrideLogger(new CapturingLogger());
      try {
        const outcomes = [];
        for (const debug of [false, true]) {
          const client = clientOf(server.url, { debug });
          outcomes.push(
            await client.payouts.mpesa(PAYOUT).then(
              (response) => ({ reference: response.transactionReference }),
              (error: unknown) => ({ error }),
            ),
          );
          await client.close();
        }
        expect(outcomes).toEqual([
          { reference: '9BD141203407eW' },
          { reference: '9BD141203407eW' },
        ]);
      } finally {
        Logger.overrideLogger(new ConsoleLogger());
      }
    });
  });
});

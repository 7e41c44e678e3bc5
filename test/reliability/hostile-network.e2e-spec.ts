// Money safety on a hostile network: which failures are retried, what `mayHaveExecuted` says,
// how Retry-After is obeyed, and that no attempt outlives its deadline, over real loopback HTTP.
import { createServer, type AddressInfo } from 'node:net';
import { ConsoleLogger, Logger, Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import {
  createPaymentsClient,
  PaymentsExceptionFilter,
  PaymentsModule,
  PayoutsService,
} from '@malipo/nestjs';
import type { PaymentsClient, PaymentsModuleOptions, ServiceAPIError } from '@malipo/nestjs';
import { CapturingLogger } from '../../libs/payments/spec-support/capture';
import { steady } from '../../libs/payments/spec-support/steady';
import { waitFor } from '../../libs/payments/spec-support/wait-for';
import {
  answer,
  drip,
  failure,
  type Handler,
  HostileServer,
  PASSWORD,
  PAYOUT,
  PAYOUT_ANSWER,
  PAYOUT_REFERENCE,
  refusingUrl,
  resetAfterRead,
  silent,
  timed,
  truncated,
  UnacceptingListener,
  USERNAME,
} from './support/hostile';

/** A client timeout for the deadline scenarios: long enough for any attempt to be sent. */
const TIMEOUT_MS = 1_000;
/** How late the slow server answers: far beyond TIMEOUT_MS, however busy the machine. */
const SLOW_MS = 10_000;

/** Answers `body` after `ms`, unless the client hung up first. */
function late(body: unknown, ms: number): Handler {
  return (res, req, index) => {
    const timer = setTimeout(() => answer(body)(res, req, index), ms);
    res.on('close', () => clearTimeout(timer));
  };
}

/** The requests that reached `server`, once at least `atLeast` did and no more came for a while. */
const executions = (server: HostileServer, atLeast: number) =>
  steady(() => server.executions, 'the attempts to arrive', { done: (n) => n >= atLeast });

const figures: string[] = [];
const clients: PaymentsClient[] = [];
function clientOf(baseUrl: string, options: Partial<PaymentsModuleOptions> = {}): PaymentsClient {
  const client = createPaymentsClient({
    apiUsername: USERNAME,
    apiPassword: PASSWORD,
    baseUrl,
    ...options,
  });
  clients.push(client);
  return client;
}
afterEach(async () => {
  await Promise.all(clients.splice(0).map((client) => client.close()));
});
afterAll(() => {
  // The figures docs/reliability.md quotes.
  console.log(`hostile network figures:\n${figures.join('\n')}`);
});

describe('hostile network', () => {
  describe('retry classification: not sent is always retried, maybe executed says so', () => {
    it('retries a refused connection 3 times, mayHaveExecuted false, also with retryAmbiguous: false', async () => {
      const url = await refusingUrl();
      for (const retryAmbiguous of [true, false]) {
        const { result: error, ms } = await timed(() =>
          failure(clientOf(url, { retryAmbiguous }).payouts.mpesa(PAYOUT)),
        );
        expect(error).toMatchObject({ code: 'NETWORK_ERROR', attempts: 3, mayHaveExecuted: false });
        expect(error.cause).toMatchObject({ code: 'ECONNREFUSED' });
        expect(error.message).toContain('the request was not sent');
        // Backoffs of 200 and 400 ms at least (a lower bound holds on a busy machine).
        expect(ms).toBeGreaterThanOrEqual(590);
        figures.push(
          `refused (retryAmbiguous ${retryAmbiguous}): 3 attempts, ${Math.round(ms)} ms`,
        );
      }
    });

    it('retries a DNS failure of https://no-such-host.invalid 3 times, mayHaveExecuted false', async () => {
      const { result: error, ms } = await timed(() =>
        failure(
          clientOf('https://no-such-host.invalid', { retryAmbiguous: false }).payouts.mpesa(PAYOUT),
        ),
      );
      expect(error).toMatchObject({ code: 'NETWORK_ERROR', attempts: 3, mayHaveExecuted: false });
      expect(['ENOTFOUND', 'EAI_AGAIN']).toContain((error.cause as { code?: string }).code);
      figures.push(`DNS failure: 3 attempts, ${Math.round(ms)} ms`);
    });

    it('retries a TLS handshake the server refuses (an alert), mayHaveExecuted false', async () => {
      // A TLS record of a fatal `protocol_version` alert in answer to the ClientHello: the
      // request sat in the TLS socket, written but never sent, when the handshake failed.
      const alerts = createServer((socket) => {
        socket.once('data', () =>
          socket.end(Buffer.from([0x15, 0x03, 0x01, 0x00, 0x02, 0x02, 0x46])),
        );
        socket.on('error', () => undefined);
      });
      await new Promise<void>((resolve) => alerts.listen(0, '127.0.0.1', resolve));
      try {
        const { port } = alerts.address() as AddressInfo;
        const error = await failure(
          clientOf(`https://127.0.0.1:${port}`, { retryAmbiguous: false }).payouts.mpesa(PAYOUT),
        );
        expect(error).toMatchObject({ code: 'NETWORK_ERROR', attempts: 3, mayHaveExecuted: false });
        expect(error.cause).toMatchObject({ code: 'EPROTO' });
        expect(error.message).toContain('the request was not sent');
      } finally {
        await new Promise((resolve) => alerts.close(resolve));
      }
    });

    it('retries a connect that never completes (timeout before sending), mayHaveExecuted false', async () => {
      const listener = await UnacceptingListener.start();
      try {
        // The precondition: the kernel really leaves a new connect pending. It never completes,
        // so a call without a deadline would never settle, and jest's timeout would fail it.
        expect(await listener.connectHangsFor(100)).toBe(true);
        const { result: error, ms } = await timed(() =>
          failure(
            clientOf(listener.url, { timeout: 200, retryAmbiguous: false }).payouts.mpesa(PAYOUT),
          ),
        );
        expect(error).toMatchObject({ code: 'TIMEOUT', attempts: 3, mayHaveExecuted: false });
        expect(error.message).toContain('the request was not sent');
        // Three attempts of 200 ms and backoffs of 200 and 400 ms, at least.
        expect(ms).toBeGreaterThanOrEqual(1_190);
        figures.push(`connect timeout: 3 attempts, ${Math.round(ms)} ms`);
      } finally {
        await listener.close();
      }
    });

    describe('ambiguous failures', () => {
      let server: HostileServer;
      beforeAll(async () => {
        server = await HostileServer.start(silent);
      });
      afterEach(() => {
        server.seen.length = 0;
      });
      afterAll(() => server.close());

      it.each([
        ['a reset after the request was written', resetAfterRead, 'NETWORK_ERROR', 3],
        ['a 5xx', answer({ success: false, message: 'down' }, 502), 'SERVICE_ERROR', 3],
        ['a 2xx whose body is HTML', answer('<html>ok</html>'), 'INVALID_RESPONSE', 1],
        ['a 2xx whose body is cut short', truncated, 'RESPONSE_INCOMPLETE', 1],
      ] as const)('%s: mayHaveExecuted true', async (_label, handler, code, attempts) => {
        server.handle = handler;
        const error = await failure(clientOf(server.url).payouts.mpesa(PAYOUT));
        expect(error).toMatchObject({ code, attempts, mayHaveExecuted: true });
        expect(server.executions).toBe(attempts);
      });

      it('a timeout after the request was written: mayHaveExecuted true', async () => {
        server.handle = silent;
        const error = await failure(
          clientOf(server.url, { timeout: TIMEOUT_MS }).payouts.mpesa(PAYOUT),
        );
        expect(error).toMatchObject({ code: 'TIMEOUT', attempts: 3, mayHaveExecuted: true });
        expect(await executions(server, 3)).toBe(3);
      });

      it('stays mayHaveExecuted after a later attempt fails before sending', async () => {
        // The first attempt reaches the service, which then goes away: later attempts are refused.
        server.handle = (res) => {
          res.socket?.resetAndDestroy();
          void server.close();
        };
        const error = await failure(clientOf(server.url).payouts.mpesa(PAYOUT));
        server = await HostileServer.start(silent);

        expect(error).toMatchObject({ code: 'NETWORK_ERROR', attempts: 3, mayHaveExecuted: true });
        expect(error.cause).toMatchObject({ code: 'ECONNREFUSED' });
        expect(error.message).not.toContain('the request was not sent');
      });

      it('stays mayHaveExecuted when a 5xx is followed by a refusal', async () => {
        server.handle = (res, req, index) =>
          answer(
            { success: false, message: index === 0 ? 'gateway' : 'duplicate' },
            index === 0 ? 502 : 409,
          )(res, req, index);
        const error = await failure(clientOf(server.url).payouts.mpesa(PAYOUT));
        expect(error).toMatchObject({
          code: 'SERVICE_ERROR',
          status: 409,
          attempts: 2,
          mayHaveExecuted: true,
        });
      });
    });

    describe('a slow server that ignores Idempotency-Key (answers after the timeout)', () => {
      let slow: HostileServer;
      beforeAll(async () => {
        slow = await HostileServer.start(late(PAYOUT_ANSWER, SLOW_MS));
      });
      afterEach(() => {
        slow.seen.length = 0;
      });
      afterAll(() => slow.close());

      it('executes one payout 3 times with the default options', async () => {
        const error = await failure(
          clientOf(slow.url, { timeout: TIMEOUT_MS }).payouts.mpesa(PAYOUT),
        );
        expect(error).toMatchObject({ code: 'TIMEOUT', attempts: 3, mayHaveExecuted: true });
        expect(await executions(slow, 3)).toBe(3);
        // One key on every attempt: a service that honours it would execute once.
        expect(new Set(slow.seen.map((r) => r.headers['idempotency-key'])).size).toBe(1);
        figures.push(`slow server, default: ${slow.executions} executions`);
      });

      it('executes it exactly once with retryAmbiguous: false, as module option and per call', async () => {
        const byModule = await failure(
          clientOf(slow.url, { timeout: TIMEOUT_MS, retryAmbiguous: false }).payouts.mpesa(PAYOUT),
        );
        expect(await executions(slow, 1)).toBe(1);
        const byCall = await failure(
          clientOf(slow.url, { timeout: TIMEOUT_MS }).payouts.mpesa(PAYOUT, {
            retryAmbiguous: false,
          }),
        );
        expect(await executions(slow, 2)).toBe(2);
        for (const error of [byModule, byCall]) {
          expect(error).toMatchObject({ code: 'TIMEOUT', attempts: 1, mayHaveExecuted: true });
        }
        figures.push('slow server, retryAmbiguous false: 1 execution (module), 1 (per call)');
      });

      it('per call retryAmbiguous: true overrides a module false', async () => {
        await failure(
          clientOf(slow.url, { timeout: TIMEOUT_MS, retryAmbiguous: false }).payouts.mpesa(PAYOUT, {
            retryAmbiguous: true,
          }),
        );
        expect(await executions(slow, 3)).toBe(3);
      });
    });
  });

  describe('Retry-After', () => {
    let server: HostileServer;
    beforeAll(async () => {
      server = await HostileServer.start(silent);
    });
    afterEach(() => {
      server.seen.length = 0;
    });
    afterAll(() => server.close());

    it('waits max(backoff, Retry-After: 1) = 1,000 ms before retrying a 503', async () => {
      server.handle = (res, req, index) =>
        index === 0
          ? answer({ success: false }, 503, 0, { 'Retry-After': '1' })(res, req, index)
          : answer(PAYOUT_ANSWER)(res, req, index);
      const response = await clientOf(server.url).payouts.mpesa(PAYOUT);
      const gap = server.seen[1].at - server.seen[0].at;

      expect(response.transactionReference).toBe(PAYOUT_REFERENCE);
      // At least the Retry-After (a lower bound holds on a busy machine), and retried once.
      expect(server.seen).toHaveLength(2);
      expect(gap).toBeGreaterThanOrEqual(990);
      figures.push(`503 Retry-After 1: gap ${Math.round(gap)} ms`);
    });

    it.each(['1e3', '0x10', 'Infinity', '12.5', '-5'])(
      'reads Retry-After %s, no delay a server may send, as none: retried at the backoff',
      async (value) => {
        server.handle = (res, req, index) =>
          index === 0
            ? answer({ success: false }, 503, 0, { 'Retry-After': value })(res, req, index)
            : answer(PAYOUT_ANSWER)(res, req, index);
        const response = await clientOf(server.url).payouts.mpesa(PAYOUT);

        expect(response.transactionReference).toBe(PAYOUT_REFERENCE);
        expect(server.seen).toHaveLength(2);
      },
    );

    it.each([
      ['an hour (above maxRetryAfterMs 5,000)', '3600', 3_600_000],
      ['all digits, beyond a day', '9'.repeat(23), 86_400_000],
      ['400 digits', '9'.repeat(400), 86_400_000],
      ['the year 9999', 'Fri, 31 Dec 9999 23:59:59 GMT', 86_400_000],
      ['a day and a second', '86401', 86_400_000],
    ])(
      'does not retry a 503 asking for %s, and reports the wait (a day at most)',
      async (_label, value, reported) => {
        // A client that waited for it would never settle, and jest's timeout would fail the test.
        server.handle = answer({ success: false }, 503, 0, { 'Retry-After': value });
        const error = await failure(clientOf(server.url).payouts.mpesa(PAYOUT));

        expect(server.seen).toHaveLength(1);
        expect(error).toMatchObject({
          status: 503,
          attempts: 1,
          mayHaveExecuted: true,
          retryAfterMs: reported,
        });
        expect(new PaymentsExceptionFilter().toResponse(error)).toMatchObject({
          retryAfterMs: reported,
        });
        figures.push(
          `503 Retry-After ${value.slice(0, 32)}: 1 attempt, retryAfterMs ${error.retryAfterMs}`,
        );
      },
    );

    it('reads an HTTP-date Retry-After as the wait until then', async () => {
      server.handle = answer({ success: false }, 503, 0, {
        'Retry-After': new Date(Date.now() + 3_600_000).toUTCString(),
      });
      const error = await failure(clientOf(server.url).payouts.mpesa(PAYOUT));

      expect(server.seen).toHaveLength(1);
      // An hour, less the time the answer took to read (a second's rounding of the date).
      expect(error.retryAfterMs).toBeGreaterThan(3_500_000);
      expect(error.retryAfterMs).toBeLessThanOrEqual(3_600_000);
    });

    it('does not retry a Retry-After above a lowered maxRetryAfterMs (0)', async () => {
      server.handle = (res, req, index) =>
        index === 0
          ? answer({ success: false }, 503, 0, { 'Retry-After': '1' })(res, req, index)
          : answer(PAYOUT_ANSWER)(res, req, index);
      await expect(
        clientOf(server.url, { maxRetryAfterMs: 0 }).payouts.mpesa(PAYOUT),
      ).rejects.toMatchObject({ status: 503, attempts: 1, retryAfterMs: 1_000 });
    });

    it('does not retry a 429, and exposes Retry-After and sanitised headers', async () => {
      const token = Buffer.from(`${USERNAME}:${PASSWORD}`).toString('base64');
      server.handle = (res) => {
        res.writeHead(429, {
          'Retry-After': '2',
          'Set-Cookie': 'session=abc',
          'X-Request-Id': 'r-1',
          'X-Echo-Auth': `Basic ${token}`,
          'X-Echo-Password': PASSWORD,
          'content-type': 'application/json',
        });
        res.end(JSON.stringify({ status: 429, success: false, message: 'slow down' }));
      };
      const error = await failure(clientOf(server.url).payouts.mpesa(PAYOUT));

      expect(server.seen).toHaveLength(1);
      expect(error).toMatchObject({ status: 429, retryAfterMs: 2_000, mayHaveExecuted: false });
      const headers = error.headers ?? {};
      expect(headers).toMatchObject({ 'retry-after': '2', 'x-request-id': 'r-1' });
      expect(headers).not.toHaveProperty('set-cookie');
      expect(Object.keys(headers).every((name) => name === name.toLowerCase())).toBe(true);
      expect(headers['x-echo-auth']).toBe('Basic [REDACTED]');
      expect(headers['x-echo-password']).toBe('[REDACTED]');
      expect(JSON.stringify(headers)).not.toContain(token);
    });
  });

  describe('every attempt has a wall-clock deadline', () => {
    let dripping: HostileServer;
    let quiet: HostileServer;
    beforeAll(async () => {
      dripping = await HostileServer.start(drip);
      quiet = await HostileServer.start(silent);
    });
    afterEach(() => {
      dripping.seen.length = 0;
      quiet.seen.length = 0;
    });
    afterAll(() => Promise.all([dripping.close(), quiet.close()]));

    // The drip never ends and the quiet server never answers: a call that outlived its deadline
    // would never settle, and jest's timeout would fail the test.
    it('cuts a body dripped at 2 bytes/s at timeout 1,000 ms, RESPONSE_INCOMPLETE, not retried', async () => {
      const { result: error, ms } = await timed(() =>
        failure(clientOf(dripping.url, { timeout: TIMEOUT_MS }).payouts.mpesa(PAYOUT)),
      );
      expect(ms).toBeGreaterThanOrEqual(990);
      expect(error).toMatchObject({
        code: 'RESPONSE_INCOMPLETE',
        status: 200,
        attempts: 1,
        mayHaveExecuted: true,
      });
      expect(dripping.executions).toBe(1);
      figures.push(`drip: rejected after ${Math.round(ms)} ms, 1 attempt`);
    });

    it('cuts a server that never answers at timeout 1,000 ms, TIMEOUT (with retryAmbiguous: false: once)', async () => {
      const { result: error, ms } = await timed(() =>
        failure(
          clientOf(quiet.url, { timeout: TIMEOUT_MS, retryAmbiguous: false }).payouts.mpesa(PAYOUT),
        ),
      );
      expect(ms).toBeGreaterThanOrEqual(990);
      expect(error).toMatchObject({ code: 'TIMEOUT', attempts: 1, mayHaveExecuted: true });
      expect(await executions(quiet, 1)).toBe(1);
      figures.push(`silent: rejected after ${Math.round(ms)} ms, 1 attempt`);
    });

    it('lets app.close() resolve within timeout + 1 s while a call is stuck; the call rejects CLIENT_CLOSED', async () => {
      @Module({
        imports: [
          PaymentsModule.forRoot({
            apiUsername: USERNAME,
            apiPassword: PASSWORD,
            baseUrl: dripping.url,
            // Long enough that close() surely comes while the attempt is on the wire.
            timeout: 3 * TIMEOUT_MS,
          }),
        ],
      })
      class ShopModule {}
      const app = await NestFactory.create(ShopModule, { logger: false });
      await app.init();
      const call = app
        .get(PayoutsService)
        .mpesa(PAYOUT)
        .then(
          () => new Error('the call resolved'),
          (error: unknown) => error,
        );
      await waitFor(() => (dripping.executions > 0 ? true : undefined), 'the call to arrive');

      // The drip never ends: a close() that waited for the call would never resolve.
      const { ms } = await timed(() => app.close());
      const error = (await call) as ServiceAPIError;

      expect(error).toMatchObject({ code: 'CLIENT_CLOSED', mayHaveExecuted: true, attempts: 1 });
      expect(dripping.executions).toBe(1);
      figures.push(`app.close() with a stuck call: ${Math.round(ms)} ms`);
    });

    it('says mayHaveExecuted when closing cancels the retry of a 503', async () => {
      // The 503 asks for 10 minutes, which the client accepts to wait: a close() that did not
      // cancel the wait would never settle the call, and jest's timeout would fail the test.
      quiet.handle = answer({ success: false }, 503, 0, { 'Retry-After': '600' });
      // The debug lines tell when the client has the 503, so is waiting to retry: not a guess.
      const logger = new CapturingLogger();
      Logger.overrideLogger(logger);
      try {
        const client = clientOf(quiet.url, { debug: true, maxRetryAfterMs: 600_000 });
        const call = failure(client.payouts.mpesa(PAYOUT));
        await waitFor(
          () =>
            logger.lines.some((line) => line.message.includes('attempt 1/3] response HTTP 503'))
              ? true
              : undefined,
          'the client to receive the 503',
          20_000,
        );
        await client.close();
        const error = await call;

        expect(error).toMatchObject({ code: 'CLIENT_CLOSED', attempts: 1, mayHaveExecuted: true });
        expect(await executions(quiet, 1)).toBe(1);
      } finally {
        quiet.handle = silent;
        Logger.overrideLogger(new ConsoleLogger());
      }
    });
  });
});

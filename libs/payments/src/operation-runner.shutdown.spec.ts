import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { createServer } from 'node:http';
import type { ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { ConsoleLogger, Logger } from '@nestjs/common';
import type { TestingModule } from '@nestjs/testing';
import { Test } from '@nestjs/testing';
import { CapturingLogger } from '../spec-support/capture';
import { OPERATION_CASES, successBody } from '../spec-support/operation-cases';
import { RecordingServer } from '../spec-support/recording-server';
import { steady } from '../spec-support/steady';
import { waitFor } from '../spec-support/wait-for';
import { ServiceAPIError } from './errors';
import { PaymentsModule } from './payments.module';
import type { PaymentsModuleOptions } from './payments-options.interface';
import { PaymentsWire } from './payments-wire';
import { PayoutsService } from './payouts.service';

const PAYOUT = OPERATION_CASES[3].request;

describe('graceful shutdown', () => {
  let server: RecordingServer;
  let moduleRef: TestingModule;
  let payouts: PayoutsService;

  beforeAll(async () => {
    server = await RecordingServer.start();
  });
  const compile = async (options: Partial<PaymentsModuleOptions> = {}) => {
    moduleRef = await Test.createTestingModule({
      imports: [
        PaymentsModule.forRoot({
          apiUsername: 'u',
          apiPassword: 'p',
          baseUrl: server.url,
          maxRetries: 5,
          ...options,
        }),
      ],
    }).compile();
    payouts = moduleRef.get(PayoutsService);
  };
  beforeEach(async () => {
    server.reset();
    await compile();
  });
  afterAll(() => server.close());

  const settle = (promise: Promise<unknown>) =>
    promise.then(
      (value) => ({ value }),
      (error: unknown) => ({ error }),
    );

  it('rejects a call that waits for a retry when the app closes, and sends nothing more', async () => {
    // The third 503 asks for 10 minutes, which the client accepts to wait: a close() that did not
    // cancel the wait would never settle the call, and jest's timeout would fail the test.
    server.reply(
      { status: 503 },
      { status: 503 },
      { status: 503, headers: { 'Retry-After': '600' } },
    );
    // The debug lines tell when the client has the third 503, so is waiting: not a guess.
    const logger = new CapturingLogger();
    try {
      await moduleRef.close();
      await compile({ debug: true, maxRetryAfterMs: 600_000 });
      // After compile(): the testing module installs its own logger.
      Logger.overrideLogger(logger);
      const call = settle(payouts.mpesa(PAYOUT, { idempotencyKey: 'shutdown-1' }));
      await waitFor(
        () =>
          logger.lines.some((line) => line.message.includes('attempt 3/6] response HTTP 503'))
            ? true
            : undefined,
        'the third 503 to reach the client',
        20_000,
      );

      await moduleRef.close();
      const { error } = (await call) as { error: ServiceAPIError };

      expect(error).toBeInstanceOf(ServiceAPIError);
      expect(error).toMatchObject({
        code: 'CLIENT_CLOSED',
        attempts: 3,
        idempotencyKey: 'shutdown-1',
      });
      expect(await steady(() => server.requests.length, 'the requests')).toBe(3);
    } finally {
      Logger.overrideLogger(new ConsoleLogger());
    }
  });

  it('lets an attempt on the wire finish, and close() waits for it', async () => {
    server.reply({ status: 200, body: successBody('payout'), delayMs: 1_000 });
    let resolvedAt = 0;
    const call = payouts.mpesa(PAYOUT).then((response) => {
      resolvedAt = performance.now();
      return response;
    });
    await waitFor(() => (server.requests.length === 1 ? true : undefined), 'the attempt');

    await moduleRef.close();
    const closedAt = performance.now();

    expect((await call).transactionReference).toBe('9BD141203407eW');
    expect(resolvedAt).toBeGreaterThan(0);
    expect(resolvedAt).toBeLessThanOrEqual(closedAt);
  });

  it('does not retry an attempt that fails while closing', async () => {
    // A server of its own, which answers the 503 only once close() has begun: not a guess.
    let held: ServerResponse | undefined;
    let requests = 0;
    const holding = createServer((req, res) => {
      requests += 1;
      req.resume();
      held = res;
    });
    await new Promise<void>((resolve) => holding.listen(0, '127.0.0.1', resolve));
    try {
      await moduleRef.close();
      await compile({ baseUrl: `http://127.0.0.1:${(holding.address() as AddressInfo).port}` });
      const call = settle(payouts.mpesa(PAYOUT));
      const response = await waitFor(() => held, 'the attempt', 20_000);

      const closed = moduleRef.close();
      const wire = moduleRef.get(PaymentsWire, { strict: false });
      await waitFor(() => (wire.closing ? true : undefined), 'close() to begin', 20_000);
      response.writeHead(503, { 'content-type': 'application/json' }).end('{}');
      await closed;
      const { error } = (await call) as { error: ServiceAPIError };

      expect(error).toMatchObject({ status: 503, attempts: 1 });
      expect(await steady(() => requests, 'the requests')).toBe(1);
    } finally {
      holding.closeAllConnections();
      await new Promise((resolve) => holding.close(resolve));
    }
  });

  it('rejects calls made after close without sending them', async () => {
    await moduleRef.close();

    await expect(payouts.mpesa(PAYOUT)).rejects.toMatchObject({
      code: 'CLIENT_CLOSED',
      attempts: 0,
    });
    expect(server.requests).toHaveLength(0);
  });

  it('lets a script exit after client.close() although retries were pending', async () => {
    const script = join(__dirname, '..', '..', '..', 'test', 'support', 'close-client-script.ts');
    const child = spawn(
      process.execPath,
      ['-r', 'ts-node/register/transpile-only', '-r', 'tsconfig-paths/register', script],
      { cwd: join(__dirname, '..', '..', '..'), stdio: ['ignore', 'pipe', 'inherit'] },
    );
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    const exitCode = await new Promise<number | null>((resolve) => child.on('exit', resolve));

    expect(exitCode).toBe(0);
    expect(output.trim()).toBe('rejected CLIENT_CLOSED after 3 attempt(s); 3 request(s) sent');
  });
});

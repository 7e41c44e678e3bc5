import { spawn } from 'node:child_process';
import { join } from 'node:path';
import type { TestingModule } from '@nestjs/testing';
import { Test } from '@nestjs/testing';
import { OPERATION_CASES, successBody } from '../spec-support/operation-cases';
import { RecordingServer } from '../spec-support/recording-server';
import { waitFor } from '../spec-support/wait-for';
import { ServiceAPIError } from './errors';
import { PaymentsModule } from './payments.module';
import { PayoutsService } from './payouts.service';

const PAYOUT = OPERATION_CASES[3].request;

describe('graceful shutdown', () => {
  let server: RecordingServer;
  let moduleRef: TestingModule;
  let payouts: PayoutsService;

  beforeAll(async () => {
    server = await RecordingServer.start();
  });
  beforeEach(async () => {
    server.reset();
    moduleRef = await Test.createTestingModule({
      imports: [
        PaymentsModule.forRoot({
          apiUsername: 'u',
          apiPassword: 'p',
          baseUrl: server.url,
          maxRetries: 5,
        }),
      ],
    }).compile();
    payouts = moduleRef.get(PayoutsService);
  });
  afterAll(() => server.close());

  const settle = (promise: Promise<unknown>) =>
    promise.then(
      (value) => ({ value }),
      (error: unknown) => ({ error }),
    );

  it('rejects a call that waits for a retry when the app closes, and sends nothing more', async () => {
    server.fallback = () => ({ status: 503 });
    const call = settle(payouts.mpesa(PAYOUT, { idempotencyKey: 'shutdown-1' }));
    await waitFor(() => (server.requests.length === 3 ? true : undefined), 'three attempts');
    // Well inside the 800 ms wait before the fourth attempt, once the third 503 is back.
    await new Promise((resolve) => setTimeout(resolve, 100));

    await moduleRef.close();
    const { error } = (await call) as { error: ServiceAPIError };

    expect(error).toBeInstanceOf(ServiceAPIError);
    expect(error).toMatchObject({
      code: 'CLIENT_CLOSED',
      attempts: 3,
      idempotencyKey: 'shutdown-1',
    });
    await new Promise((resolve) => setTimeout(resolve, 1000));
    expect(server.requests).toHaveLength(3);
  });

  it('lets an attempt on the wire finish, and close() waits for it', async () => {
    server.reply({ status: 200, body: successBody('payout'), delayMs: 300 });
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
    server.fallback = () => ({ status: 503, delayMs: 200 });
    const call = settle(payouts.mpesa(PAYOUT));
    await waitFor(() => (server.requests.length === 1 ? true : undefined), 'the attempt');

    await moduleRef.close();
    const { error } = (await call) as { error: ServiceAPIError };

    expect(error).toMatchObject({ status: 503, attempts: 1 });
    expect(server.requests).toHaveLength(1);
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

import { parseRateLimit } from './rate-limit';
import { RateLimitService } from './rate-limit.service';
import type { RunningSandbox } from './sandbox';
import { SandboxConfig } from './sandbox.config';
import { SandboxControlError } from './sandbox-control';
import { examplePath, SandboxClient, startFastSandbox, wireBody } from '../test/sandbox-test-kit';

describe('the sandbox rate limit (unit)', () => {
  beforeEach(() => jest.useFakeTimers({ now: 1_000_000 }));
  afterEach(() => jest.useRealTimers());

  const limiter = (requestsPerSecond: number, retryAfterSeconds?: number) =>
    new RateLimitService(
      new SandboxConfig({ rateLimit: { requestsPerSecond, retryAfterSeconds } }, {}),
    );

  it('lets N requests through in any one second, turns the next away until the oldest leaves the window', () => {
    const limit = limiter(2);
    expect(limit.take()).toBeUndefined();
    jest.advanceTimersByTime(400);
    expect(limit.take()).toBeUndefined();
    jest.advanceTimersByTime(100);
    expect(limit.take()).toEqual({ retryAfterSeconds: 1 });

    jest.advanceTimersByTime(500);
    expect(limit.take()).toBeUndefined();
    expect(limit.take()).toEqual({ retryAfterSeconds: 1 });
  });

  it('counts only the requests let through, so a client that waits as asked gets in', () => {
    const limit = limiter(1);
    limit.take();
    for (let i = 0; i < 50; i += 1) expect(limit.take()).toBeDefined();
    jest.advanceTimersByTime(1000);
    expect(limit.take()).toBeUndefined();
  });

  it('answers the configured Retry-After', () => {
    const limit = limiter(1, 7);
    limit.take();
    expect(limit.take()).toEqual({ retryAfterSeconds: 7 });
  });

  it('has no limit unless one is set; clear lifts it, restore brings back the option', () => {
    const none = new RateLimitService(new SandboxConfig({}, {}));
    for (let i = 0; i < 1000; i += 1) expect(none.take()).toBeUndefined();

    const limit = limiter(1);
    limit.clear();
    expect([limit.take(), limit.take()]).toEqual([undefined, undefined]);
    limit.restore();
    expect(limit.snapshot()).toEqual({ requestsPerSecond: 1 });
    expect([limit.take(), limit.take()]).toEqual([undefined, { retryAfterSeconds: 1 }]);
  });

  it.each([
    [{}, /requestsPerSecond must be a whole number from 1/],
    [{ requestsPerSecond: 0 }, /requestsPerSecond must be a whole number from 1/],
    [{ requestsPerSecond: 2.5 }, /requestsPerSecond must be a whole number/],
    [{ requestsPerSecond: 5, retryAfterSeconds: -1 }, /retryAfterSeconds must be a whole number/],
    [[5], /must be a JSON object/],
  ])('refuses the limit %j', (input, message) => {
    expect(() => parseRateLimit(input)).toThrow(message);
    expect(() => new SandboxConfig({ rateLimit: input as never }, {})).toThrow(
      /Sandbox option rateLimit: /,
    );
  });
});

describe('the sandbox rate limit (over HTTP)', () => {
  let sandbox: RunningSandbox;
  let client: SandboxClient;
  const payout = () => client.post(examplePath('payouts.mpesa'), wireBody('payouts.mpesa'));

  beforeAll(async () => {
    sandbox = await startFastSandbox({
      webhookDelayMs: 60_000,
      rateLimit: { requestsPerSecond: 2, retryAfterSeconds: 3 },
    });
    client = new SandboxClient(sandbox);
  });
  afterAll(() => sandbox.close());
  beforeEach(() => sandbox.control.reset());

  it('answers 429 with Retry-After and the service error body above the limit, executing nothing', async () => {
    const answers = [await payout(), await payout(), await payout()];

    expect(answers.map((answer) => answer.status)).toEqual([200, 200, 429]);
    expect(answers[2].headers.get('retry-after')).toBe('3');
    expect(answers[2].json).toEqual({
      status: 429,
      success: false,
      message: 'Too many requests: rate limit exceeded',
    });
    expect(await sandbox.control.transactions()).toHaveLength(2);
    expect((await sandbox.control.requests()).map((request) => request.fault)).toEqual([
      undefined,
      undefined,
      'rate limit 429',
    ]);
  });

  it('limits the look-ups too, and never the control API', async () => {
    await sandbox.control.setRateLimit({ requestsPerSecond: 1 });
    const first = await client.lookup('/api/v1/accounts/sandbox/all_balances');
    const second = await client.lookup('/api/v1/accounts/sandbox/all_balances');

    expect([first.status, second.status]).toEqual([200, 429]);
    for (let i = 0; i < 5; i += 1) await sandbox.control.wallets();
  });

  it('is set, read and lifted at run time; a reset restores the start option', async () => {
    expect(await sandbox.control.rateLimit()).toEqual({
      requestsPerSecond: 2,
      retryAfterSeconds: 3,
    });
    expect(await sandbox.control.setRateLimit({ requestsPerSecond: 1 })).toEqual({
      requestsPerSecond: 1,
    });
    expect((await payout()).status).toBe(200);
    const limited = await payout();
    expect(limited.status).toBe(429);
    expect(limited.headers.get('retry-after')).toBe('1');

    await sandbox.control.clearRateLimit();
    expect(await sandbox.control.rateLimit()).toBeNull();
    expect([(await payout()).status, (await payout()).status]).toEqual([200, 200]);

    await sandbox.control.reset();
    expect(await sandbox.control.rateLimit()).toEqual({
      requestsPerSecond: 2,
      retryAfterSeconds: 3,
    });
  });

  it('refuses an invalid limit with 400 and keeps the one in force', async () => {
    const error: unknown = await sandbox.control
      .setRateLimit({ requestsPerSecond: 0 })
      .catch((e: unknown) => e);

    expect(error).toBeInstanceOf(SandboxControlError);
    expect(error).toMatchObject({
      status: 400,
      body: { success: false, message: expect.stringMatching(/requestsPerSecond/) },
    });
    expect(await sandbox.control.rateLimit()).toEqual({
      requestsPerSecond: 2,
      retryAfterSeconds: 3,
    });
  });
});

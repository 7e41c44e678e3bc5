import { ConsoleLogger, Logger } from '@nestjs/common';
import type { PaymentsClient } from '@malipo/nestjs';
import { AuthenticationError, createPaymentsClient, ServiceAPIError } from '@malipo/nestjs';
import type { RunningSandbox } from '../../apps/sandbox/src/sandbox';
import { startSandbox } from '../../apps/sandbox/src/sandbox';
import { CapturingLogger, everythingVisibleIn } from '../../libs/payments/spec-support/capture';
import { callOperation, OPERATION_CASES } from '../../libs/payments/spec-support/operation-cases';
import { RecordingServer } from '../../libs/payments/spec-support/recording-server';
import { steady } from '../../libs/payments/spec-support/steady';
import type { SandboxControl } from '../support/sandbox-control';
import { sandboxControl } from '../support/sandbox-control';

/**
 * Timeout of the client of the scenarios without a delay: far above any answer of the sandbox, so
 * that a busy machine never turns an attempt that must succeed or fail on its own into a timeout.
 */
const TIMEOUT_MS = 10_000;
/** Timeout of the client of the 'slower than timeout' scenarios. */
const SHORT_TIMEOUT_MS = 1_500;
/**
 * Far longer than SHORT_TIMEOUT_MS, so that the attempt times out however busy the machine is,
 * while the sandbox still holds it and executes (or replays) it later.
 */
const SLOW_MS = 5_000;

/** An exact number of attempts, or the range a busy machine may widen it to. */
type Attempts = number | readonly [min: number, max: number];

type Expected =
  | { outcome: 'resolve'; attempts: Attempts; executed: 0 | 1 }
  | {
      outcome: 'reject';
      attempts: Attempts;
      executed: 0 | 1;
      errorClass: typeof ServiceAPIError;
      status: number | undefined;
      code: string;
      mayHaveExecuted: boolean;
    };

interface Scenario {
  name: string;
  faults: Record<string, unknown>[];
  expected: Expected;
}

const reject = (
  attempts: number,
  status: number | undefined,
  extra: {
    code: string;
    mayHaveExecuted: boolean;
    errorClass?: typeof ServiceAPIError;
    executed?: 0 | 1;
  },
): Expected => ({
  outcome: 'reject',
  attempts,
  status,
  executed: extra.executed ?? 0,
  errorClass: extra.errorClass ?? ServiceAPIError,
  code: extra.code,
  mayHaveExecuted: extra.mayHaveExecuted,
});

const SCENARIOS: Scenario[] = [
  ...[500, 502, 503, 504].flatMap((status): Scenario[] => [
    {
      name: `${status} once`,
      faults: [{ count: 1, status }],
      expected: { outcome: 'resolve', attempts: 2, executed: 1 },
    },
    {
      name: `${status} twice`,
      faults: [{ count: 2, status }],
      expected: { outcome: 'resolve', attempts: 3, executed: 1 },
    },
    {
      name: `${status} always`,
      faults: [{ count: 3, status }],
      // A 5xx may come from a proxy after the service executed: ambiguous for the caller.
      expected: reject(3, status, { code: 'SERVICE_ERROR', mayHaveExecuted: true }),
    },
  ]),
  {
    name: 'reset once',
    faults: [{ count: 1, reset: true }],
    expected: { outcome: 'resolve', attempts: 2, executed: 1 },
  },
  {
    name: 'reset always',
    faults: [{ count: 3, reset: true }],
    expected: reject(3, undefined, { code: 'NETWORK_ERROR', mayHaveExecuted: true }),
  },
  // The slow attempt is executed late by the sandbox; the idempotency key keeps it to one
  // transaction. The second attempt answers at once, unless a busy machine holds it past the
  // short timeout too: then a third one is made, which the promise allows.
  {
    name: 'slower than timeout once',
    faults: [{ count: 1, delayMs: SLOW_MS }],
    expected: { outcome: 'resolve', attempts: [2, 3], executed: 1 },
  },
  {
    name: 'slower than timeout always',
    faults: [{ count: 3, delayMs: SLOW_MS }],
    expected: reject(3, undefined, { code: 'TIMEOUT', mayHaveExecuted: true, executed: 1 }),
  },
  {
    name: '401',
    faults: [{ count: 1, status: 401 }],
    expected: reject(1, 401, {
      code: 'AUTHENTICATION_FAILED',
      mayHaveExecuted: false,
      errorClass: AuthenticationError,
    }),
  },
  {
    name: '400',
    faults: [{ count: 1, status: 400 }],
    expected: reject(1, 400, { code: 'SERVICE_ERROR', mayHaveExecuted: false }),
  },
  {
    name: '429',
    faults: [{ count: 1, status: 429 }],
    expected: reject(1, 429, { code: 'SERVICE_ERROR', mayHaveExecuted: false }),
  },
  {
    name: '200 with an HTML body',
    faults: [{ count: 1, status: 200, body: '<html><body>Maintenance</body></html>' }],
    expected: reject(1, 200, { code: 'INVALID_RESPONSE', mayHaveExecuted: true }),
  },
  {
    name: '200 with an empty body',
    faults: [{ count: 1, status: 200, body: '' }],
    expected: reject(1, 200, { code: 'INVALID_RESPONSE', mayHaveExecuted: true }),
  },
];

interface LoggedRequest {
  idempotencyKey?: string;
  fault?: string;
  /** ISO arrival time (the sandbox runs in this process: one clock). */
  at: string;
}
interface LedgerEntry {
  idempotencyKey?: string;
}

/**
 * One sandbox and client per operation: the operations run side by side (`it.concurrent`), while
 * the scenarios of one operation run in turn on its own sandbox, which each one resets. Most of
 * the matrix is waiting on the real retry backoff, so this divides its time by the operations.
 */
interface Lane {
  sandbox: RunningSandbox;
  control: SandboxControl;
  /** For the scenarios without a delay: every attempt has TIMEOUT_MS. */
  client: PaymentsClient;
  /** For the 'slower than timeout' scenarios: SHORT_TIMEOUT_MS. */
  shortClient: PaymentsClient;
  /** The end of the last scenario queued on this lane. */
  queue: Promise<void>;
}

const lanes = new Map<string, Lane>();
let webhooks: RecordingServer;
const logger = new CapturingLogger();
const errors: unknown[] = [];

// At the top level: jest starts concurrent tests once the root hooks have run.
beforeAll(async () => {
  Logger.overrideLogger(logger);
  webhooks = await RecordingServer.start();
  await Promise.all(
    OPERATION_CASES.map(async ({ operation }) => {
      const sandbox = await startSandbox({
        port: 0,
        logger: false,
        webhookDelayMs: 50,
        webhookRetryDelaysMs: [20],
      });
      const clientWith = (timeout: number) =>
        createPaymentsClient({
          ...sandbox.credentials,
          baseUrl: sandbox.url,
          timeout,
          debug: true,
          defaultCallbackUrl: `${webhooks.url}/hooks`,
        });
      lanes.set(operation, {
        sandbox,
        control: sandboxControl(sandbox),
        client: clientWith(TIMEOUT_MS),
        shortClient: clientWith(SHORT_TIMEOUT_MS),
        queue: Promise.resolve(),
      });
    }),
  );
  Logger.overrideLogger(logger);
});
afterAll(async () => {
  await Promise.all(
    [...lanes.values()].flatMap((lane) => [lane.client.close(), lane.shortClient.close()]),
  );
  await Promise.all([...lanes.values()].map((lane) => lane.sandbox.close()));
  await webhooks.close();
  Logger.overrideLogger(new ConsoleLogger());
});

/** Runs `scenario` once the lane's previous scenario has ended. */
function inTurn(lane: Lane, scenario: () => Promise<void>): Promise<void> {
  const run = lane.queue.then(scenario);
  lane.queue = run.catch(() => undefined);
  return run;
}

const range = (attempts: Attempts): readonly [number, number] =>
  typeof attempts === 'number' ? [attempts, attempts] : attempts;

function expectAttempts(actual: number, attempts: Attempts): void {
  if (typeof attempts === 'number') {
    expect(actual).toBe(attempts);
    return;
  }
  expect(actual).toBeGreaterThanOrEqual(attempts[0]);
  expect(actual).toBeLessThanOrEqual(attempts[1]);
}

async function runScenario(
  { control, client, shortClient }: Lane,
  testCase: (typeof OPERATION_CASES)[number],
  scenario: Scenario,
): Promise<void> {
  await control('reset', 'POST');
  for (const fault of scenario.faults) await control('faults', 'POST', { ...fault });
  const request = { ...testCase.request, callbackUrl: '' };
  const slow = scenario.faults.some((f) => f.delayMs);

  const outcome = await callOperation(slow ? shortClient : client, testCase, request).then(
    (response) => ({ response }),
    (error: unknown) => ({ error }),
  );

  // Then what reached the sandbox (it runs in this process, but may lag on a busy machine): the
  // expected attempts and executions at least, and nothing more for a while.
  const [minAttempts] = range(scenario.expected.attempts);
  const readLogs = async () => ({
    requests: await control<LoggedRequest[]>('requests'),
    ledger: await control<LedgerEntry[]>('transactions'),
  });
  const settled = () =>
    steady(readLogs, 'the request log and the ledger', {
      done: (logs) =>
        logs.requests.length >= minAttempts && logs.ledger.length >= scenario.expected.executed,
    });
  let logs = await settled();
  if (slow) {
    // A delayed attempt is executed (or replayed) by the sandbox SLOW_MS after it arrived: wait
    // until the last one is done before counting executions. A wait from the sandbox's own
    // timestamps, so only a lower bound: it holds on a busy machine too.
    const lastDelayed = Math.max(
      ...logs.requests.filter((r) => r.fault?.startsWith('delay')).map((r) => Date.parse(r.at)),
    );
    await new Promise((resolve) =>
      setTimeout(resolve, Math.max(0, lastDelayed + SLOW_MS + 250 - Date.now())),
    );
    logs = await settled();
  }
  const { requests, ledger } = logs;

  const keys = new Set(requests.map((r) => r.idempotencyKey));
  expectAttempts(requests.length, scenario.expected.attempts);
  expect(keys.size).toBe(1);
  expect(ledger.length).toBe(scenario.expected.executed);
  expect(ledger.every((entry) => keys.has(entry.idempotencyKey))).toBe(true);

  if (scenario.expected.outcome === 'resolve') {
    expect('response' in outcome).toBe(true);
    const { response } = outcome as { response: { transactionReference: string } };
    expect(response.transactionReference).toMatch(/^9BD\d{9}e[RW]$/);
    return;
  }
  const { error } = outcome as { error: unknown };
  errors.push(error);
  expect(error).toBeInstanceOf(scenario.expected.errorClass);
  const apiError = error as ServiceAPIError;
  expect(apiError.status).toBe(scenario.expected.status);
  expectAttempts(apiError.attempts, scenario.expected.attempts);
  expect(apiError.attempts).toBe(requests.length);
  expect(keys.has(apiError.idempotencyKey)).toBe(true);
  expect(apiError.code).toBe(scenario.expected.code);
  expect(apiError.mayHaveExecuted).toBe(scenario.expected.mayHaveExecuted);
}

describe('fault matrix: every operation under every fault', () => {
  // Scenario by scenario, every operation: so the first tests jest starts are of different lanes.
  describe.each(SCENARIOS.map((s) => [s.name, s] as const))('%s', (_name, scenario) => {
    it.concurrent.each(OPERATION_CASES.map((c) => [c.operation, c] as const))(
      '%s',
      (operation, testCase) =>
        inTurn(lanes.get(operation)!, () => runScenario(lanes.get(operation)!, testCase, scenario)),
      // A bound for a broken run only: the delayed scenarios take about 11 s on a quiet machine.
      60_000,
    );
  });

  it('leaked no password or Basic token in any log line or error of the matrix', () => {
    const { apiUsername, apiPassword } = [...lanes.values()][0].sandbox.credentials;
    const token = Buffer.from(`${apiUsername}:${apiPassword}`).toString('base64');
    const logged = logger.lines.map((l) => l.message).join('\n');
    const thrown = errors.map(everythingVisibleIn).join('\n');

    expect(errors.length).toBeGreaterThanOrEqual(OPERATION_CASES.length * 9);
    expect(logged).toContain('attempt 3/3');
    for (const secret of [apiPassword, token]) {
      expect(logged).not.toContain(secret);
      expect(thrown).not.toContain(secret);
    }
    expect(logged).not.toMatch(/authorization/i);
    expect(thrown).not.toMatch(/authorization/i);
  });
});

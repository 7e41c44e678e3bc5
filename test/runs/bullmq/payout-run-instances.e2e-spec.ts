import { type ChildProcess, spawn } from 'node:child_process';
import { createServer, request as httpRequest } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { PaymentsReconciler } from '@malipo/nestjs';
import { RedisPaymentsJournal } from '@malipo/nestjs/redis';
import { RedisPayoutRunStore } from '@malipo/nestjs/runs/bullmq';
import type { PayoutRun, PayoutRunReport } from '@malipo/nestjs/runs';
import { RedisServer } from '../../../libs/payments/spec-support/redis-server';
import { waitFor } from '../../../libs/payments/spec-support/wait-for';
import { completedRun } from '../payout-runs-harness';
import type { RunningSandbox } from '../../../apps/sandbox/src/sandbox';
import { startSandbox } from '../../../apps/sandbox/src/sandbox';
import type { CreateRunBody } from './payout-run-instance';
import { startRunsInstance } from './payout-run-instance';
import { expectLedgerAgrees } from './runs-kit';

const ROOT = join(__dirname, '..', '..', '..');

/** An instance of the app in a child process, its stdout lines parsed. */
interface Child {
  process: ChildProcess;
  lines: Record<string, string>[];
  url: string;
}

/**
 * An HTTP relay to the sandbox for one instance, counting that instance's payouts the sandbox has
 * not answered yet. A request whose instance dies is still relayed and answered to nobody, as the
 * service would.
 */
interface Relay {
  url: string;
  inFlight(): number;
  close(): Promise<void>;
}

async function startRelay(target: string): Promise<Relay> {
  let pending = 0;
  const server = createServer((incoming, outgoing) => {
    const chunks: Buffer[] = [];
    incoming.on('data', (chunk: Buffer) => chunks.push(chunk));
    incoming.on('end', () => {
      const payout = incoming.method === 'POST' && incoming.url === '/api/v2/withdrawal';
      const ended = () => {
        if (payout) pending -= 1;
      };
      if (payout) pending += 1;
      const upstream = httpRequest(
        new URL(incoming.url ?? '/', target),
        { method: incoming.method, headers: incoming.headers },
        (answer) => {
          const body: Buffer[] = [];
          answer.on('data', (chunk: Buffer) => body.push(chunk));
          answer.on('end', () => {
            ended();
            if (outgoing.destroyed) return;
            outgoing.writeHead(answer.statusCode ?? 502, answer.headers);
            outgoing.end(Buffer.concat(body));
          });
        },
      );
      upstream.on('error', () => {
        ended();
        outgoing.destroy();
      });
      upstream.end(Buffer.concat(chunks));
    });
    // The instance's socket may die with it; the relayed request goes on regardless.
    outgoing.on('error', () => undefined);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    inFlight: () => pending,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

async function spawnInstance(
  redisUrl: string,
  sandbox: RunningSandbox,
  sandboxUrl = sandbox.url,
): Promise<Child> {
  const child = spawn(
    process.execPath,
    [
      '-r',
      'ts-node/register/transpile-only',
      '-r',
      'tsconfig-paths/register',
      join(__dirname, 'payout-run-instance.ts'),
    ],
    {
      cwd: ROOT,
      env: {
        ...process.env,
        REDIS_URL: redisUrl,
        SANDBOX_URL: sandboxUrl,
        API_USERNAME: sandbox.credentials.apiUsername,
        API_PASSWORD: sandbox.credentials.apiPassword,
      },
      stdio: ['ignore', 'pipe', 'inherit'],
    },
  );
  const lines: Record<string, string>[] = [];
  createInterface({ input: child.stdout }).on('line', (line) => {
    if (line.startsWith('{')) lines.push(JSON.parse(line) as Record<string, string>);
  });
  const { url } = await waitFor(
    () => lines.find((line) => line.step === 'listening'),
    'a child instance to listen',
    60_000,
  );
  return { process: child, lines, url };
}

async function call<T>(url: string, method = 'GET', body?: unknown): Promise<T> {
  const response = await fetch(url, {
    method,
    headers: { 'content-type': 'application/json' },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await response.text();
  if (!response.ok) throw new Error(`${method} ${url} answered ${response.status}: ${text}`);
  return (text ? JSON.parse(text) : undefined) as T;
}

function exited(child: ChildProcess): Promise<unknown> {
  // A process killed by a signal has no exit code, only its signal.
  return child.exitCode !== null || child.signalCode !== null
    ? Promise.resolve(child.exitCode ?? child.signalCode)
    : new Promise((resolve) => child.once('exit', resolve));
}

const settledLines = (child: Child) => child.lines.filter((line) => line.step === 'settled');

/** Payouts held this long by the sandbox at first: a worker then always has some in flight. */
const SLOW_SEND_MS = 300;

// Child processes start in ~5 s each on a quiet machine; the runs take under a minute each.
jest.setTimeout(300_000);

describe('payout runs on BullMQ across instances (e2e, child processes, redis-server, sandbox)', () => {
  let redis: RedisServer;
  let sandbox: RunningSandbox;
  const children: Child[] = [];
  const relays: Relay[] = [];

  beforeEach(async () => {
    redis = await RedisServer.start();
    sandbox = await startSandbox({
      port: 0,
      logger: false,
      webhookDelayMs: 20,
      webhookRetryDelaysMs: [50, 200, 500, 1000, 2000],
    });
  });
  afterEach(async () => {
    for (const child of children.splice(0)) {
      if (child.process.exitCode === null && child.process.signalCode === null) {
        child.process.kill('SIGKILL');
      }
      await exited(child.process);
    }
    for (const relay of relays.splice(0)) await relay.close();
    await sandbox?.close();
    await redis?.close();
  });

  it('an instance SIGKILLed mid-run: the other carries on, nothing is paid twice', async () => {
    const victimRelay = await startRelay(sandbox.url);
    relays.push(victimRelay);
    const [survivor, victim] = await Promise.all([
      spawnInstance(redis.url, sandbox),
      spawnInstance(redis.url, sandbox, victimRelay.url),
    ]);
    children.push(survivor, victim);
    await sandbox.control.injectFault({
      delayMs: SLOW_SEND_MS,
      count: 400,
      path: '/api/v2/withdrawal',
    });
    await sandbox.control.randomFaults({ rate: 0.1, seed: 29 });

    const body: CreateRunBody = {
      count: 1000,
      concurrency: 16,
      ratePerSecond: 200,
      // The survivor's webhook route: the sandbox's webhooks settle the shared journal there.
      callbackUrl: `${survivor.url}/webhooks/payments`,
    };
    const created = await call<PayoutRun>(`${survivor.url}/runs`, 'POST', body);
    // Created on one instance, readable on the other.
    const seen = await call<PayoutRun>(`${victim.url}/runs/${created.runId}`);
    expect(seen.runId).toBe(created.runId);
    expect(seen.counts.queued + seen.counts.sending + seen.counts.accepted).toBeGreaterThan(0);

    await waitFor(
      () => (settledLines(victim).length >= 20 ? true : undefined),
      'the victim to have sent some items',
      120_000,
    );
    // Killed while the sandbox holds one of its payouts at least, however busy the machine.
    await sandbox.control.injectFault({ delayMs: 2_000, count: 200, path: '/api/v2/withdrawal' });
    await waitFor(
      () => (victimRelay.inFlight() > 0 ? true : undefined),
      'a payout of the victim held by the sandbox',
      120_000,
    );
    victim.process.kill('SIGKILL');
    await exited(victim.process);
    const settledByVictim = settledLines(victim).length;

    const sent = await waitFor(
      async () => {
        const run = await call<PayoutRun>(`${survivor.url}/runs/${created.runId}`);
        return run.counts.queued + run.counts.sending === 0 ? run : undefined;
      },
      'every item sent or taken over by the survivor',
      180_000,
    );
    await sandbox.control.clearFaults();
    await call(`${survivor.url}/runs/reconcile`, 'POST');
    const run = await waitFor(
      async () => {
        const current = await call<PayoutRun>(`${survivor.url}/runs/${created.runId}`);
        return current.state === 'completed' ? current : undefined;
      },
      'the run to complete',
      60_000,
    );
    const report = await call<PayoutRunReport>(`${survivor.url}/runs/${created.runId}/report`);
    expect(report.items).toHaveLength(1000);
    await expectLedgerAgrees(sandbox, report);
    // The victim's sends in flight at the kill (the sandbox held them) are the journal's
    // calls that never ended: nobody lived to record their end. Each item stays in doubt, or takes
    // the outcome its webhook brought to the journal; none was sent again (the ledger, above).
    const journal = new RedisPaymentsJournal({ url: redis.url });
    const cutShort = (await journal.list().finally(() => journal.close()))
      .filter((entry) => entry.calls.some((send) => send.endedAt === undefined))
      .map((entry) => entry.idempotencyKey);
    expect(cutShort.length).toBeGreaterThan(0);
    for (const key of cutShort) {
      const item = report.items.find((line) => line.idempotencyKey === key);
      expect(['in_doubt', 'succeeded', 'failed']).toContain(item?.state);
    }
    const takenOver = settledLines(survivor).filter((line) =>
      line.reason?.includes('its worker stopped'),
    );
    for (const line of takenOver) expect(line.state).toBe('in_doubt');
    const stillInDoubt = report.items.filter((item) => item.reason?.includes('its worker stopped'));
    // Both instances sent: the survivor carried on after the kill.
    expect(settledByVictim).toBeGreaterThanOrEqual(20);
    expect(settledLines(survivor).length).toBeGreaterThan(0);
    expect(run.counts.succeeded).toBeGreaterThan(700);
    console.log(
      `SIGKILL mid-run: victim settled ${settledByVictim} item(s), survivor ` +
        `${settledLines(survivor).length}; when sending was over: ${JSON.stringify(sent.counts)}; ` +
        `at the end: ${JSON.stringify(run.counts)}; ${cutShort.length} send(s) cut short by the kill, ` +
        `${takenOver.length} item(s) taken over in doubt, ${stillInDoubt.length} still in doubt`,
    );
  });

  it('survives a redeploy: both instances stopped mid-run, a new one finishes it', async () => {
    const [first, second] = await Promise.all([
      spawnInstance(redis.url, sandbox),
      spawnInstance(redis.url, sandbox),
    ]);
    children.push(first, second);
    await sandbox.control.injectFault({
      delayMs: SLOW_SEND_MS,
      count: 1000,
      path: '/api/v2/withdrawal',
    });
    const created = await call<PayoutRun>(`${first.url}/runs`, 'POST', {
      count: 300,
      concurrency: 8,
      ratePerSecond: 20,
      callbackUrl: `${first.url}/webhooks/payments`,
    } satisfies CreateRunBody);
    await waitFor(
      () => (settledLines(first).length + settledLines(second).length >= 30 ? true : undefined),
      'some items sent',
      120_000,
    );
    // A graceful stop: in-flight sends end and are recorded before each process exits.
    for (const child of [first, second]) child.process.kill('SIGTERM');
    await Promise.all([exited(first.process), exited(second.process)]);
    expect(first.lines.some((line) => line.step === 'closed')).toBe(true);
    expect(second.lines.some((line) => line.step === 'closed')).toBe(true);

    // What the stop left, read from Redis before any instance runs again.
    const store = new RedisPayoutRunStore({ url: redis.url });
    const midway = await store.summary(created.runId).finally(() => store.close());
    expect(midway.counts.queued).toBeGreaterThan(0);
    expect(midway.counts.sending).toBe(0);

    await sandbox.control.clearFaults();
    const replacement = await startRunsInstance({
      redisUrl: redis.url,
      sandboxUrl: sandbox.url,
      ...sandbox.credentials,
    });
    try {
      await waitFor(
        async () => {
          const run = await replacement.runs.get(created.runId);
          return run.counts.queued + run.counts.sending === 0 ? run : undefined;
        },
        'the new instance to send the rest',
        120_000,
      );
      // The webhooks of items accepted before the stop went to the old instances' route: the
      // reconciler's look-ups settle them.
      await replacement.app.get(PaymentsReconciler).reconcile();
      const run = await completedRun(
        replacement.runs,
        created.runId,
        'the run to complete',
        60_000,
      );
      const report = await replacement.runs.report(created.runId, 'json');
      await expectLedgerAgrees(sandbox, report);
      expect(report.items.filter((item) => item.reason?.includes('its worker stopped'))).toEqual(
        [],
      );
      expect(run.counts.succeeded + run.counts.failed).toBe(300);
      console.log(
        `redeploy: ${midway.counts.queued} item(s) queued at the stop, finished by the new instance: ${JSON.stringify(run.counts)}`,
      );
    } finally {
      await replacement.close();
    }
  });
});

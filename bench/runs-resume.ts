// Time to resume a payout run after a worker restart, with the BullMQ engine on a real
// redis-server. Workers are test/runs/bullmq/payout-run-instance.ts in child processes (the app
// of the several-instances tests: PaymentsModule with RedisPaymentsJournal, the webhook route,
// RedisPayoutRunStore, the BullMQ engine with lockDurationMs 4000 and stalledIntervalMs 1000,
// settlementPollMs 200). One run is created on the first worker; then, again and again, the worker
// is stopped (SIGTERM, graceful, or SIGKILL, alternately) while it sends, and a new one started:
// the time from the new process's start and from its 'listening' line to the first payout the
// sandbox lets through after the old one exited.
import { type ChildProcess, spawn } from 'node:child_process';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { RedisServer } from '../libs/payments/spec-support/redis-server';
import { exited, startRunsSandbox, type RunsSandbox } from './runs-process';

const ROOT = join(__dirname, '..');
const INSTANCE = join(ROOT, 'test', 'runs', 'bullmq', 'payout-run-instance.ts');
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export interface ResumeSample {
  stop: 'SIGTERM' | 'SIGKILL';
  /** From the stop signal to the old process's exit. */
  stopToExitMs: number;
  /** From spawn() of the new process to its 'listening' line (Nest app ready). */
  startToListeningMs: number;
  /** From spawn() to the first payout let through. */
  startToFirstSendMs: number;
  /** From 'listening' to the first payout (negative: the worker sent before it listened). */
  listeningToFirstSendMs: number;
  /** From the old process's exit to the first payout: the gap the run saw. */
  gapMs: number;
}

export interface ResumeResult {
  ratePerSecond: number;
  concurrency: number;
  items: number;
  samples: ResumeSample[];
  /** Payouts let through, and the ledger's transactions, at the end (no item executed twice). */
  payoutsAdmitted: number;
  ledger: number;
}

interface Worker {
  process: ChildProcess;
  spawnedAt: number;
  listeningAt: number;
  url: string;
}

async function startWorker(redisUrl: string, sandbox: RunsSandbox): Promise<Worker> {
  const spawnedAt = Date.now();
  const child = spawn(
    process.execPath,
    ['-r', 'ts-node/register/transpile-only', '-r', 'tsconfig-paths/register', INSTANCE],
    {
      cwd: ROOT,
      env: {
        ...process.env,
        REDIS_URL: redisUrl,
        SANDBOX_URL: sandbox.url,
        API_USERNAME: sandbox.credentials.apiUsername,
        API_PASSWORD: sandbox.credentials.apiPassword,
      },
      stdio: ['ignore', 'pipe', 'inherit'],
    },
  );
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('a worker did not listen in 120 s')), 120_000);
    child.once('exit', (code) => reject(new Error(`a worker exited (code ${code}) at start`)));
    createInterface({ input: child.stdout }).on('line', (line) => {
      if (!line.startsWith('{')) return;
      const parsed = JSON.parse(line) as { step?: string; url?: string };
      if (parsed.step === 'listening') {
        clearTimeout(timer);
        resolve({ process: child, spawnedAt, listeningAt: Date.now(), url: String(parsed.url) });
      }
    });
  });
}

async function waitForPayoutSince(sandbox: RunsSandbox, since: number): Promise<number> {
  const deadline = Date.now() + 120_000;
  for (;;) {
    const at = await sandbox.firstPayoutSince(since);
    if (at !== undefined) return at;
    if (Date.now() > deadline) throw new Error('no payout within 120 s of a restart');
    await sleep(100);
  }
}

export async function measureResume(options: {
  restarts: number;
  ratePerSecond: number;
  concurrency: number;
  items: number;
  /** How long each worker sends before it is stopped. */
  sendForMs: number;
}): Promise<ResumeResult> {
  const redis = await RedisServer.start();
  // No rate limit here, and webhooks to the sink: only the restart is timed.
  const sandbox = await startRunsSandbox({ webhookDelayMs: 200 });
  let worker: Worker | undefined;
  try {
    worker = await startWorker(redis.url, sandbox);
    const response = await fetch(`${worker.url}/runs`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        count: options.items,
        concurrency: options.concurrency,
        ratePerSecond: options.ratePerSecond,
        callbackUrl: sandbox.sinkUrl,
      }),
    });
    if (!response.ok) throw new Error(`POST /runs answered ${response.status}`);
    await waitForPayoutSince(sandbox, worker.listeningAt);

    const samples: ResumeSample[] = [];
    for (let i = 0; i < options.restarts; i += 1) {
      await sleep(options.sendForMs);
      const stop = i % 2 === 0 ? 'SIGTERM' : 'SIGKILL';
      const stoppedAt = Date.now();
      worker.process.kill(stop);
      await exited(worker.process);
      const exitedAt = Date.now();
      worker = await startWorker(redis.url, sandbox);
      const firstSendAt = await waitForPayoutSince(sandbox, exitedAt);
      const sample: ResumeSample = {
        stop,
        stopToExitMs: exitedAt - stoppedAt,
        startToListeningMs: worker.listeningAt - worker.spawnedAt,
        startToFirstSendMs: firstSendAt - worker.spawnedAt,
        listeningToFirstSendMs: firstSendAt - worker.listeningAt,
        gapMs: firstSendAt - exitedAt,
      };
      samples.push(sample);
      console.log(
        `  restart ${i + 1}/${options.restarts} (${stop}): start→listening ` +
          `${sample.startToListeningMs} ms, listening→first send ${sample.listeningToFirstSendMs} ms, ` +
          `start→first send ${sample.startToFirstSendMs} ms`,
      );
    }
    worker.process.kill('SIGKILL');
    await exited(worker.process);
    const stats = await sandbox.stats();
    return {
      ratePerSecond: options.ratePerSecond,
      concurrency: options.concurrency,
      items: options.items,
      samples,
      payoutsAdmitted: stats.payoutsAdmitted,
      ledger: stats.ledger,
    };
  } finally {
    if (worker && worker.process.exitCode === null && worker.process.signalCode === null) {
      worker.process.kill('SIGKILL');
      await exited(worker.process);
    }
    await sandbox.stop();
    await redis.close();
  }
}

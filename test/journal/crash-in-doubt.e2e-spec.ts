import { type ChildProcess, spawn } from 'node:child_process';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { startSandbox } from '../../apps/sandbox/src/sandbox';
import type { RunningSandbox } from '../../apps/sandbox/src/sandbox';
import { RedisServer } from '../../libs/payments/spec-support/redis-server';
import { waitFor } from '../../libs/payments/spec-support/wait-for';
import {
  executionsOf,
  journalRejection,
  type JournalApp,
  postsOf,
  startJournalApp,
} from './journal-kit';
import { childPayout } from './payout-child';

const ROOT = join(__dirname, '..', '..');
const KEY = 'crash-payout-1';
/**
 * The child's per-attempt timeout, with no retry: its send budget, and so its entry's deadline, is
 * this plus the library's margin (operation-runner.ts, `sendBudgetMs`). Long enough that the test
 * kills the child before it times out, even on a busy machine.
 */
const CHILD_TIMEOUT_MS = 5000;
/**
 * The sandbox holds the payout this long before executing it: longer than the child's timeout, so
 * the child never gets an answer, whenever it is killed.
 */
const SANDBOX_DELAY_MS = CHILD_TIMEOUT_MS + 1000;

/** The child: its stdout lines, parsed. */
function spawnPayoutChild(env: Record<string, string>): {
  child: ChildProcess;
  lines: Record<string, unknown>[];
} {
  const child = spawn(
    process.execPath,
    [
      '-r',
      'ts-node/register/transpile-only',
      '-r',
      'tsconfig-paths/register',
      join(__dirname, 'payout-child.ts'),
    ],
    { cwd: ROOT, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'inherit'] },
  );
  const lines: Record<string, unknown>[] = [];
  createInterface({ input: child.stdout }).on('line', (line) => {
    if (line.startsWith('{')) lines.push(JSON.parse(line) as Record<string, unknown>);
  });
  return { child, lines };
}

describe('the payments journal on Redis: a process killed after its payout reached the service', () => {
  let redis: RedisServer;
  let sandbox: RunningSandbox;
  /** The instance that takes over: same Redis journal, and the webhook route of the payout. */
  let instance: JournalApp;
  let crashing: ChildProcess | undefined;
  /** The sandbox's webhooks are answered 401 (and re-delivered) until the test lets them in. */
  let webhooksOpen = false;

  beforeAll(async () => {
    redis = await RedisServer.start();
    sandbox = await startSandbox({
      port: 0,
      logger: false,
      webhookDelayMs: 50,
      // Re-delivered for as long as the test may hold them back (a bound for a broken run).
      webhookRetryDelaysMs: Array.from({ length: 240 }, () => 250),
    });
    instance = await startJournalApp({
      sandbox,
      redisUrl: redis.url,
      verify: () => webhooksOpen,
    });
  });
  afterAll(async () => {
    if (crashing?.exitCode === null) crashing.kill('SIGKILL');
    await instance?.close();
    await sandbox?.close();
    await redis?.close();
  });

  it('is in doubt for another instance, which sends nothing; its webhook settles it; the retry is answered from the journal', async () => {
    const payout = childPayout(instance.webhookUrl);
    const payAgain = () => instance.client.payouts.mpesa(payout, { idempotencyKey: KEY });
    await sandbox.control.injectFault({ delayMs: SANDBOX_DELAY_MS, path: '/api/v2/withdrawal' });

    const { child, lines } = spawnPayoutChild({
      SANDBOX_URL: sandbox.url,
      API_USERNAME: sandbox.credentials.apiUsername,
      API_PASSWORD: sandbox.credentials.apiPassword,
      REDIS_URL: redis.url,
      IDEMPOTENCY_KEY: KEY,
      CALLBACK_URL: instance.webhookUrl,
      TIMEOUT_MS: String(CHILD_TIMEOUT_MS),
    });
    crashing = child;
    const exited = new Promise((resolve) => child.once('exit', resolve));
    await waitFor(
      async () => ((await postsOf(sandbox, KEY)).length > 0 ? true : undefined),
      "the child's payout to reach the sandbox",
      60_000,
    );
    child.kill('SIGKILL');
    await exited;

    // The child got no answer and wrote no end: its entry is left `started`, with no reference.
    expect(lines.map((line) => line.step)).toEqual(['sending']);
    const left = await instance.journal.get(KEY);
    expect(left).toMatchObject({ state: 'started', operation: 'payouts.mpesa', amount: 250 });
    expect(left!.reference).toBeUndefined();
    expect(left!.calls).toHaveLength(1);
    expect(left!.calls[0].outcome).toBeUndefined();

    // Until its deadline the call may still be on its way: the key is busy (or, on a machine slow
    // enough to reach the deadline already, in doubt). Nothing is sent either way.
    const early = await journalRejection(payAgain());
    expect(['IN_PROGRESS', 'IN_DOUBT']).toContain(early.code);
    expect(early.mayHaveExecuted).toBe(true);

    // The sandbox executes the payout once its delay ends, with nobody left to answer.
    const [execution] = await waitFor(
      async () => {
        const found = await executionsOf(sandbox, KEY);
        return found.length > 0 ? found : undefined;
      },
      'the sandbox to execute the payout',
      60_000,
    );

    // Past the deadline the entry is in doubt: the new instance sends nothing and says why.
    await waitFor(
      async () => ((await instance.reconciler.get(KEY))?.state === 'in_doubt' ? true : undefined),
      "the entry's deadline to pass",
      60_000,
    );
    const inDoubt = await journalRejection(payAgain());
    expect(inDoubt).toMatchObject({
      code: 'IN_DOUBT',
      operation: 'payouts.mpesa',
      idempotencyKey: KEY,
      mayHaveExecuted: true,
      attempts: 0,
      entry: { idempotencyKey: KEY, state: 'in_doubt', reason: expect.any(String) as string },
    });
    // A reconcile pass cannot settle it: no reference, and the service has no look-up by key.
    const summary = await instance.reconciler.reconcile();
    expect(summary.inDoubt).toEqual([
      expect.objectContaining({ idempotencyKey: KEY, reason: expect.any(String) as string }),
    ]);
    expect(await postsOf(sandbox, KEY)).toHaveLength(1);

    // The payout's webhook (matched by its malipo_key) settles the entry.
    webhooksOpen = true;
    const settled = await waitFor(
      async () => {
        const entry = await instance.reconciler.get(KEY);
        return entry?.state === 'succeeded' ? entry : undefined;
      },
      'the webhook to settle the entry',
      60_000,
    );
    expect(settled).toMatchObject({ reference: execution.reference, settledBy: 'webhook' });

    // The retry is answered from the journal: nothing sent, one execution in the ledger.
    await expect(payAgain()).resolves.toMatchObject({
      replayed: true,
      success: true,
      transactionReference: execution.reference,
    });
    expect(await postsOf(sandbox, KEY)).toHaveLength(1);
    expect((await executionsOf(sandbox, KEY)).map((t) => t.reference)).toEqual([
      execution.reference,
    ]);
  }, 180_000);
});

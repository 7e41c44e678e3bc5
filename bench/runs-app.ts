// The app of `bench/runs.ts`, in a process of its own (started with --expose-gc): PaymentsModule
// with an in-memory payments journal, PaymentsWebhookModule (the route the sandbox posts to), and
// PayoutRunsModule with the embedded engine and the in-memory store (the defaults). It receives one
// 'run' message, makes the run against the sandbox, and answers what it cost this process.
import { Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { InMemoryPaymentsJournal, PaymentsModule } from '@malipo/nestjs';
import { PaymentsWebhookModule } from '@malipo/nestjs/webhooks';
import { PayoutRunsModule, PayoutRunsService } from '@malipo/nestjs/runs';
import type { PayoutRun, PayoutRunItemInput } from '@malipo/nestjs/runs';
import type { RunsAppConfig, RunsAppResult } from './runs-protocol';

const MB = 2 ** 20;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** heapUsed in MB after two forced collections. */
function heapAfterGc(): number {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (!gc) throw new Error('run with --expose-gc');
  gc();
  gc();
  return process.memoryUsage().heapUsed / MB;
}

const cpuMicros = () => {
  const { user, system } = process.cpuUsage();
  return user + system;
};

/** `count` M-Pesa payouts of 100 + i KES to distinct numbers; every tenth number fails. */
function mpesaItems(count: number, callbackUrl: string): PayoutRunItemInput[] {
  return Array.from({ length: count }, (_, i) => ({
    itemId: `emp-${i}`,
    operation: 'payouts.mpesa' as const,
    request: {
      // A number ending in 0000 makes the sandbox's payout fail (as test/runs does).
      phoneNumber: `07${String(i).padStart(4, '0')}${i % 10 === 9 ? '0000' : '1234'}`,
      amount: 100 + i,
      narration: `Salary ${i}`,
      callbackUrl,
    },
  }));
}

async function run(config: RunsAppConfig): Promise<RunsAppResult> {
  @Module({
    imports: [
      PaymentsModule.forRoot({
        ...config.credentials,
        baseUrl: config.sandboxUrl,
        defaultUsername: 'sandbox',
        journal: new InMemoryPaymentsJournal(),
      }),
      PaymentsWebhookModule.forRoot(),
      PayoutRunsModule.forRoot({}),
    ],
  })
  class BenchRunsModule {}

  const app = await NestFactory.create(BenchRunsModule, {
    forceCloseConnections: true,
    logger: process.env.RUNS_DEBUG ? ['warn', 'error'] : false,
  });
  await app.listen(0, '127.0.0.1');
  const url = (await app.getUrl()).replace('[::1]', '127.0.0.1');
  const runs = app.get(PayoutRunsService);
  const callbackUrl = config.webhooksToApp ? `${url}/webhooks/payments` : config.sinkUrl;
  const items = mpesaItems(config.items, callbackUrl);

  // Warm the path once (a validation of a few items), so the run does not pay for first calls.
  await runs.validate({ items: items.slice(0, 10) });

  const heapBeforeMB = heapAfterGc();
  let heapPeakMB = heapBeforeMB;
  const sampler = setInterval(() => {
    heapPeakMB = Math.max(heapPeakMB, process.memoryUsage().heapUsed / MB);
  }, 250);

  const cpuStart = cpuMicros();
  const started = performance.now();
  const created = await runs.create({
    name: 'bench',
    items,
    ratePerSecond: config.ratePerSecond,
    concurrency: config.concurrency,
  });
  const createMs = performance.now() - started;
  let current: PayoutRun = created;
  while (current.counts.queued + current.counts.sending > 0) {
    await sleep(100);
    current = await runs.get(created.runId);
  }
  const sendingPhaseMs = performance.now() - started;
  const cpu = cpuMicros() - cpuStart;
  clearInterval(sampler);
  const heapAfterMB = heapAfterGc();

  const result: RunsAppResult = {
    type: 'result',
    items: config.items,
    createMs,
    sendingPhaseMs,
    cpuMicros: cpu,
    heapBeforeMB,
    heapAfterMB,
    heapPeakMB,
    counts: { ...current.counts },
    pace: current.pace,
  };
  if (config.settleWaitMs > 0) {
    const deadline = Date.now() + config.settleWaitMs;
    while (Date.now() < deadline) {
      current = await runs.get(created.runId);
      if (current.counts.accepted === 0) break;
      await sleep(250);
    }
    result.cpuMicrosWithSettling = cpuMicros() - cpuStart;
    result.heapAfterSettlingMB = heapAfterGc();
    result.countsAfterSettling = { ...current.counts };
    result.pace = current.pace;
  }
  // Keep the input alive to the end: the heap figures count what the run added, not the items
  // array the caller built before it.
  if (items.length !== config.items) throw new Error('items changed');
  return result;
}

process.once('message', (config: RunsAppConfig) => {
  run(config).then(
    (result) => {
      process.send?.(result, () => process.exit(0));
    },
    (error: unknown) => {
      console.error(error);
      process.exit(1);
    },
  );
});
process.send?.({ type: 'ready' });

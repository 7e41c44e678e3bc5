// Payout runs under a rate-limited service (`npm run bench:runs`, also the last part of
// `npm run bench`; docs/performance.md, "Payout runs"). Three processes per scenario: this one
// (orchestration), the sandbox (bench/runs-sandbox.ts, rate limit R) and the app
// (bench/runs-app.ts: PaymentsModule, in-memory journal, webhook route, PayoutRunsModule with the
// embedded engine), so the sandbox's CPU is not counted as the library's. Then the time to resume
// after a worker restart with the BullMQ engine (bench/runs-resume.ts). Writes
// bench/results.runs.json.
//
// Environment: RUNS_ITEMS (default 10000), RUNS_RATES (default "50,500"), RUNS_RESTARTS (6),
// RUNS_CONCURRENCY (64), RUNS_WEBHOOKS=0 to skip the scenarios with webhooks confirmed, RUNS_RESUME=0 to skip the resume.
import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import * as os from 'node:os';
import { join } from 'node:path';
import { exited, forkRunsScript, nextMessage, startRunsSandbox } from './runs-process';
import type { RunsAppConfig, RunsAppResult, RunsSandboxStats } from './runs-protocol';
import { measureResume, type ResumeResult } from './runs-resume';

const ITEMS = Number(process.env.RUNS_ITEMS ?? 10_000);
const RATES = (process.env.RUNS_RATES ?? '50,500').split(',').map(Number);
const RESTARTS = Number(process.env.RUNS_RESTARTS ?? 6);
const CONCURRENCY = Number(process.env.RUNS_CONCURRENCY ?? 64);
/** Webhooks held this long never arrive during the run: only payouts use the rate limit. */
const NO_WEBHOOK_DELAY_MS = 3_600_000;

interface Scenario {
  name: string;
  ratePerSecond: number;
  items: number;
  /** Webhooks delivered to the app, confirmed by a status look-up (the module's default). */
  webhooks: boolean;
}

interface ScenarioResult {
  scenario: Scenario;
  app: RunsAppResult;
  sandbox: RunsSandboxStats;
  sandboxCpuMicros: number;
  /** (payouts let through − 1) / (last − first payout let through), per second. */
  throughput: number;
  ratio: number;
  /** Items over the time from create() called to no item queued or sending. */
  throughputOverall: number;
  cpuMicrosPerItem: number;
  cpuMicrosPerItemWithSettling?: number;
  heapGrowthMB: number;
  loadBefore: number[];
  loadAfter: number[];
}

function git(...args: string[]): string {
  try {
    return execFileSync('git', args, { encoding: 'utf8' }).trim();
  } catch {
    return 'unknown';
  }
}

const round = (value: number, digits = 1) => Number(value.toFixed(digits));

async function runScenario(scenario: Scenario): Promise<ScenarioResult> {
  const loadBefore = os.loadavg();
  const sandbox = await startRunsSandbox({
    requestsPerSecond: scenario.ratePerSecond,
    webhookDelayMs: scenario.webhooks ? 1000 : NO_WEBHOOK_DELAY_MS,
  });
  const app = forkRunsScript('runs-app', [], true);
  try {
    await nextMessage(app, 'ready', 120_000);
    const config: RunsAppConfig = {
      sandboxUrl: sandbox.url,
      credentials: sandbox.credentials,
      items: scenario.items,
      ratePerSecond: scenario.ratePerSecond,
      concurrency: CONCURRENCY,
      webhooksToApp: scenario.webhooks,
      sinkUrl: sandbox.sinkUrl,
      settleWaitMs: scenario.webhooks ? 30_000 : 0,
    };
    const sandboxCpuStart = await sandbox.cpuMicros(true);
    const reply = nextMessage<RunsAppResult>(app, 'result', 1_800_000);
    app.send(config);
    const result = await reply;
    const sandboxCpuMicros = (await sandbox.cpuMicros()) - sandboxCpuStart;
    const stats = await sandbox.stats();
    const span = ((stats.lastAdmittedAt ?? 0) - (stats.firstAdmittedAt ?? 0)) / 1000;
    const throughput = span > 0 ? (stats.payoutsAdmitted - 1) / span : Number.NaN;
    return {
      scenario,
      app: result,
      sandbox: stats,
      sandboxCpuMicros,
      throughput,
      ratio: throughput / scenario.ratePerSecond,
      throughputOverall: scenario.items / (result.sendingPhaseMs / 1000),
      cpuMicrosPerItem: result.cpuMicros / scenario.items,
      ...(result.cpuMicrosWithSettling === undefined
        ? {}
        : { cpuMicrosPerItemWithSettling: result.cpuMicrosWithSettling / scenario.items }),
      heapGrowthMB: result.heapAfterMB - result.heapBeforeMB,
      loadBefore,
      loadAfter: os.loadavg(),
    };
  } finally {
    // The app exits by itself after its result (writing its profile under RUNS_CPU_PROF).
    await Promise.race([exited(app), new Promise((resolve) => setTimeout(resolve, 10_000))]);
    if (app.exitCode === null && app.signalCode === null) app.kill('SIGKILL');
    await exited(app);
    await sandbox.stop();
  }
}

function printScenario(r: ScenarioResult): void {
  const { scenario: s, app, sandbox } = r;
  console.log(
    `  ${s.name}: ${sandbox.payoutsAdmitted} payouts let through, ${round(r.throughput)}/s ` +
      `(${round(r.ratio, 3)} R), ${sandbox.payouts429} payout 429s, ${sandbox.lookups} look-ups ` +
      `(${sandbox.lookups429} 429), create() ${Math.round(app.createMs)} ms, sending phase ` +
      `${round(app.sendingPhaseMs / 1000)} s, CPU ${Math.round(r.cpuMicrosPerItem)} µs/item, heap ` +
      `${round(app.heapBeforeMB)} → ${round(app.heapAfterMB)} MB (peak ${round(app.heapPeakMB)}); ` +
      `sandbox: heap ${round(sandbox.heapUsedMB)} MB, longest stall ${round(sandbox.longestStallMs)} ms ` +
      `(${sandbox.stallsOver40Ms} over 40 ms), longest GC pause ${round(sandbox.longestGcPauseMs)} ms`,
  );
}

function table(results: ScenarioResult[]): string {
  const rows = results.map((r) => {
    const { scenario: s, app, sandbox } = r;
    return [
      s.name,
      String(s.items),
      String(s.ratePerSecond),
      round(r.throughput).toFixed(1),
      round(r.ratio, 3).toFixed(3),
      round(r.throughputOverall).toFixed(1),
      String(sandbox.payouts429),
      `${sandbox.lookups} / ${sandbox.lookups429}`,
      String(Math.round(r.cpuMicrosPerItem)),
      r.cpuMicrosPerItemWithSettling === undefined
        ? '–'
        : String(Math.round(r.cpuMicrosPerItemWithSettling)),
      String(Math.round(r.sandboxCpuMicros / s.items)),
      round(r.heapGrowthMB).toFixed(1),
      round(app.heapPeakMB - app.heapBeforeMB).toFixed(1),
    ];
  });
  const header = [
    'scenario',
    'items',
    'R',
    'sent/s',
    'ratio to R',
    'items/s overall',
    'payout 429s',
    'look-ups / 429',
    'app CPU µs/item',
    'with webhooks µs/item',
    'sandbox CPU µs/item',
    'heap growth MB',
    'heap peak − before MB',
  ];
  return [header, header.map(() => '---'), ...rows]
    .map((cells) => `| ${cells.join(' | ')} |`)
    .join('\n');
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

function resumeTable(resume: ResumeResult): string {
  const header = [
    'stop',
    'n',
    'start → listening ms',
    'listening → first send ms',
    'start → first send ms',
    'old exit → first send ms',
  ];
  const rows = (['SIGTERM', 'SIGKILL'] as const).map((stop) => {
    const samples = resume.samples.filter((s) => s.stop === stop);
    const cell = (pick: (s: (typeof samples)[number]) => number) => {
      const values = samples.map(pick);
      return values.length
        ? `${Math.round(median(values))} (${Math.min(...values)} – ${Math.max(...values)})`
        : '–';
    };
    return [
      stop,
      String(samples.length),
      cell((s) => s.startToListeningMs),
      cell((s) => s.listeningToFirstSendMs),
      cell((s) => s.startToFirstSendMs),
      cell((s) => s.gapMs),
    ];
  });
  return [header, header.map(() => '---'), ...rows]
    .map((cells) => `| ${cells.join(' | ')} |`)
    .join('\n');
}

async function main(): Promise<void> {
  const started = Date.now();
  const machine = {
    cpu: os.cpus()[0]?.model ?? 'unknown',
    cores: os.cpus().length,
    node: process.version,
    commit: git('rev-parse', '--short', 'HEAD'),
    uncommittedFiles: git('status', '--porcelain').split('\n').filter(Boolean).length,
    uptimeAtStart: execFileSync('uptime', { encoding: 'utf8' }).trim(),
    date: new Date().toISOString(),
  };
  console.log(`# Payout runs (${machine.cpu}, ${machine.cores} cores, node ${machine.node})`);
  console.log(`commit ${machine.commit}, ${machine.uncommittedFiles} files uncommitted`);
  console.log(`load: ${machine.uptimeAtStart}\n`);

  const scenarios: Scenario[] = RATES.map((rate) => ({
    name: `embedded, R=${rate}, payouts only`,
    ratePerSecond: rate,
    items: ITEMS,
    webhooks: false,
  }));
  if (process.env.RUNS_WEBHOOKS !== '0') {
    // Webhooks confirmed by a status look-up each: the look-ups share the service's limit.
    scenarios.push({
      name: 'embedded, R=50, webhooks confirmed',
      ratePerSecond: 50,
      items: Math.min(ITEMS, 2000),
      webhooks: true,
    });
  }
  const results: ScenarioResult[] = [];
  for (const scenario of scenarios) {
    console.log(`${scenario.name} (${scenario.items} items)...`);
    const result = await runScenario(scenario);
    printScenario(result);
    results.push(result);
  }

  let resume: ResumeResult | undefined;
  if (process.env.RUNS_RESUME !== '0') {
    console.log('\nBullMQ: resume after a worker restart...');
    resume = await measureResume({
      restarts: RESTARTS,
      ratePerSecond: 50,
      concurrency: 16,
      items: 5000,
      sendForMs: 3000,
    });
  }

  const uptimeAtEnd = execFileSync('uptime', { encoding: 'utf8' }).trim();
  console.log(`\n## Runs (concurrency ${CONCURRENCY}, sandbox limit = R)\n`);
  console.log(table(results));
  if (resume) {
    console.log(
      `\n## Resume after a worker restart (BullMQ, R=${resume.ratePerSecond}, medians (min – max))\n`,
    );
    console.log(resumeTable(resume));
    console.log(
      `\n${resume.payoutsAdmitted} payouts let through, ${resume.ledger} transactions in the ledger`,
    );
  }
  console.log(`\nload at the end: ${uptimeAtEnd}`);
  console.log(`took ${Math.round((Date.now() - started) / 1000)} s`);

  writeFileSync(
    join(__dirname, 'results.runs.json'),
    `${JSON.stringify({ machine: { ...machine, uptimeAtEnd }, concurrency: CONCURRENCY, results, resume }, null, 2)}\n`,
  );
}

void main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});

/**
 * Client-side cost of the payments library against raw axios and node:http (issue 5).
 * Run with `npm run bench`; see docs/performance.md. Sizes can be overridden through BENCH_*
 * environment variables for quick local runs, but published figures use the defaults.
 */
import { execFileSync, type ChildProcess } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import {
  axiosScenario,
  configuredAxiosScenario,
  nestScenario,
  nodeHttpScenario,
  type Scenario,
} from './clients';
import { forceGc, median, runLoad, type LoadResult } from './load';
import { runDeadlineMicro, runMicro, type MicroResult } from './micro';
import { backgroundMeter, serverCpuMicros, startServer } from './server-process';

function intFromEnv(name: string, fallback: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < 1) throw new Error(`${name} must be a positive integer`);
  return value;
}

const CONFIG = {
  calls: intFromEnv('BENCH_CALLS', 20_000),
  concurrency: intFromEnv('BENCH_CONCURRENCY', 64),
  warmupCalls: intFromEnv('BENCH_WARMUP', 2_000),
  // Several rounds in rotating order, reported as medians: one round on a shared 2-core VM is noisy.
  rounds: intFromEnv('BENCH_ROUNDS', 5),
  heapCalls: intFromEnv('BENCH_HEAP_CALLS', 100_000),
  microIterations: intFromEnv('BENCH_MICRO_ITERATIONS', 50_000),
};

const TARGETS = {
  minThroughputRatioAB: 0.85,
  maxCpuOverheadUsPerCall: 40,
  maxHeapGrowthMB: 5,
};

const MB = 1_000_000;

function progress(line: string): void {
  process.stderr.write(`bench: ${line}\n`);
}

/** The library version measured: others edit libs/ while benchmarks run, so record which one. */
function libraryRevision(): { commit: string; uncommittedLibraryFiles: number } | undefined {
  try {
    const git = (...args: string[]) => execFileSync('git', args, { encoding: 'utf8' }).trim();
    const changed = git('status', '--porcelain', '--', 'libs/payments');
    return {
      commit: git('rev-parse', '--short', 'HEAD'),
      uncommittedLibraryFiles: changed === '' ? 0 : changed.split('\n').length,
    };
  } catch {
    return undefined;
  }
}

interface RoundResult extends LoadResult {
  serverCpuUsPerCall: number;
}

/** One measured run, with the server's CPU over the same run for context. */
async function measure(child: ChildProcess, scenario: Scenario): Promise<RoundResult> {
  forceGc();
  const serverBefore = await serverCpuMicros(child);
  const result = await runLoad(scenario.call, CONFIG.calls, CONFIG.concurrency);
  const serverCpuUsPerCall = ((await serverCpuMicros(child)) - serverBefore) / CONFIG.calls;
  return { ...result, serverCpuUsPerCall };
}

interface ScenarioSummary {
  label: string;
  callsPerSecond: number;
  p50Ms: number;
  p99Ms: number;
  cpuUsPerCall: number;
  eventLoopUtilization: number;
  serverCpuUsPerCall: number;
  rounds: RoundResult[];
}

function summarise(label: string, rounds: RoundResult[]): ScenarioSummary {
  const of = (pick: (r: RoundResult) => number) => median(rounds.map(pick));
  return {
    label,
    callsPerSecond: of((r) => r.callsPerSecond),
    p50Ms: of((r) => r.p50Ms),
    p99Ms: of((r) => r.p99Ms),
    cpuUsPerCall: of((r) => r.cpuUsPerCall),
    eventLoopUtilization: of((r) => r.eventLoopUtilization),
    serverCpuUsPerCall: of((r) => r.serverCpuUsPerCall),
    rounds,
  };
}

interface HeapResult {
  calls: number;
  heapUsedBeforeMB: number;
  heapUsedAfterMB: number;
  heapGrowthMB: number;
  rssBeforeMB: number;
  rssAfterMB: number;
  rssGrowthMB: number;
}

/** Heap after a forced GC, before and after `calls` more calls: what the library retains. */
async function measureHeap(
  scenario: Scenario,
  calls: number,
  concurrency: number,
): Promise<HeapResult> {
  forceGc();
  const before = process.memoryUsage();
  await runLoad(scenario.call, calls, concurrency);
  forceGc();
  const after = process.memoryUsage();
  return {
    calls,
    heapUsedBeforeMB: before.heapUsed / MB,
    heapUsedAfterMB: after.heapUsed / MB,
    heapGrowthMB: (after.heapUsed - before.heapUsed) / MB,
    rssBeforeMB: before.rss / MB,
    rssAfterMB: after.rss / MB,
    rssGrowthMB: (after.rss - before.rss) / MB,
  };
}

const fixed = (value: number, digits: number) => value.toFixed(digits);
const verdict = (pass: boolean) => (pass ? 'PASS' : 'MISS');
const range = (values: number[]) =>
  `${fixed(Math.min(...values), 0)}–${fixed(Math.max(...values), 0)}`;

function markdownTable(header: string[], rows: string[][]): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((row) => row[i].length)));
  const line = (cells: string[]) =>
    `| ${cells.map((cell, i) => (i === 0 ? cell.padEnd(widths[i]) : cell.padStart(widths[i]))).join(' | ')} |`;
  const rule = `| ${widths.map((w, i) => (i === 0 ? '-'.repeat(w) : `${'-'.repeat(w - 1)}:`)).join(' | ')} |`;
  return [line(header), rule, ...rows.map(line)].join('\n');
}

async function main(): Promise<void> {
  const started = Date.now();
  const { child, port } = await startServer();
  const baseUrl = `http://127.0.0.1:${port}`;
  const scenarios: Scenario[] = [];
  try {
    const nest = await nestScenario(baseUrl);
    scenarios.push(
      nest,
      configuredAxiosScenario(baseUrl, false),
      configuredAxiosScenario(baseUrl, true),
      axiosScenario(baseUrl),
      nodeHttpScenario(port),
    );

    const background = await backgroundMeter(child);
    progress(`server on ${baseUrl}; warm-up ${CONFIG.warmupCalls} calls per client`);
    for (const scenario of scenarios) {
      await runLoad(scenario.call, CONFIG.warmupCalls, CONFIG.concurrency);
    }

    const results = new Map<Scenario['key'], RoundResult[]>(scenarios.map((s) => [s.key, []]));
    for (let round = 0; round < CONFIG.rounds; round++) {
      // Rotating the order spreads any drift of the machine over all three clients.
      for (let i = 0; i < scenarios.length; i++) {
        const scenario = scenarios[(round + i) % scenarios.length];
        const result = await measure(child, scenario);
        results.get(scenario.key)?.push(result);
        progress(
          `round ${round + 1}/${CONFIG.rounds} ${scenario.label}: ${fixed(result.callsPerSecond, 0)} calls/s`,
        );
      }
    }
    const [a, b0, b0d, b, c] = scenarios.map((s) => summarise(s.label, results.get(s.key) ?? []));

    progress(`heap: ${CONFIG.heapCalls} calls through (a)`);
    const heap = await measureHeap(nest, CONFIG.heapCalls, CONFIG.concurrency);

    progress(`micro-benchmark: ${CONFIG.microIterations} iterations per operation`);
    const micro: MicroResult[] = runMicro(CONFIG.microIterations);
    const deadlineMicro = runDeadlineMicro(CONFIG.microIterations);

    await background.stop();
    const ratioAB = a.callsPerSecond / b.callsPerSecond;
    const ratioAB0 = a.callsPerSecond / b0.callsPerSecond;
    const ratioAC = a.callsPerSecond / c.callsPerSecond;
    const cpuOverheadAB = a.cpuUsPerCall - b.cpuUsPerCall;
    const cpuOverheadAB0 = a.cpuUsPerCall - b0.cpuUsPerCall;
    // Paired by round (both clients ran in the same round), so drift of the machine cancels out.
    const deadlineRounds = (results.get('b0d') ?? []).map(
      (round, i) => round.cpuUsPerCall - (results.get('b0')?.[i]?.cpuUsPerCall ?? Number.NaN),
    );
    const deadlineCpuUs = median(deadlineRounds);
    const targets = {
      throughput: {
        description: `(a) throughput >= ${TARGETS.minThroughputRatioAB} x (b)`,
        value: ratioAB,
        pass: ratioAB >= TARGETS.minThroughputRatioAB,
      },
      cpuOverhead: {
        description: `(a) - (b) CPU < ${TARGETS.maxCpuOverheadUsPerCall} us/call`,
        value: cpuOverheadAB,
        pass: cpuOverheadAB < TARGETS.maxCpuOverheadUsPerCall,
      },
      heapGrowth: {
        description: `heap growth after ${CONFIG.heapCalls} calls < ${TARGETS.maxHeapGrowthMB} MB`,
        value: heap.heapGrowthMB,
        pass: heap.heapGrowthMB < TARGETS.maxHeapGrowthMB,
      },
    };

    const machine = {
      cpu: os.cpus()[0]?.model ?? 'unknown',
      cores: os.cpus().length,
      totalMemoryGB: Number((os.totalmem() / 1e9).toFixed(1)),
      platform: `${os.type()} ${os.release()} ${os.arch()}`,
      node: process.version,
      date: new Date().toISOString(),
      library: libraryRevision(),
      // Other work on the box skews every figure: this shows whether there was any.
      otherProcessesCpuPercent: background.percentOfMachine,
    };

    const out: string[] = [];
    out.push(
      `Machine: ${machine.cpu}, ${machine.cores} cores, ${machine.platform}, Node ${machine.node}, ${machine.date}, other processes ${machine.otherProcessesCpuPercent ?? '?'}% of the machine`,
      `Library: commit ${machine.library?.commit ?? '?'}, ${machine.library?.uncommittedLibraryFiles ?? '?'} uncommitted files in libs/payments`,
      `Load: ${CONFIG.calls} calls x ${CONFIG.rounds} rounds (medians), concurrency ${CONFIG.concurrency}, warm-up ${CONFIG.warmupCalls}; server in a child process`,
      '',
      markdownTable(
        [
          'client',
          'calls/s',
          'p50 ms',
          'p99 ms',
          'CPU µs/call',
          'CPU range',
          'event loop busy',
          'server CPU µs/call',
        ],
        [a, b0, b0d, b, c].map((s) => [
          s.label,
          fixed(s.callsPerSecond, 0),
          fixed(s.p50Ms, 2),
          fixed(s.p99Ms, 2),
          fixed(s.cpuUsPerCall, 1),
          range(s.rounds.map((r) => r.cpuUsPerCall)),
          `${fixed(s.eventLoopUtilization * 100, 0)}%`,
          fixed(s.serverCpuUsPerCall, 1),
        ]),
      ),
      '',
      `Throughput a/b0 ${fixed(ratioAB0, 2)}, a/b ${fixed(ratioAB, 2)}, a/c ${fixed(ratioAC, 2)}; module CPU overhead a-b0 ${fixed(cpuOverheadAB0, 1)} µs/call, a-b ${fixed(cpuOverheadAB, 1)} µs/call`,
      `Per-attempt deadline: ${fixed(deadlineMicro.usPerAttempt, 2)} µs/attempt in isolation (timer + close listener); under load (b0+d) - (b0) CPU ${fixed(deadlineCpuUs, 1)} µs/call (median of paired rounds; rounds ${deadlineRounds.map((d) => fixed(d, 1)).join(', ')}: within the noise of the load figures)`,
      '',
      markdownTable(
        [`(a) after ${heap.calls} calls, forced GC`, 'before MB', 'after MB', 'growth MB'],
        [
          ['heap used', heap.heapUsedBeforeMB, heap.heapUsedAfterMB, heap.heapGrowthMB],
          ['RSS', heap.rssBeforeMB, heap.rssAfterMB, heap.rssGrowthMB],
        ].map(([name, ...values]) => [String(name), ...values.map((v) => fixed(Number(v), 2))]),
      ),
      '',
      markdownTable(
        ['validation + wire mapping', 'µs/call', 'bytes allocated/call', 'of which encoding µs'],
        micro.map((m) => [
          m.operation,
          fixed(m.usPerCall, 2),
          fixed(m.bytesPerCall, 0),
          fixed(m.wireUsPerCall, 3),
        ]),
      ),
      '',
      markdownTable(
        ['target', 'measured', 'verdict'],
        [
          [targets.throughput.description, fixed(ratioAB, 2), verdict(targets.throughput.pass)],
          [
            targets.cpuOverhead.description,
            fixed(cpuOverheadAB, 1),
            verdict(targets.cpuOverhead.pass),
          ],
          [
            targets.heapGrowth.description,
            fixed(heap.heapGrowthMB, 2),
            verdict(targets.heapGrowth.pass),
          ],
        ],
      ),
    );
    process.stdout.write(`${out.join('\n')}\n`);

    const resultsFile = path.join(__dirname, 'results.json');
    const document = {
      machine,
      config: CONFIG,
      clients: { a, b0, b0d, b, c },
      ratios: { throughputAB0: ratioAB0, throughputAB: ratioAB, throughputAC: ratioAC },
      moduleCpuOverheadUsPerCall: {
        vsConfiguredAxios: cpuOverheadAB0,
        vsDefaultAxios: cpuOverheadAB,
      },
      deadlineCpuUsPerCall: {
        isolatedPerAttempt: deadlineMicro.usPerAttempt,
        underLoadMedian: deadlineCpuUs,
        underLoadRounds: deadlineRounds,
      },
      heap,
      micro,
      targets,
      durationSeconds: (Date.now() - started) / 1000,
    };
    writeFileSync(resultsFile, `${JSON.stringify(document, null, 2)}\n`);
    progress(
      `wrote ${path.relative(process.cwd(), resultsFile)} in ${document.durationSeconds.toFixed(0)} s`,
    );
  } finally {
    for (const scenario of scenarios) await scenario.close();
    child.kill();
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});

/**
 * Cost per call of the payments library against axios, node:http and undici (issue 14).
 * `npm run bench`; docs/performance.md describes the method. This process only orchestrates and
 * never loads the library: the server and every client run in processes of their own (fork.ts
 * gives those the flags they need). Sizes can be overridden through BENCH_* variables
 * (config.ts) for quick runs; published figures use the defaults.
 */
import { writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { performance } from 'node:perf_hooks';
import {
  compare,
  evaluateTargets,
  summarise,
  type ClientSummary,
  type PairedComparison,
  type RunMeasurement,
  type RunsByClient,
} from './analysis';
import { CLIENT_KEYS, CLIENT_LABELS, type ClientKey } from './clients';
import { CONFIG, RESPONSE_SIZES, TARGETS } from './config';
import type { HeapGrowthResult, InflightResult } from './memory';
import { backgroundMeter, machineInfo } from './machine';
import type { WorkerResults } from './protocol';
import { renderReport, type BenchDocument } from './report';
import { serverCpuMicros, startServer, type BenchServer } from './server-process';
import { ensureLibraryBuilt, measureStartup } from './startup';
import { percentile } from './stats';
import { startWorkers, type Worker } from './workers';

const SIZE_CLIENTS: readonly ClientKey[] = ['a', 'b0'];
/** Of the first warm-up of each client and of the heap-growth run, as in earlier versions. */
const WARMUP_CONCURRENCY = 64;

const benchStart = performance.now();

function progress(line: string): void {
  const seconds = ((performance.now() - benchStart) / 1000).toFixed(0);
  process.stderr.write(`bench [${seconds.padStart(3)} s]: ${line}\n`);
}

/**
 * The order of the clients in round `round`: rows of a balanced Latin square (Williams design).
 * Every client takes every position once per `items.length` rounds, as in a plain rotation, and
 * also follows every other client once: a client that leaves work behind on the machine (a GC
 * after its run, say) does not always slow down the same neighbour, which a rotation would do.
 */
function roundOrder<T>(items: readonly T[], round: number): T[] {
  const n = items.length;
  const first = Array.from({ length: n }, (_, j) =>
    j === 0 ? 0 : j % 2 === 1 ? (j + 1) / 2 : n - j / 2,
  );
  const row = first.map((index) => items[(index + round) % n]);
  // With an odd count, carry-over balances only together with the mirrored rows.
  return n % 2 === 1 && Math.floor(round / n) % 2 === 1 ? row.reverse() : row;
}

/** What the slices of one client's run add up to. */
interface SliceTotals {
  calls: number;
  elapsedMs: number;
  cpuMicros: number;
  serverCpuMicros: number;
  busyMs: number;
  latencies: number[][];
}

function combineSlices(totals: SliceTotals, concurrency: number, round: number): RunMeasurement {
  const latencies = Float64Array.from(totals.latencies.flat()).sort();
  return {
    calls: totals.calls,
    concurrency,
    elapsedMs: totals.elapsedMs,
    callsPerSecond: totals.calls / (totals.elapsedMs / 1000),
    p50Ms: percentile(latencies, 50),
    p99Ms: percentile(latencies, 99),
    cpuUsPerCall: totals.cpuMicros / totals.calls,
    eventLoopUtilization: totals.busyMs / totals.elapsedMs,
    round,
    serverCpuUsPerCall: totals.serverCpuMicros / totals.calls,
  };
}

/**
 * One round of `clients` at one concurrency: each client's run is `CONFIG.slicesPerRun` slices,
 * taken in turn with the other clients' slices, the order reversed every other slice, so that
 * every client meets the same stretch of the machine's time. A client's figures are its slices
 * summed: calls over time, CPU over calls.
 */
async function measureRound(
  server: BenchServer,
  workers: Map<ClientKey, Worker>,
  clients: readonly ClientKey[],
  port: number,
  concurrency: number,
  round: number,
): Promise<Map<ClientKey, RunMeasurement>> {
  const order = roundOrder(clients, round).filter((key) => workers.has(key));
  const totals = new Map<ClientKey, SliceTotals>();
  for (const key of order) {
    // Reopens the pool at this concurrency (idle sockets may have been closed during the other
    // clients' turns), so that connecting is not timed.
    await workers.get(key)?.ask({
      type: 'load',
      port,
      calls: Math.max(CONFIG.warmupCalls, 2 * concurrency),
      concurrency,
    });
    totals.set(key, {
      calls: 0,
      elapsedMs: 0,
      cpuMicros: 0,
      serverCpuMicros: 0,
      busyMs: 0,
      latencies: [],
    });
  }
  const seconds = CONFIG.secondsPerRun / CONFIG.slicesPerRun;
  for (let slice = 0; slice < CONFIG.slicesPerRun; slice++) {
    for (const key of slice % 2 === 0 ? order : [...order].reverse()) {
      const worker = workers.get(key);
      const sum = totals.get(key);
      if (worker === undefined || sum === undefined) continue;
      const serverBefore = await serverCpuMicros(server);
      // No forced GC before a slice: after one, V8 runs with a shrunken young generation for a
      // while, which made short runs cost up to a third more CPU per call than the steady state.
      const result = await worker.ask({ type: 'timedLoad', port, seconds, concurrency });
      sum.serverCpuMicros += (await serverCpuMicros(server)) - serverBefore;
      sum.calls += result.calls;
      sum.elapsedMs += result.elapsedMs;
      sum.cpuMicros += result.cpuUsPerCall * result.calls;
      sum.busyMs += result.eventLoopUtilization * result.elapsedMs;
      sum.latencies.push(result.latenciesMs ?? []);
    }
  }
  return new Map(
    [...totals].map(([key, sum]) => [key, combineSlices(sum, concurrency, round)] as const),
  );
}

function summariseAll(runs: RunsByClient): Partial<Record<ClientKey, ClientSummary>> {
  const summaries: Partial<Record<ClientKey, ClientSummary>> = {};
  for (const key of CLIENT_KEYS) {
    const list = runs[key];
    if (list !== undefined) summaries[key] = summarise(list);
  }
  return summaries;
}

/**
 * Fresh client processes for `keys`, started together (startup, ts-node compiling the library,
 * is not measured) and warmed up as one process each, then `body`, then stopped. Whatever share
 * of the machine other processes took meanwhile is pushed to `background`.
 */
async function withFreshClients<T>(
  server: BenchServer,
  keys: readonly ClientKey[],
  background: number[],
  body: (workers: Map<ClientKey, Worker>) => Promise<T>,
): Promise<T> {
  const workers = new Map<ClientKey, Worker>();
  try {
    for (const worker of await startWorkers(keys)) {
      if (worker.key !== 'none') workers.set(worker.key, worker);
    }
    for (const worker of workers.values()) {
      await worker.ask({
        type: 'load',
        port: server.ports.standard,
        calls: CONFIG.initialWarmupCalls,
        concurrency: WARMUP_CONCURRENCY,
      });
    }
    const pids = [process.pid, server.child.pid, ...[...workers.values()].map((w) => w.pid)];
    const meter = backgroundMeter(pids.filter((pid): pid is number => pid !== undefined));
    const result = await body(workers);
    const share = meter.stop();
    if (share !== undefined) background.push(share);
    return result;
  } finally {
    for (const worker of workers.values()) await worker.stop();
  }
}

/**
 * The main rounds: every concurrency, every client once per round, in balanced order. Each round
 * has processes of its own: the same code in a new process can cost tens of µs per call more or
 * less (docs/performance.md, "Method"), so the rounds sample processes as well as time.
 */
async function loadRounds(server: BenchServer, background: number[]) {
  const runs: Record<number, RunsByClient> = {};
  for (let round = 0; round < CONFIG.rounds; round++) {
    progress(`round ${round + 1}/${CONFIG.rounds}: starting ${CONFIG.clients.length} clients`);
    await withFreshClients(server, CONFIG.clients, background, async (workers) => {
      for (const concurrency of CONFIG.concurrencies) {
        const results = await measureRound(
          server,
          workers,
          CONFIG.clients,
          server.ports.standard,
          concurrency,
          round,
        );
        for (const [key, result] of results) {
          ((runs[concurrency] ??= {})[key] ??= []).push(result);
          progress(
            `round ${round + 1}/${CONFIG.rounds} c=${concurrency} ${CLIENT_LABELS[key]}: ${result.callsPerSecond.toFixed(0)} calls/s, ${result.cpuUsPerCall.toFixed(1)} µs CPU/call`,
          );
        }
      }
    });
  }
  return runs;
}

/** (a) and (b0) against the padded answers, in rounds of their own, with processes of their own. */
async function sizeRounds(
  server: BenchServer,
  background: number[],
): Promise<Record<keyof typeof RESPONSE_SIZES, RunsByClient>> {
  const runs: Record<keyof typeof RESPONSE_SIZES, RunsByClient> = { kb1: {}, kb100: {} };
  for (const size of Object.keys(RESPONSE_SIZES) as (keyof typeof RESPONSE_SIZES)[]) {
    const port = server.ports[size];
    for (let round = 0; round < CONFIG.sizeRounds; round++) {
      await withFreshClients(server, SIZE_CLIENTS, background, async (workers) => {
        for (const worker of workers.values()) {
          // Then warmed at this size too.
          await worker.ask({
            type: 'load',
            port,
            calls: CONFIG.sizeWarmupCalls,
            concurrency: CONFIG.sizeConcurrency,
          });
        }
        const results = await measureRound(
          server,
          workers,
          SIZE_CLIENTS,
          port,
          CONFIG.sizeConcurrency,
          round,
        );
        for (const [key, result] of results) {
          (runs[size][key] ??= []).push(result);
          progress(
            `size ${size} round ${round + 1}/${CONFIG.sizeRounds} ${CLIENT_LABELS[key]}: ${result.callsPerSecond.toFixed(0)} calls/s, ${result.cpuUsPerCall.toFixed(1)} µs CPU/call`,
          );
        }
      });
    }
  }
  return runs;
}

/**
 * Memory per client and the micro-benchmarks, each in a fresh process so that no earlier load
 * shapes its heap. The processes start together (their startup is not measured) and are used
 * one at a time.
 */
async function memoryAndMicro(server: BenchServer) {
  progress('memory and micro-benchmarks: starting fresh workers');
  const started = await startWorkers([...CONFIG.clients, 'a', 'none']);
  const inflightWorkers = started.slice(0, CONFIG.clients.length);
  const [heapWorker, microWorker] = started.slice(CONFIG.clients.length);
  try {
    const inflight: Partial<Record<ClientKey, InflightResult>> = {};
    for (const worker of inflightWorkers) {
      if (worker.key === 'none') continue;
      progress(
        `memory: ${CONFIG.inflightCalls} calls in flight through ${CLIENT_LABELS[worker.key]}`,
      );
      inflight[worker.key] = await worker.ask({
        type: 'inflight',
        port: server.ports.hold,
        calls: CONFIG.inflightCalls,
        warmupCalls: CONFIG.warmupCalls,
      });
      // Its thousands of sockets closed before the next client opens its own.
      await worker.stop();
    }
    progress(`memory: heap growth over ${CONFIG.heapCalls} calls through (a)`);
    const heapGrowth: HeapGrowthResult = await heapWorker.ask({
      type: 'heapGrowth',
      port: server.ports.standard,
      calls: CONFIG.heapCalls,
      concurrency: WARMUP_CONCURRENCY,
      warmupCalls: CONFIG.initialWarmupCalls,
    });
    await heapWorker.stop();
    progress(`micro-benchmarks: ${CONFIG.microIterations} iterations`);
    const micro: WorkerResults['micro'] = await microWorker.ask({
      type: 'micro',
      iterations: CONFIG.microIterations,
    });
    return { inflight, heapGrowth, micro };
  } finally {
    for (const worker of [...inflightWorkers, heapWorker, microWorker]) await worker.stop();
  }
}

async function main(): Promise<void> {
  const machine = machineInfo();
  if (ensureLibraryBuilt()) progress('built dist/libs/payments for the startup figures');

  const server = await startServer();
  try {
    progress(`server ports ${JSON.stringify(server.ports)}`);
    const background: number[] = [];
    const loadRuns = await loadRounds(server, background);
    const sizeRuns = await sizeRounds(server, background);
    const otherProcessesCpuPercent = background.length === 0 ? undefined : Math.max(...background);

    const { inflight, heapGrowth, micro } = await memoryAndMicro(server);
    progress(`startup: ${CONFIG.startupRepetitions} fresh processes per measure`);
    const startup = await measureStartup(CONFIG.startupRepetitions);

    const comparisons: Record<number, PairedComparison> = {};
    const clients: Record<number, Partial<Record<ClientKey, ClientSummary>>> = {};
    for (const concurrency of CONFIG.concurrencies) {
      comparisons[concurrency] = compare(loadRuns[concurrency] ?? {});
      clients[concurrency] = summariseAll(loadRuns[concurrency] ?? {});
    }
    const sizes = Object.fromEntries(
      (Object.keys(RESPONSE_SIZES) as (keyof typeof RESPONSE_SIZES)[]).map((size) => [
        size,
        {
          bodyBytes: server.bodyBytes[size],
          clients: summariseAll(sizeRuns[size]),
          comparison: compare(sizeRuns[size]),
        },
      ]),
    ) as BenchDocument['sizes'];

    const document: BenchDocument = {
      machine: { ...machine, otherProcessesCpuPercent },
      config: CONFIG,
      targetsConfig: TARGETS,
      standardBodyBytes: server.bodyBytes.standard,
      clients,
      comparisons,
      sizes,
      inflight,
      heapGrowth,
      micro,
      startup,
      targets: evaluateTargets({
        comparisons,
        inflight,
        heapGrowth,
        deadlineUsPerAttempt: micro.deadline.usPerAttempt,
      }),
      durationSeconds: (performance.now() - benchStart) / 1000,
      raw: { load: loadRuns, sizes: sizeRuns },
    };
    process.stdout.write(renderReport(document));
    const resultsFile = path.join(__dirname, 'results.json');
    writeFileSync(resultsFile, `${JSON.stringify(document, null, 2)}\n`);
    progress(
      `wrote ${path.relative(process.cwd(), resultsFile)}; ${document.durationSeconds.toFixed(0)} s in all`,
    );
  } finally {
    server.stop();
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});

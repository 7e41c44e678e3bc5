/**
 * Cost per call of the payments library against axios, node:http and undici (issue 14), and of
 * its journal (issue item 6). `npm run bench`; docs/performance.md describes the method. This
 * process only orchestrates and never loads the library: the server, every client and the
 * redis-server of (a+r) run in processes of their own (fork.ts gives the workers the flags they
 * need). Sizes can be overridden through BENCH_* variables (config.ts) for quick runs, and
 * BENCH_JOURNAL_ONLY=1 runs the journal section alone; published figures use the defaults.
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
import {
  CLIENT_KEYS,
  CLIENT_LABELS,
  isJournalClient,
  JOURNAL_CLIENT_KEYS,
  type ClientKey,
  type JournalClientKey,
} from './clients';
import { CONFIG, RESPONSE_SIZES, TARGETS } from './config';
import type { HeapGrowthResult, InflightResult } from './memory';
import { backgroundMeter, machineInfo } from './machine';
import type { WorkerResults } from './protocol';
import { startBenchRedis, type BenchRedis } from './redis';
import { renderReport, type BenchDocument, type JournalMemory } from './report';
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
  /** redis-server's CPU and commands over (a+r)'s slices. */
  store?: { cpuMicros: number; commands: number };
}

function combineSlices(totals: SliceTotals, concurrency: number, round: number): RunMeasurement {
  const latencies = Float64Array.from(totals.latencies.flat()).sort();
  const store = totals.store;
  return {
    ...(store === undefined
      ? {}
      : {
          storeCpuUsPerCall: store.cpuMicros / totals.calls,
          storeCommandsPerCall: store.commands / totals.calls,
        }),
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
 * summed: calls over time, CPU over calls. With `redis`, (a+r)'s slices also count what
 * redis-server spent on them.
 */
async function measureRound(
  server: BenchServer,
  workers: Map<ClientKey, Worker>,
  clients: readonly ClientKey[],
  port: number,
  concurrency: number,
  round: number,
  redis?: BenchRedis,
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
      ...(key === 'ar' && redis !== undefined ? { store: { cpuMicros: 0, commands: 0 } } : {}),
    });
  }
  const seconds = CONFIG.secondsPerRun / CONFIG.slicesPerRun;
  for (let slice = 0; slice < CONFIG.slicesPerRun; slice++) {
    for (const key of slice % 2 === 0 ? order : [...order].reverse()) {
      const worker = workers.get(key);
      const sum = totals.get(key);
      if (worker === undefined || sum === undefined) continue;
      const serverBefore = await serverCpuMicros(server);
      const storeBefore = sum.store === undefined ? undefined : await redis?.counters();
      // No forced GC before a slice: after one, V8 runs with a shrunken young generation for a
      // while, which made short runs cost up to a third more CPU per call than the steady state.
      const result = await worker.ask({ type: 'timedLoad', port, seconds, concurrency });
      sum.serverCpuMicros += (await serverCpuMicros(server)) - serverBefore;
      if (sum.store !== undefined && storeBefore !== undefined && redis !== undefined) {
        const storeAfter = await redis.counters();
        sum.store.cpuMicros += storeAfter.cpuMicros - storeBefore.cpuMicros;
        sum.store.commands += storeAfter.commands - storeBefore.commands;
      }
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
 * of the machine other processes took meanwhile is pushed to `background`; redis-server, which
 * (a+r) uses, counts as the bench's own.
 */
async function withFreshClients<T>(
  server: BenchServer,
  keys: readonly ClientKey[],
  background: number[],
  redis: BenchRedis | undefined,
  body: (workers: Map<ClientKey, Worker>) => Promise<T>,
): Promise<T> {
  const workers = new Map<ClientKey, Worker>();
  try {
    for (const worker of await startWorkers(keys, redis?.url)) {
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
    const pids = [
      process.pid,
      server.child.pid,
      redis?.pid,
      ...[...workers.values()].map((w) => w.pid),
    ];
    const meter = backgroundMeter(pids.filter((pid): pid is number => pid !== undefined));
    const result = await body(workers);
    const share = meter.stop();
    if (share !== undefined) background.push(share);
    return result;
  } finally {
    for (const worker of workers.values()) await worker.stop();
  }
}

/** The clients of the rounds at `concurrency`: (a+j) and (a+r) only at the journal's. */
function clientsAt(concurrency: number): ClientKey[] {
  return CONFIG.clients.filter(
    (key) => !isJournalClient(key) || CONFIG.journalConcurrencies.includes(concurrency),
  );
}

/**
 * The main rounds: every concurrency, every client once per round, in balanced order. Each round
 * has processes of its own: the same code in a new process can cost tens of µs per call more or
 * less (docs/performance.md, "Method"), so the rounds sample processes as well as time. (a+j)
 * and (a+r) are measured in these rounds, exactly as (a), so that their ratios to (a) and (b0)
 * are paired within rounds too.
 */
async function loadRounds(
  server: BenchServer,
  redis: BenchRedis | undefined,
  background: number[],
) {
  const runs: Record<number, RunsByClient> = {};
  for (let round = 0; round < CONFIG.rounds; round++) {
    progress(`round ${round + 1}/${CONFIG.rounds}: starting ${CONFIG.clients.length} clients`);
    await withFreshClients(server, CONFIG.clients, background, redis, async (workers) => {
      for (const concurrency of CONFIG.concurrencies) {
        const results = await measureRound(
          server,
          workers,
          clientsAt(concurrency),
          server.ports.standard,
          concurrency,
          round,
          redis,
        );
        for (const [key, result] of results) {
          ((runs[concurrency] ??= {})[key] ??= []).push(result);
          const store =
            result.storeCpuUsPerCall === undefined
              ? ''
              : `; redis-server ${result.storeCpuUsPerCall.toFixed(1)} µs CPU/call`;
          progress(
            `round ${round + 1}/${CONFIG.rounds} c=${concurrency} ${CLIENT_LABELS[key]}: ${result.callsPerSecond.toFixed(0)} calls/s, ${result.cpuUsPerCall.toFixed(1)} µs CPU/call, p50 ${result.p50Ms.toFixed(2)} ms${store}`,
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
      await withFreshClients(server, SIZE_CLIENTS, background, undefined, async (workers) => {
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
  // The journal's clients hold entries: their memory is the journal section's (journalMemory).
  const clients = CONFIG.clients.filter((key) => !isJournalClient(key));
  const started = await startWorkers([...clients, 'a', 'none']);
  const inflightWorkers = started.slice(0, clients.length);
  const [heapWorker, microWorker] = started.slice(clients.length);
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

/**
 * `measure` of each worker of `keys` (started together, used one at a time, each stopped after
 * its measure). A measure that fails is recorded in `failures` and the others go on: the load
 * rounds before it took many minutes, and the report says what failed.
 */
async function eachFresh<T>(
  keys: readonly ('a' | JournalClientKey)[],
  redis: BenchRedis | undefined,
  what: string,
  failures: string[],
  measure: (worker: Worker) => Promise<T>,
): Promise<Partial<Record<'a' | JournalClientKey, T>>> {
  const results: Partial<Record<'a' | JournalClientKey, T>> = {};
  const workers = await startWorkers(keys, redis?.url);
  try {
    // startWorkers answers in the order of its keys.
    for (const [index, worker] of workers.entries()) {
      const key = keys[index];
      progress(`journal memory: ${what} through ${CLIENT_LABELS[key]}`);
      try {
        results[key] = await measure(worker);
      } catch (error: unknown) {
        const message = error instanceof Error ? error.message : String(error);
        failures.push(`${CLIENT_LABELS[key]}, ${what}: ${message.split('\n')[0]}`);
        progress(`journal memory: FAILED ${CLIENT_LABELS[key]}, ${what}: ${message}`);
      }
      await worker.stop();
    }
  } finally {
    for (const worker of workers) await worker.stop();
  }
  return results;
}

/**
 * The journal's memory, apart from the main memory figures: (a+j)'s journal keeps an entry per
 * call (up to its bound), so its heap is not comparable with (a)'s. (a) is measured again here,
 * in the same way and at the same time, as the reference. Then the in-memory journal at its
 * bound (journal.ts).
 */
async function journalMemory(
  server: BenchServer,
  redis: BenchRedis | undefined,
  keys: readonly JournalClientKey[],
): Promise<JournalMemory> {
  progress('journal memory: starting fresh workers');
  const measured: ('a' | JournalClientKey)[] = ['a', ...keys];
  const failures: string[] = [];
  const inflight = await eachFresh(
    measured,
    redis,
    `${CONFIG.inflightCalls} calls in flight`,
    failures,
    (worker) =>
      worker.ask({
        type: 'inflight',
        port: server.ports.hold,
        calls: CONFIG.inflightCalls,
        warmupCalls: CONFIG.warmupCalls,
        batch: CONFIG.journalInflightBatch,
      }),
  );
  const heapGrowth = await eachFresh(
    measured,
    redis,
    `heap kept over ${CONFIG.journalHeapCalls} calls`,
    failures,
    (worker) =>
      worker.ask({
        type: 'heapGrowth',
        port: server.ports.standard,
        calls: CONFIG.journalHeapCalls,
        concurrency: WARMUP_CONCURRENCY,
        warmupCalls: CONFIG.initialWarmupCalls,
      }),
  );
  if (!keys.includes('aj')) return { inflight, heapGrowth, failures };
  progress(`journal: InMemoryPaymentsJournal at its bound of ${CONFIG.journalCapEntries} entries`);
  const [capWorker] = await startWorkers(['none']);
  try {
    const cap = await capWorker.ask({
      type: 'journalCap',
      entries: CONFIG.journalCapEntries,
      creates: CONFIG.journalCapCreates,
    });
    return { inflight, heapGrowth, cap, failures };
  } catch (error: unknown) {
    failures.push(
      `journal at its bound: ${error instanceof Error ? error.message : String(error)}`,
    );
    return { inflight, heapGrowth, failures };
  } finally {
    await capWorker.stop();
  }
}

async function main(): Promise<void> {
  const machine = machineInfo();
  const journalKeys = JOURNAL_CLIENT_KEYS.filter((key) => CONFIG.clients.includes(key));
  if (CONFIG.journalOnly && journalKeys.length === 0) {
    throw new Error('BENCH_JOURNAL_ONLY=1 needs (a+j) or (a+r) in BENCH_CLIENTS');
  }
  // Before anything else: a bench that cannot measure (a+r) fails now, not after the rounds.
  const redis = CONFIG.clients.includes('ar') ? await startBenchRedis() : undefined;
  try {
    if (redis !== undefined) progress(`redis-server pid ${redis.pid} at ${redis.url}`);
    if (!CONFIG.journalOnly && ensureLibraryBuilt()) {
      progress('built dist/libs/payments for the startup figures');
    }
    await measureAll(machine, journalKeys, redis);
  } finally {
    await redis?.stop();
  }
}

async function measureAll(
  machine: ReturnType<typeof machineInfo>,
  journalKeys: readonly JournalClientKey[],
  redis: BenchRedis | undefined,
): Promise<void> {
  const server = await startServer();
  try {
    progress(`server ports ${JSON.stringify(server.ports)}`);
    const background: number[] = [];
    const loadRuns = await loadRounds(server, redis, background);
    const sizeRuns = CONFIG.journalOnly ? undefined : await sizeRounds(server, background);
    const otherProcessesCpuPercent = background.length === 0 ? undefined : Math.max(...background);

    const memory = CONFIG.journalOnly ? undefined : await memoryAndMicro(server);
    const journal =
      journalKeys.length === 0 ? undefined : await journalMemory(server, redis, journalKeys);
    let startup: BenchDocument['startup'];
    if (!CONFIG.journalOnly) {
      progress(`startup: ${CONFIG.startupRepetitions} fresh processes per measure`);
      startup = await measureStartup(CONFIG.startupRepetitions);
    }

    const comparisons: Record<number, PairedComparison> = {};
    const clients: Record<number, Partial<Record<ClientKey, ClientSummary>>> = {};
    for (const concurrency of CONFIG.concurrencies) {
      comparisons[concurrency] = compare(loadRuns[concurrency] ?? {});
      clients[concurrency] = summariseAll(loadRuns[concurrency] ?? {});
    }
    const sizes =
      sizeRuns === undefined
        ? undefined
        : (Object.fromEntries(
            (Object.keys(RESPONSE_SIZES) as (keyof typeof RESPONSE_SIZES)[]).map((size) => [
              size,
              {
                bodyBytes: server.bodyBytes[size],
                clients: summariseAll(sizeRuns[size]),
                comparison: compare(sizeRuns[size]),
              },
            ]),
          ) as NonNullable<BenchDocument['sizes']>);

    const document: BenchDocument = {
      machine: { ...machine, otherProcessesCpuPercent },
      config: CONFIG,
      targetsConfig: TARGETS,
      standardBodyBytes: server.bodyBytes.standard,
      clients,
      comparisons,
      ...(sizes === undefined ? {} : { sizes }),
      ...(memory === undefined ? {} : memory),
      ...(journal === undefined ? {} : { journal }),
      ...(startup === undefined ? {} : { startup }),
      targets: evaluateTargets({
        comparisons,
        journal: journalKeys.includes('aj'),
        ...(memory === undefined
          ? {}
          : {
              memory: {
                inflight: memory.inflight,
                heapGrowth: memory.heapGrowth,
                deadlineUsPerAttempt: memory.micro.deadline.usPerAttempt,
              },
            }),
      }),
      durationSeconds: (performance.now() - benchStart) / 1000,
      raw: { load: loadRuns, ...(sizeRuns === undefined ? {} : { sizes: sizeRuns }) },
    };
    process.stdout.write(renderReport(document));
    // The journal section alone does not overwrite the full run's figures.
    const resultsFile = path.join(
      __dirname,
      CONFIG.journalOnly ? 'results.journal.json' : 'results.json',
    );
    writeFileSync(resultsFile, `${JSON.stringify(document, null, 2)}\n`);
    progress(
      `wrote ${path.relative(process.cwd(), resultsFile)}; ${document.durationSeconds.toFixed(0)} s in all`,
    );
    if (journal !== undefined && journal.failures.length > 0) {
      progress(`FAILED: ${journal.failures.join('; ')}`);
      process.exitCode = 1;
    }
  } finally {
    server.stop();
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});

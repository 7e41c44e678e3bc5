/**
 * Sizes of `npm run bench` and the targets of issue 14 and of the journal (issue item 6, "Cost").
 * Every size can be overridden through a BENCH_* environment variable for quick local runs;
 * published figures use the defaults, chosen so that a full run took about 15 minutes on a quiet
 * 2-core machine before the journal's clients were added (docs/performance.md). BENCH_JOURNAL_ONLY=1 runs only the journal section (docs/performance.md, "The
 * journal's cost"): (a), (b0), (a+j) and (a+r) at concurrency 1 and 64, and the journal's memory.
 */
import { CLIENT_KEYS, type ClientKey } from './clients';

function intFromEnv(name: string, fallback: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < 1) throw new Error(`${name} must be a positive integer`);
  return value;
}

function numberFromEnv(name: string, fallback: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isFinite(value) || value <= 0) throw new Error(`${name} must be a positive number`);
  return value;
}

function intListFromEnv(name: string, fallback: number[]): number[] {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const values = raw.split(',').map(Number);
  if (values.length === 0 || values.some((v) => !Number.isInteger(v) || v < 1)) {
    throw new Error(`${name} must be a comma-separated list of positive integers`);
  }
  return values;
}

function flagFromEnv(name: string): boolean {
  const raw = process.env[name];
  if (raw === undefined || raw === '' || raw === '0') return false;
  if (raw === '1') return true;
  throw new Error(`${name} must be 1 or 0`);
}

function listFromEnv(name: string, fallback: readonly string[]): string[] {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return [...fallback];
  const values = raw.split(',').map((v) => v.trim());
  const unknown = values.filter((v) => !fallback.includes(v));
  if (unknown.length > 0) throw new Error(`${name}: unknown ${unknown.join(', ')}`);
  return values;
}

const journalOnly = flagFromEnv('BENCH_JOURNAL_ONLY');

export const CONFIG = {
  // Only the load rounds of (a), (b0), (a+j) and (a+r) and the journal's memory: the rest of the
  // report does not depend on the journal, and this part alone takes a few minutes.
  journalOnly,
  // A subset for quick runs (comparisons and targets need (a) and (b0)); always all in print.
  clients: listFromEnv(
    'BENCH_CLIENTS',
    journalOnly ? ['a', 'b0', 'aj', 'ar'] : CLIENT_KEYS,
  ) as ClientKey[],
  concurrencies: intListFromEnv('BENCH_CONCURRENCY', journalOnly ? [1, 64] : [1, 64, 512]),
  // (a+j) and (a+r) run in the same rounds as the others, at these of the concurrencies only: the
  // journal's questions are asked at 1 (latency) and 64 (the targets), and each concurrency more
  // adds a minute.
  journalConcurrencies: intListFromEnv('BENCH_JOURNAL_CONCURRENCY', [1, 64]),
  // Interleaved rounds, reported as medians and paired ratios. Each round has new processes, and
  // the same code in a new process lands tens of µs per call either way: with 8 rounds the median
  // CPU difference moved by ±13 µs from run to run (docs/performance.md, "Method").
  rounds: intFromEnv('BENCH_ROUNDS', 16),
  // Length of a measured run: calls start during this time, then the last ones are awaited.
  secondsPerRun: numberFromEnv('BENCH_SECONDS', 1.5),
  // A run is made of this many slices, interleaved with the other clients' slices of the round:
  // this VM's speed shifts by up to half for seconds at a time, so clients a few seconds apart
  // are not compared on the same machine (docs/performance.md, "Method").
  slicesPerRun: intFromEnv('BENCH_SLICES', 6),
  // Before every measured run: reopens the keep-alive pool at that concurrency (idle sockets
  // may have been closed while the other clients ran) without timing the connects.
  warmupCalls: intFromEnv('BENCH_WARMUP', 300),
  // Once per client process (every round has new ones), so V8 has optimised the call path.
  initialWarmupCalls: intFromEnv('BENCH_INITIAL_WARMUP', 6_000),
  sizeRounds: intFromEnv('BENCH_SIZE_ROUNDS', 4),
  sizeWarmupCalls: intFromEnv('BENCH_SIZE_WARMUP', 1_000),
  sizeConcurrency: intFromEnv('BENCH_SIZE_CONCURRENCY', 64),
  inflightCalls: intFromEnv('BENCH_INFLIGHT_CALLS', 5_000),
  heapCalls: intFromEnv('BENCH_HEAP_CALLS', 100_000),
  // The journal section starts its in-flight calls this many at a time, (a) as well: (a+r) writes
  // each entry to Redis within a 1 s command timeout, which 5,000 calls started at once outran.
  journalInflightBatch: intFromEnv('BENCH_JOURNAL_INFLIGHT_BATCH', 250),
  // Heap kept per call by (a+j) and (a+r): enough calls that per-entry bytes are read to a few
  // percent, few enough to stay far under the in-memory journal's bound of 100,000.
  journalHeapCalls: intFromEnv('BENCH_JOURNAL_HEAP_CALLS', 20_000),
  // The in-memory journal at its default bound: creates timed per repetition (journal.ts).
  journalCapEntries: intFromEnv('BENCH_JOURNAL_CAP_ENTRIES', 100_000),
  // Few: at the bound with nothing settled, one create took 16 ms before a4e7423
  // (docs/performance.md, "The journal's cost").
  journalCapCreates: intFromEnv('BENCH_JOURNAL_CAP_CREATES', 25),
  microIterations: intFromEnv('BENCH_MICRO_ITERATIONS', 50_000),
  startupRepetitions: intFromEnv('BENCH_STARTUP_REPS', 7),
};

export type BenchConfig = typeof CONFIG;

/** Issue 14's targets; all but the deadline's are read at this concurrency. */
export const TARGET_CONCURRENCY = 64;

export const TARGETS = {
  minThroughputRatioAB0: 0.95,
  // Issue item 6 ("Cost"): with the in-memory journal, (a)'s ratio to (b0) still holds.
  minThroughputRatioAJB0: 0.95,
  maxCpuOverheadUsPerCall: 10,
  maxInflightHeapOverB0Bytes: 1_024,
  maxHeapGrowthBytes: 1_000_000,
  maxDeadlineUsPerAttempt: 5,
};

/** Response sizes of the size runs, besides the real ~200-byte answer of the main rounds. */
export const RESPONSE_SIZES = { kb1: 1_024, kb100: 100 * 1_024 } as const;

/** From raw runs to the figures of the report: medians, paired ratios, targets. */
import type { ClientKey, JournalClientKey } from './clients';
import { TARGET_CONCURRENCY, TARGETS } from './config';
import type { LoadResult } from './load';
import type { HeapGrowthResult, InflightResult } from './memory';
import { median, paired, spread, type Spread } from './stats';

/** One measured run of one client, with the server's CPU over the same run for context. */
export interface RunMeasurement extends LoadResult {
  round: number;
  serverCpuUsPerCall: number;
  /** (a+r) only: redis-server's CPU over the same run, per call. */
  storeCpuUsPerCall?: number;
  /** (a+r) only: commands redis-server processed per call. */
  storeCommandsPerCall?: number;
}

/** A client's runs in round order: index i of two clients' lists is the same round. */
export type RunsByClient = Partial<Record<ClientKey, RunMeasurement[]>>;

export interface ClientSummary {
  rounds: number;
  callsPerRun: number;
  callsPerSecond: Spread;
  cpuUsPerCall: Spread;
  p50Ms: number;
  p99Ms: number;
  eventLoopUtilization: number;
  serverCpuUsPerCall: number;
  storeCpuUsPerCall?: number;
  storeCommandsPerCall?: number;
}

export function summarise(runs: readonly RunMeasurement[]): ClientSummary {
  const of = (pick: (r: RunMeasurement) => number) => median(runs.map(pick));
  const store = runs.flatMap((r) =>
    r.storeCpuUsPerCall === undefined || r.storeCommandsPerCall === undefined
      ? []
      : [{ cpu: r.storeCpuUsPerCall, commands: r.storeCommandsPerCall }],
  );
  return {
    ...(store.length === 0
      ? {}
      : {
          storeCpuUsPerCall: median(store.map((s) => s.cpu)),
          storeCommandsPerCall: median(store.map((s) => s.commands)),
        }),
    rounds: runs.length,
    callsPerRun: of((r) => r.calls),
    callsPerSecond: spread(runs.map((r) => r.callsPerSecond)),
    cpuUsPerCall: spread(runs.map((r) => r.cpuUsPerCall)),
    p50Ms: of((r) => r.p50Ms),
    p99Ms: of((r) => r.p99Ms),
    eventLoopUtilization: of((r) => r.eventLoopUtilization),
    serverCpuUsPerCall: of((r) => r.serverCpuUsPerCall),
  };
}

/** Comparisons of (a) within each round, so that drift of a shared machine cancels out. */
export interface PairedComparison {
  /** Throughput ratios (a)/(x). */
  throughput: Partial<Record<'b0' | 'b0d' | 'b' | 'c' | 'd', Spread>>;
  /** CPU µs/call (a) − (b0): the library's own cost per call. */
  cpuOverAB0Us: Spread | undefined;
  /**
   * CPU µs/call (a) − (b0+d): against the library's own axios configuration, deadline included,
   * without its hooks and layers (the strictest baseline).
   */
  cpuOverAB0dUs: Spread | undefined;
  /** CPU µs/call (b0+d) − (b0): the per-attempt deadline, in place of axios's timeout, under load. */
  deadlineUnderLoadUs: Spread | undefined;
  /** (a+j) and (a+r) against (a) and (b0), in the rounds where they ran. */
  journal: Partial<Record<JournalClientKey, JournalComparison>>;
}

/** A journaled client against (a), the same library without a journal, and (b0), per round. */
export interface JournalComparison {
  /** Throughput ratio (x)/(b0): for (a+j), issue item 6's target. */
  throughputOverB0: Spread;
  /** (a)/(b0) in the same rounds, to read the one above against. */
  aOverB0: Spread;
  /** Throughput ratio (x)/(a). */
  throughputOverA: Spread;
  /** CPU µs/call (x) − (a), in the client's process: the journal's own work there. */
  cpuOverAUs: Spread;
  /** Latency (x) − (a), ms: of the runs' p50 and p99, each run's calls pooled over its slices. */
  p50OverAMs: Spread;
  p99OverAMs: Spread;
}

export function compare(runs: RunsByClient): PairedComparison {
  const throughput = (key: ClientKey) => runs[key]?.map((r) => r.callsPerSecond) ?? [];
  const cpu = (key: ClientKey) => runs[key]?.map((r) => r.cpuUsPerCall) ?? [];
  const ratio = (key: 'b0' | 'b0d' | 'b' | 'c' | 'd') =>
    runs.a && runs[key] ? paired(throughput('a'), throughput(key), (x, y) => x / y) : undefined;
  const difference = (x: ClientKey, y: ClientKey) =>
    runs[x] && runs[y] ? paired(cpu(x), cpu(y), (p, q) => p - q) : undefined;
  const ratios: PairedComparison['throughput'] = {};
  for (const key of ['b0', 'b0d', 'b', 'c', 'd'] as const) {
    const value = ratio(key);
    if (value !== undefined) ratios[key] = value;
  }
  const journal: PairedComparison['journal'] = {};
  const a = runs.a;
  const b0 = runs.b0;
  const by =
    (pick: (r: RunMeasurement) => number, combine: (p: number, q: number) => number) =>
    (x: readonly RunMeasurement[], y: readonly RunMeasurement[]) =>
      paired(x.map(pick), y.map(pick), combine);
  const throughputRatio = by(
    (r) => r.callsPerSecond,
    (p, q) => p / q,
  );
  const minus = (pick: (r: RunMeasurement) => number) => by(pick, (p, q) => p - q);
  for (const key of ['aj', 'ar'] as const) {
    const x = runs[key];
    if (x === undefined || a === undefined || b0 === undefined) continue;
    journal[key] = {
      throughputOverB0: throughputRatio(x, b0),
      aOverB0: throughputRatio(a, b0),
      throughputOverA: throughputRatio(x, a),
      cpuOverAUs: minus((r) => r.cpuUsPerCall)(x, a),
      p50OverAMs: minus((r) => r.p50Ms)(x, a),
      p99OverAMs: minus((r) => r.p99Ms)(x, a),
    };
  }
  return {
    throughput: ratios,
    cpuOverAB0Us: difference('a', 'b0'),
    cpuOverAB0dUs: difference('a', 'b0d'),
    deadlineUnderLoadUs: difference('b0d', 'b0'),
    journal,
  };
}

export interface Target {
  description: string;
  measured: number;
  unit: string;
  pass: boolean;
}

export interface TargetInputs {
  comparisons: Record<number, PairedComparison>;
  /** The memory and micro-benchmark sections; absent when only the journal section ran. */
  memory?: {
    inflight: Partial<Record<ClientKey, InflightResult>>;
    heapGrowth: HeapGrowthResult | undefined;
    deadlineUsPerAttempt: number;
  };
  /** Whether (a+j) was asked for: its target is then reported, as a MISS if it did not run. */
  journal: boolean;
}

/**
 * Issue 14's targets and the journal's; a target that could not be measured is reported as a
 * MISS (NaN). Those of sections that were not run (BENCH_JOURNAL_ONLY) are left out.
 */
export function evaluateTargets(inputs: TargetInputs): Target[] {
  const at = inputs.comparisons[TARGET_CONCURRENCY];
  const ratio = at?.throughput.b0?.median ?? Number.NaN;
  const overhead = at?.cpuOverAB0Us?.median ?? Number.NaN;
  const journalRatio = at?.journal.aj?.throughputOverB0.median ?? Number.NaN;
  const targets: Target[] = [
    {
      description: `throughput (a)/(b0) at concurrency ${TARGET_CONCURRENCY} >= ${TARGETS.minThroughputRatioAB0}`,
      measured: ratio,
      unit: '',
      pass: ratio >= TARGETS.minThroughputRatioAB0,
    },
    {
      description: `CPU (a) − (b0) at concurrency ${TARGET_CONCURRENCY} <= ${TARGETS.maxCpuOverheadUsPerCall} µs/call`,
      measured: overhead,
      unit: 'µs',
      pass: overhead <= TARGETS.maxCpuOverheadUsPerCall,
    },
  ];
  if (inputs.journal) {
    targets.push({
      description: `throughput (a+j)/(b0) at concurrency ${TARGET_CONCURRENCY} >= ${TARGETS.minThroughputRatioAJB0} (in-memory journal)`,
      measured: journalRatio,
      unit: '',
      pass: journalRatio >= TARGETS.minThroughputRatioAJB0,
    });
  }
  if (inputs.memory === undefined) return targets;
  const { inflight, heapGrowth, deadlineUsPerAttempt } = inputs.memory;
  const inflightOver =
    (inflight.a?.heapBytesPerCall ?? Number.NaN) - (inflight.b0?.heapBytesPerCall ?? Number.NaN);
  const growth = heapGrowth?.heapGrowthBytes ?? Number.NaN;
  const calls = heapGrowth?.calls ?? 0;
  targets.push(
    {
      description: `heap per in-flight call (a) − (b0) <= ${TARGETS.maxInflightHeapOverB0Bytes} bytes`,
      measured: inflightOver,
      unit: 'B',
      pass: inflightOver <= TARGETS.maxInflightHeapOverB0Bytes,
    },
    {
      description: `heap growth after ${calls.toLocaleString('en-US')} calls through (a) < ${TARGETS.maxHeapGrowthBytes / 1e6} MB`,
      measured: growth / 1e6,
      unit: 'MB',
      pass: growth < TARGETS.maxHeapGrowthBytes,
    },
    {
      description: `per-attempt deadline <= ${TARGETS.maxDeadlineUsPerAttempt} µs`,
      measured: deadlineUsPerAttempt,
      unit: 'µs',
      pass: deadlineUsPerAttempt <= TARGETS.maxDeadlineUsPerAttempt,
    },
  );
  return targets;
}

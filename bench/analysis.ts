/** From raw runs to the figures of the report: medians, paired ratios, targets. */
import type { ClientKey } from './clients';
import { TARGET_CONCURRENCY, TARGETS } from './config';
import type { LoadResult } from './load';
import type { HeapGrowthResult, InflightResult } from './memory';
import { median, paired, spread, type Spread } from './stats';

/** One measured run of one client, with the server's CPU over the same run for context. */
export interface RunMeasurement extends LoadResult {
  round: number;
  serverCpuUsPerCall: number;
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
}

export function summarise(runs: readonly RunMeasurement[]): ClientSummary {
  const of = (pick: (r: RunMeasurement) => number) => median(runs.map(pick));
  return {
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
  return {
    throughput: ratios,
    cpuOverAB0Us: difference('a', 'b0'),
    cpuOverAB0dUs: difference('a', 'b0d'),
    deadlineUnderLoadUs: difference('b0d', 'b0'),
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
  inflight: Partial<Record<ClientKey, InflightResult>>;
  heapGrowth: HeapGrowthResult | undefined;
  deadlineUsPerAttempt: number;
}

/** Issue 14's targets; a target that could not be measured is reported as a MISS (NaN). */
export function evaluateTargets(inputs: TargetInputs): Target[] {
  const at = inputs.comparisons[TARGET_CONCURRENCY];
  const ratio = at?.throughput.b0?.median ?? Number.NaN;
  const overhead = at?.cpuOverAB0Us?.median ?? Number.NaN;
  const inflightOver =
    (inputs.inflight.a?.heapBytesPerCall ?? Number.NaN) -
    (inputs.inflight.b0?.heapBytesPerCall ?? Number.NaN);
  const growth = inputs.heapGrowth?.heapGrowthBytes ?? Number.NaN;
  const calls = inputs.heapGrowth?.calls ?? 0;
  return [
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
      measured: inputs.deadlineUsPerAttempt,
      unit: 'µs',
      pass: inputs.deadlineUsPerAttempt <= TARGETS.maxDeadlineUsPerAttempt,
    },
  ];
}

import { performance } from 'node:perf_hooks';
import * as v8 from 'node:v8';
import * as vm from 'node:vm';
import { percentile } from './stats';

/** One client call; it must reject when the response is not the expected record. */
export type Call = () => Promise<unknown>;

export interface LoadResult {
  calls: number;
  concurrency: number;
  elapsedMs: number;
  callsPerSecond: number;
  p50Ms: number;
  p99Ms: number;
  /** Client-process CPU (user + system) per call. The server runs in another process. */
  cpuUsPerCall: number;
  /** Share of the run the client's event loop was busy; near 1 means the client is the bottleneck. */
  eventLoopUtilization: number;
  /** Every call's latency in ms, ascending: timed runs only, so that slices can be combined. */
  latenciesMs?: number[];
}

/** Latencies in ms, in a typed array grown by doubling: recording one rarely allocates. */
class Latencies {
  private values: Float64Array;
  length = 0;

  constructor(capacity: number) {
    this.values = new Float64Array(Math.max(1, capacity));
  }

  push(ms: number): void {
    if (this.length === this.values.length) {
      const grown = new Float64Array(this.values.length * 2);
      grown.set(this.values);
      this.values = grown;
    }
    this.values[this.length++] = ms;
  }

  sorted(): Float64Array {
    return this.values.subarray(0, this.length).sort();
  }
}

/**
 * Calls `call` with at most `concurrency` in flight (closed loop: each worker starts its next
 * call when the previous one settles) while `more(started)` allows another call, `started`
 * being the calls started so far; times each call and the whole run.
 */
async function drive(
  call: Call,
  concurrency: number,
  expectedCalls: number,
  more: (started: number) => boolean,
  keepLatencies: boolean,
): Promise<LoadResult> {
  const latencies = new Latencies(expectedCalls);
  let started = 0;
  const worker = async (): Promise<void> => {
    while (more(started)) {
      started++;
      const callStarted = performance.now();
      await call();
      latencies.push(performance.now() - callStarted);
    }
  };
  const eluStart = performance.eventLoopUtilization();
  const cpuStart = process.cpuUsage();
  const runStarted = performance.now();
  await Promise.all(Array.from({ length: concurrency }, worker));
  const elapsedMs = performance.now() - runStarted;
  const cpu = process.cpuUsage(cpuStart);
  const elu = performance.eventLoopUtilization(eluStart);
  const sorted = latencies.sorted();
  const calls = sorted.length;
  return {
    calls,
    concurrency,
    elapsedMs,
    callsPerSecond: calls / (elapsedMs / 1000),
    p50Ms: percentile(sorted, 50),
    p99Ms: percentile(sorted, 99),
    cpuUsPerCall: (cpu.user + cpu.system) / calls,
    eventLoopUtilization: elu.utilization,
    ...(keepLatencies ? { latenciesMs: Array.from(sorted) } : {}),
  };
}

/** Exactly `calls` calls at `concurrency`. */
export function runLoad(call: Call, calls: number, concurrency: number): Promise<LoadResult> {
  return drive(call, Math.min(concurrency, calls), calls, (started) => started < calls, false);
}

/**
 * Calls started during `seconds` at `concurrency`, then the last ones awaited: a run lasts as
 * long on a fast client as on a slow one, however wrong a guess of its rate would have been.
 * Answers with every latency, so that the parent can combine slices of one run.
 */
export function runLoadFor(call: Call, seconds: number, concurrency: number): Promise<LoadResult> {
  const deadline = performance.now() + seconds * 1000;
  return drive(call, concurrency, 16_384, () => performance.now() < deadline, true);
}

/**
 * V8's `gc()`: `global.gc` under `--expose-gc`; otherwise the flag is enabled at run time, so the
 * benchmark also works when started without it.
 */
export function gcFunction(): NodeJS.GCFunction {
  if (globalThis.gc !== undefined) return globalThis.gc;
  v8.setFlagsFromString('--expose-gc');
  return vm.runInNewContext('gc') as NodeJS.GCFunction;
}

/** A full, forced garbage collection. */
export function forceGc(): void {
  const gc = gcFunction();
  // Twice: objects with finalizers or weak references are only freed by a second pass.
  gc();
  gc();
}

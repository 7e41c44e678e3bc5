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
}

/**
 * Runs `calls` calls with at most `concurrency` in flight (closed loop: each worker starts its next
 * call when the previous one settles), timing each call and the whole run.
 */
export async function runLoad(call: Call, calls: number, concurrency: number): Promise<LoadResult> {
  // Preallocated so recording a latency allocates nothing during the run.
  const latencies = new Float64Array(calls);
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < calls) {
      const index = next++;
      const started = performance.now();
      await call();
      latencies[index] = performance.now() - started;
    }
  };
  const eluStart = performance.eventLoopUtilization();
  const cpuStart = process.cpuUsage();
  const started = performance.now();
  await Promise.all(Array.from({ length: Math.min(concurrency, calls) }, worker));
  const elapsedMs = performance.now() - started;
  const cpu = process.cpuUsage(cpuStart);
  const elu = performance.eventLoopUtilization(eluStart);
  latencies.sort();
  return {
    calls,
    concurrency,
    elapsedMs,
    callsPerSecond: calls / (elapsedMs / 1000),
    p50Ms: percentile(latencies, 50),
    p99Ms: percentile(latencies, 99),
    cpuUsPerCall: (cpu.user + cpu.system) / calls,
    eventLoopUtilization: elu.utilization,
  };
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

import { EventEmitter } from 'node:events';
import type * as http from 'node:http';
import { performance } from 'node:perf_hooks';
import * as v8 from 'node:v8';
import {
  armDeadline,
  encodeRequest,
  OPERATION_CASES,
  OPERATIONS,
  prepareRequest,
  type PaymentsDefaults,
  type PaymentsOperation,
} from './library-internals';
import { gcFunction } from './load';
import { median } from './stats';

/** Encoding context of a benchmarked call: a fixed key, correlation on as by default. */
const CONTEXT = { idempotencyKey: 'bench-key', correlate: true };

/** What a client built with default options passes to every call. */
const DEFAULTS: PaymentsDefaults = {
  username: undefined,
  callbackUrl: undefined,
  walletType: 'local',
};

export interface MicroResult {
  operation: string;
  iterations: number;
  /** `prepareRequest` + `encodeRequest`: everything the library does before the HTTP call. */
  usPerCall: number;
  /** Bytes allocated by `prepareRequest` + `encodeRequest`, all of it garbage once the call is sent. */
  bytesPerCall: number;
  /** `encodeRequest` alone, on an already validated request. */
  wireUsPerCall: number;
}

function findOperation(name: string): PaymentsOperation<object, unknown> {
  const operation = Object.values(OPERATIONS).find((candidate) => candidate.name === name);
  if (operation === undefined) throw new Error(`no operation ${name}`);
  return operation as PaymentsOperation<object, unknown>;
}

/** Wall-clock µs per iteration of `body`, after a warm-up that lets V8 optimise it. */
function time(iterations: number, body: () => number): number {
  let sink = 0;
  for (let i = 0; i < Math.min(5_000, iterations); i++) sink += body();
  const started = performance.now();
  for (let i = 0; i < iterations; i++) sink += body();
  const elapsedMs = performance.now() - started;
  // The sink makes the result observable, so V8 cannot drop the work as dead code.
  if (sink < 0) throw new Error('unreachable');
  return (elapsedMs * 1000) / iterations;
}

/** Bytes in use in every heap space: objects V8 pretenures go straight to old space. */
function heapUsed(): number {
  return v8.getHeapSpaceStatistics().reduce((sum, space) => sum + space.space_used_size, 0);
}

/**
 * Bytes allocated per iteration: growth of the heap over small batches that start right after a
 * scavenge. A batch during which any GC ran (V8's GC profiler says) is discarded, since the
 * collection freed some of what it allocated.
 */
function bytesAllocated(body: () => number): number {
  const gc = gcFunction();
  const batch = 20;
  const samples: number[] = [];
  for (let round = 0; round < 60; round++) {
    gc({ type: 'minor' });
    const profiler = new v8.GCProfiler();
    profiler.start();
    const before = heapUsed();
    for (let i = 0; i < batch; i++) body();
    const grown = heapUsed() - before;
    if (profiler.stop().statistics.length === 0) samples.push(grown / batch);
  }
  return samples.length > 0 ? median(samples) : Number.NaN;
}

/** Validation and wire mapping alone, per operation, with no I/O. */
export function runMicro(iterations: number): MicroResult[] {
  return OPERATION_CASES.map((testCase) => {
    const operation = findOperation(testCase.operation);
    const prepareAndMap = () => {
      const prepared = prepareRequest(operation, testCase.request, DEFAULTS);
      return Object.keys(encodeRequest(operation, prepared, CONTEXT).body ?? {}).length;
    };
    const usPerCall = time(iterations, prepareAndMap);
    const prepared = prepareRequest(operation, testCase.request, DEFAULTS);
    const wireUsPerCall = time(
      iterations,
      () => Object.keys(encodeRequest(operation, prepared, CONTEXT).body ?? {}).length,
    );
    return {
      operation: testCase.operation,
      iterations,
      usPerCall,
      bytesPerCall: bytesAllocated(prepareAndMap),
      wireUsPerCall,
    };
  });
}

/**
 * What the per-attempt deadline adds to an attempt, isolated from the network: the timer, its
 * close listener and their clearing, on an emitter standing in for the `ClientRequest`
 * (http-payments-wire.ts, `armDeadline`, run as is). The same loop without them is subtracted.
 */
export interface DeadlineMicroResult {
  usPerAttempt: number;
  /** Each of the rounds the median is taken from. */
  rounds: number[];
}

export function runDeadlineMicro(iterations: number): DeadlineMicroResult {
  const withDeadline = () => {
    const request = new EventEmitter();
    armDeadline(request as http.ClientRequest, 30_000);
    request.emit('close');
    return 1;
  };
  const without = () => {
    const request = new EventEmitter();
    request.emit('close');
    return 1;
  };
  const samples: number[] = [];
  for (let round = 0; round < 5; round++) {
    samples.push(time(iterations, withDeadline) - time(iterations, without));
  }
  return { usPerAttempt: median(samples), rounds: samples };
}

import { randomUUID } from 'node:crypto';
import { EventEmitter } from 'node:events';
import * as http from 'node:http';
import { performance } from 'node:perf_hooks';
import * as v8 from 'node:v8';
import type { AxiosAdapter } from 'axios';
import {
  API_PASSWORD,
  API_USERNAME,
  createConfiguredAxios,
  MPESA_REQUEST,
  MPESA_WIRE_BODY,
  PATH,
} from './clients';
import {
  armDeadline,
  createPaymentsHttpService,
  encodeRequest,
  HttpPaymentsWire,
  OPERATION_CASES,
  OperationRunner,
  OPERATIONS,
  prepareRequest,
  resolvePaymentsOptions,
  type PaymentsDefaults,
  type PaymentsOperation,
} from './library-internals';
import { gcFunction } from './load';
import { isBenchReference, RESPONSE_RECORD } from './server-api';
import { median, spread, type Spread } from './stats';

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

/**
 * One whole call with the network taken out: both sides get an axios adapter that answers at once
 * with the real answer. (a) is the library's `OperationRunner` on its own axios instance
 * (validation, encoding, the wire with its hooks and axios-retry, decoding, redaction); (b0) is
 * the (b0) instance's `request` plus `JSON.parse`. CPU µs per call at concurrency 64, in paired
 * rounds: what the library's own code costs, apart from what load on real sockets adds to it.
 */
export interface WholeCallMicroResult {
  callsPerRound: number;
  libraryUsPerCall: number;
  axiosUsPerCall: number;
  /** Per round, (a) − (b0). */
  overheadUs: Spread;
}

export async function runWholeCallMicro(callsPerRound: number): Promise<WholeCallMicroResult> {
  const baseUrl = 'http://127.0.0.1:9';
  const answer = JSON.stringify(RESPONSE_RECORD);
  const answerAtOnce: AxiosAdapter = (config) =>
    Promise.resolve({ data: answer, status: 200, statusText: 'OK', headers: {}, config });
  const options = resolvePaymentsOptions({
    apiUsername: API_USERNAME,
    apiPassword: API_PASSWORD,
    baseUrl,
  });
  const libraryHttp = createPaymentsHttpService(options);
  libraryHttp.axiosRef.defaults.adapter = answerAtOnce;
  const runner = new OperationRunner(new HttpPaymentsWire(libraryHttp, options), options);
  const agent = new http.Agent({ keepAlive: true });
  const axiosB0 = await createConfiguredAxios(baseUrl, false, agent);
  axiosB0.defaults.adapter = answerAtOnce;

  const library = async () => {
    const response = await runner.execute(OPERATIONS.collectionsMpesa, MPESA_REQUEST);
    if (!isBenchReference(response.transactionReference)) throw new Error('(a): bad answer');
  };
  const baseline = async () => {
    const response = await axiosB0.request<string>({
      method: 'POST',
      url: PATH,
      data: MPESA_WIRE_BODY,
      headers: { 'Idempotency-Key': randomUUID() },
    });
    const record = JSON.parse(response.data) as { transaction_reference?: unknown };
    if (!isBenchReference(record.transaction_reference)) throw new Error('(b0): bad answer');
  };
  const cpuPerCall = async (call: () => Promise<void>) => {
    const started = process.cpuUsage();
    for (let done = 0; done < callsPerRound; done += 64) {
      await Promise.all(Array.from({ length: 64 }, call));
    }
    const used = process.cpuUsage(started);
    return (used.user + used.system) / callsPerRound;
  };
  await cpuPerCall(library);
  await cpuPerCall(baseline);
  const libraryRounds: number[] = [];
  const axiosRounds: number[] = [];
  for (let round = 0; round < 8; round++) {
    // Alternating which goes first, so drift of the machine hits both alike.
    if (round % 2 === 0) {
      libraryRounds.push(await cpuPerCall(library));
      axiosRounds.push(await cpuPerCall(baseline));
    } else {
      axiosRounds.push(await cpuPerCall(baseline));
      libraryRounds.push(await cpuPerCall(library));
    }
  }
  await runner.close();
  agent.destroy();
  return {
    callsPerRound,
    libraryUsPerCall: median(libraryRounds),
    axiosUsPerCall: median(axiosRounds),
    overheadUs: spread(libraryRounds.map((value, round) => value - axiosRounds[round])),
  };
}

/**
 * Attribution of the module's CPU overhead, (a) − (b): the same call built up one library layer
 * at a time, each layer's cost being the difference to the previous row. Optional, not part of
 * `npm run bench`; see docs/performance.md. The layers mirror OperationRunner as of commit
 * 132fb8e (the axios instance called through its promise API); when the library changes, the last
 * row still measures the whole of it.
 */
import { randomUUID } from 'node:crypto';
import * as http from 'node:http';
import axios, { type AxiosRequestConfig } from 'axios';
import {
  API_PASSWORD,
  API_USERNAME,
  createClient,
  MPESA_REQUEST,
  MPESA_WIRE_BODY,
  PATH,
} from './clients';
import {
  createPaymentsHttpService,
  encodeRequest,
  OPERATIONS,
  prepareRequest,
  resolvePaymentsOptions,
  toDefaults,
} from './library-internals';
import { forceGc, runLoad, type Call } from './load';
import { backgroundMeter } from './machine';
import { startServer } from './server-process';
import { median } from './stats';

/** Encoding context of a benchmarked call: a fixed key, correlation on as by default. */
const CONTEXT = { idempotencyKey: 'bench-key', correlate: true };

const CALLS = Number(process.env.BENCH_CALLS ?? 10_000);
// Short rounds, many of them, in rotating order: drift of the machine hits every step alike.
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 8);
const CONCURRENCY = 64;

function check(text: unknown): void {
  const record = JSON.parse(String(text)) as { transaction_reference?: unknown };
  if (record.transaction_reference !== 'TX-1') throw new Error('unexpected response');
}

async function main(): Promise<void> {
  const server = await startServer();
  const baseUrl = `http://127.0.0.1:${server.ports.standard}`;
  const options = resolvePaymentsOptions({
    apiUsername: API_USERNAME,
    apiPassword: API_PASSWORD,
    baseUrl,
  });
  const libraryHttp = createPaymentsHttpService(options);
  // The library's axios configuration without its interceptors, to price them.
  const bareInstance = axios.create({
    ...libraryHttp.axiosRef.defaults,
    httpAgent: new http.Agent({ keepAlive: true }),
  });
  const nest = await createClient('a', server.ports.standard);
  const baseline = await createClient('b', server.ports.standard);
  const headers = (): AxiosRequestConfig => ({ headers: { 'Idempotency-Key': randomUUID() } });
  const operation = OPERATIONS.collectionsMpesa;
  const defaults = toDefaults(options);
  const validatedBody = () => {
    const prepared = prepareRequest(operation, MPESA_REQUEST, defaults);
    return encodeRequest(operation, prepared, CONTEXT).body ?? {};
  };

  const steps: [string, Call][] = [
    ['(b) axios.post, default config', baseline.call],
    [
      'library axios config, no interceptors',
      async () => check((await bareInstance.post<string>(PATH, MPESA_WIRE_BODY, headers())).data),
    ],
    [
      '+ library interceptors (axios-retry, hooks)',
      async () =>
        check((await libraryHttp.axiosRef.post<string>(PATH, MPESA_WIRE_BODY, headers())).data),
    ],
    [
      '+ prepareRequest + toWireBody',
      async () =>
        check((await libraryHttp.axiosRef.post<string>(PATH, validatedBody(), headers())).data),
    ],
    ['(a) the library: + the rest of execute()', nest.call],
  ];

  const background = backgroundMeter([process.pid, server.child.pid ?? 0]);
  const cpu = new Map<string, number[]>(steps.map(([name]) => [name, []]));
  for (const [, call] of steps) await runLoad(call, 2_000, CONCURRENCY);
  for (let round = 0; round < ROUNDS; round++) {
    for (let i = 0; i < steps.length; i++) {
      const [name, call] = steps[(round + i) % steps.length];
      forceGc();
      cpu.get(name)?.push((await runLoad(call, CALLS, CONCURRENCY)).cpuUsPerCall);
    }
  }
  const otherProcessesPercent = background.stop();

  console.log(
    `CPU µs/call, median of ${ROUNDS} x ${CALLS} calls; step = median of per-round differences to the row above; ` +
      `other processes ${otherProcessesPercent ?? '?'}% of the machine`,
  );
  let previous: number[] | undefined;
  for (const [name] of steps) {
    const values = cpu.get(name) ?? [];
    const before = previous;
    // Paired by round, so drift between rounds cancels out of the step.
    const step =
      before === undefined ? undefined : median(values.map((value, r) => value - before[r]));
    const shown = step === undefined ? '' : `${step >= 0 ? '+' : ''}${step.toFixed(1)}`;
    console.log(`${name.padEnd(46)} ${median(values).toFixed(1).padStart(7)} ${shown.padStart(7)}`);
    previous = values;
  }
  await nest.close();
  await baseline.close();
  server.stop();
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});

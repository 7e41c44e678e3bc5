/**
 * Attribution of the module's CPU overhead, (a) − (b0): the same call built up one library layer
 * at a time, each layer's cost being the difference to the previous row. Optional, not part of
 * `npm run bench`; see docs/performance.md. All rows run in this one process, so they share its
 * heap and its garbage collections: read the steps, not the totals, and confirm with
 * `npm run bench`, where each client has a process of its own.
 */
import { randomUUID } from 'node:crypto';
import * as http from 'node:http';
import {
  API_PASSWORD,
  API_USERNAME,
  createClient,
  createConfiguredAxios,
  MPESA_REQUEST,
  PATH,
} from './clients';
import {
  createPaymentsHttpService,
  encodeRequest,
  HttpPaymentsWire,
  OperationRunner,
  OPERATIONS,
  prepareRequest,
  resolvePaymentsOptions,
  toDefaults,
} from './library-internals';
import { forceGc, runLoad, type Call } from './load';
import { backgroundMeter } from './machine';
import { startServer } from './server-process';
import { median } from './stats';

const CALLS = Number(process.env.BENCH_CALLS ?? 10_000);
// Short rounds, many of them, in rotating order: drift of the machine hits every step alike.
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 8);
const CONCURRENCY = 64;

function check(text: unknown): void {
  const record = JSON.parse(String(text)) as { transaction_reference?: unknown };
  if (!/^TX-\d{10}$/.test(String(record.transaction_reference)))
    throw new Error('unexpected response');
}

async function main(): Promise<void> {
  const server = await startServer();
  const baseUrl = `http://127.0.0.1:${server.ports.standard}`;
  const options = resolvePaymentsOptions({
    apiUsername: API_USERNAME,
    apiPassword: API_PASSWORD,
    baseUrl,
  });
  const operation = OPERATIONS.collectionsMpesa;
  const defaults = toDefaults(options);
  const encode = () =>
    encodeRequest(operation, prepareRequest(operation, MPESA_REQUEST, defaults), {
      idempotencyKey: 'bench-key',
      correlate: true,
    });
  const wireBody = encode().body;
  const libraryHttp = createPaymentsHttpService(options);
  // (b0) and (b0+d) exactly as `npm run bench` builds them.
  const bareInstance = await createConfiguredAxios(
    baseUrl,
    false,
    new http.Agent({ keepAlive: true }),
  );
  const withTransport = await createConfiguredAxios(
    baseUrl,
    true,
    new http.Agent({ keepAlive: true }),
  );
  const wire = new HttpPaymentsWire(createPaymentsHttpService(options), options);
  const runner = new OperationRunner(
    new HttpPaymentsWire(createPaymentsHttpService(options), options),
    options,
  );
  const nest = await createClient('a', server.ports.standard);
  const post = (instance: typeof bareInstance) => async () =>
    check(
      (
        await instance.request<string>({
          method: 'POST',
          url: PATH,
          data: wireBody,
          headers: { 'Idempotency-Key': randomUUID() },
        })
      ).data,
    );

  const steps: [string, Call][] = [
    ['(b0) axios like the library, axios timeout', post(bareInstance)],
    ['(b0+d) deadline transport for the timeout', post(withTransport)],
    ['+ retry and call hooks (library instance)', post(libraryHttp.axiosRef)],
    [
      '+ HttpPaymentsWire.send, encoded once',
      async () => {
        const request = encode();
        check(
          (await wire.send({ operation: operation.name, request, idempotencyKey: randomUUID() }))
            .text,
        );
      },
    ],
    ['+ validate, encode, decode: OperationRunner', () => runner.execute(operation, MPESA_REQUEST)],
    ['(a) CollectionsService from Nest', nest.call],
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
  await wire.close();
  await runner.close();
  server.stop();
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});

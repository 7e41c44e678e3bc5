import { Session } from 'node:inspector/promises';
import { relative } from 'node:path';
import { OPERATION_CASES, successBody } from '../spec-support/operation-cases';
import { RecordingServer } from '../spec-support/recording-server';
import type * as ClientModule from './create-payments-client';
import type { createPaymentsClient } from './create-payments-client';

/** Coverage of every script since the last take (which resets the counts). */
async function coverage(session: Session) {
  const { result } = await session.post('Profiler.takePreciseCoverage');
  return result;
}

/**
 * The library files, among `scripts`, in which code ran (a function called at least once) since
 * the last take.
 */
async function filesThatRan(session: Session, scripts: ReadonlySet<string>): Promise<string[]> {
  return (await coverage(session))
    .filter(({ scriptId }) => scripts.has(scriptId))
    .filter(({ url }) => url.includes('/libs/payments/src/') && !url.endsWith('.spec.ts'))
    .filter(({ functions }) =>
      functions.some((fn) => fn.functionName !== '' && fn.ranges[0].count > 0),
    )
    .map(({ url }) => relative(__dirname, url.replace(/^file:\/\//, '')))
    .sort();
}

/**
 * The files one `payouts.mpesa` call runs code in, after a first call (setup is not the walk), of
 * the client `load` makes. Only the scripts `load` compiled count: the modules of test files that
 * ran before in this jest worker are other scripts of the same files, and their timers (a
 * journal's retry of a write, say) may fire during the walk.
 */
async function walkOfOnePayout(load: () => typeof createPaymentsClient): Promise<string[]> {
  const server = await RecordingServer.start();
  server.fallback = () => ({ status: 200, body: successBody('payout') });
  const session = new Session();
  session.connect();
  let client: ReturnType<typeof createPaymentsClient> | undefined;
  try {
    await session.post('Profiler.enable');
    await session.post('Profiler.startPreciseCoverage', { callCount: true, detailed: false });
    const before = new Set((await coverage(session)).map(({ scriptId }) => scriptId));
    const create = load();
    const loaded = (await coverage(session)).map(({ scriptId }) => scriptId);
    const scripts = new Set(loaded.filter((scriptId) => !before.has(scriptId)));
    client = create({ apiUsername: 'u', apiPassword: 'walk-secret', baseUrl: server.url });
    const request = OPERATION_CASES[3].request;
    await client.payouts.mpesa(request);
    await filesThatRan(session, scripts);
    await client.payouts.mpesa(request);
    return await filesThatRan(session, scripts);
  } finally {
    await session.post('Profiler.stopPreciseCoverage').catch(() => undefined);
    session.disconnect();
    await client?.close();
    await server.close();
  }
}

/**
 * The walk of docs/architecture.md: service → runner → rules (and the amount's decimals) → wire
 * mapping (and the answer's reference as a path segment) → HTTP, + redaction.
 */
const WALK = [
  'http-payments-wire.ts',
  'money.ts',
  'operation-runner.ts',
  'path-segment.ts',
  'payouts.service.ts',
  'request-rules.ts',
  'secret-redactor.ts',
  'wire.ts',
];

describe('the walk of one payouts.mpesa call (docs/architecture.md)', () => {
  it('runs code in eight library files when @opentelemetry/api is not installed', async () => {
    expect(OPERATION_CASES[3].operation).toBe('payouts.mpesa');
    const walk = await walkOfOnePayout(() => {
      let create: typeof createPaymentsClient | undefined;
      jest.isolateModules(() => {
        jest.doMock('@opentelemetry/api', () => {
          throw new Error("Cannot find module '@opentelemetry/api'");
        });
        ({ createPaymentsClient: create } = jest.requireActual<typeof ClientModule>(
          './create-payments-client',
        ));
      });
      return create!;
    });
    expect(walk).toEqual(WALK);
  });

  it('and in the telemetry hook as well when it is (no SDK: nothing is recorded)', async () => {
    const walk = await walkOfOnePayout(() => {
      let create: typeof createPaymentsClient | undefined;
      jest.isolateModules(() => {
        jest.dontMock('@opentelemetry/api');
        ({ createPaymentsClient: create } = jest.requireActual<typeof ClientModule>(
          './create-payments-client',
        ));
      });
      return create!;
    });
    expect(walk).toEqual([...WALK, 'payments-telemetry.ts'].sort());
  });
});

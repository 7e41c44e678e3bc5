import { Session } from 'node:inspector/promises';
import { relative } from 'node:path';
import { OPERATION_CASES, successBody } from '../spec-support/operation-cases';
import { RecordingServer } from '../spec-support/recording-server';
import { createPaymentsClient } from './create-payments-client';

/** The library files in which code ran (a function called at least once) since the last take. */
async function filesThatRan(session: Session): Promise<string[]> {
  const { result } = await session.post('Profiler.takePreciseCoverage');
  return result
    .filter(({ url }) => url.includes('/libs/payments/src/') && !url.endsWith('.spec.ts'))
    .filter(({ functions }) =>
      functions.some((fn) => fn.functionName !== '' && fn.ranges[0].count > 0),
    )
    .map(({ url }) => relative(__dirname, url.replace(/^file:\/\//, '')))
    .sort();
}

describe('the walk of one payouts.mpesa call (docs/architecture.md)', () => {
  it('runs code in at most six library files', async () => {
    const server = await RecordingServer.start();
    server.fallback = () => ({ status: 200, body: successBody('payout') });
    const client = createPaymentsClient({
      apiUsername: 'u',
      apiPassword: 'p',
      baseUrl: server.url,
    });
    const request = OPERATION_CASES.find((c) => c.operation === 'payouts.mpesa')!.request;
    const session = new Session();
    session.connect();
    try {
      await client.payouts.mpesa(request); // warm: first-call setup is not the walk
      await session.post('Profiler.enable');
      await session.post('Profiler.startPreciseCoverage', { callCount: true, detailed: false });
      await filesThatRan(session);
      await client.payouts.mpesa(request);
      const files = await filesThatRan(session);
      console.log(files);
      expect(files.length).toBeLessThanOrEqual(6);
    } finally {
      session.disconnect();
      await client.close();
      await server.close();
    }
  });
});

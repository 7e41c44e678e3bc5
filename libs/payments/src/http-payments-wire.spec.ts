import { RecordingServer } from '../spec-support/recording-server';
import {
  createPaymentsHttpService,
  DeadlineTransport,
  HttpPaymentsWire,
} from './http-payments-wire';
import { resolvePaymentsOptions } from './payments-options';

/** What a test can read of axios's interceptor managers (`handlers` is not in axios's types). */
interface Handlers {
  handlers: ({ synchronous?: boolean } | null)[];
}

const live = (manager: unknown) => (manager as Handlers).handlers.filter((h) => h !== null);

describe('the module axios instance: what each call pays for', () => {
  let server: RecordingServer;
  const options = (extra: { debug?: boolean; timeout?: number } = {}) =>
    resolvePaymentsOptions({
      apiUsername: 'api-user',
      apiPassword: 'wire-spec-password',
      baseUrl: server.url,
      ...extra,
    });

  beforeAll(async () => {
    server = await RecordingServer.start();
  });
  afterEach(() => {
    jest.restoreAllMocks();
    server.reset();
  });
  afterAll(() => server.close());

  it('has only synchronous request hooks, so axios chains no promise per hook', () => {
    for (const debug of [false, true]) {
      const { axiosRef } = createPaymentsHttpService(options({ debug }));
      const hooks = live(axiosRef.interceptors.request);
      expect(hooks).toHaveLength(debug ? 2 : 1);
      expect(hooks.every((hook) => hook?.synchronous === true)).toBe(true);
      // axios-retry's, plus the debug lines'.
      expect(live(axiosRef.interceptors.response)).toHaveLength(debug ? 2 : 1);
    }
  });

  it('hands every attempt the one DeadlineTransport, with no axios timer beside it', async () => {
    // Both attempts must be answered: a timeout no busy machine reaches.
    const http = createPaymentsHttpService(options({ timeout: 10_000 }));
    const { transport, timeout } = http.axiosRef.defaults as {
      transport?: unknown;
      timeout?: number;
    };
    expect(transport).toBeInstanceOf(DeadlineTransport);
    expect(timeout ?? 0).toBe(0);
    const used: unknown[] = [];
    const request = DeadlineTransport.prototype.request;
    jest.spyOn(DeadlineTransport.prototype, 'request').mockImplementation(function (
      this: DeadlineTransport,
      ...args: Parameters<DeadlineTransport['request']>
    ) {
      used.push(this);
      return request.apply(this, args);
    });
    server.reply({ status: 503, body: { success: false } }, { status: 200, body: { ok: 1 } });
    const wire = new HttpPaymentsWire(http, options({ timeout: 10_000 }));

    const answer = await wire.send({
      operation: 'collections.mpesa',
      request: { method: 'POST', url: '/api/v2/payments', body: { amount: 10 } },
      idempotencyKey: 'wire-spec-key',
    });

    expect(answer).toMatchObject({ status: 200, attempts: 2 });
    expect(used).toHaveLength(2);
    expect(used.every((instance) => instance === transport)).toBe(true);
    await wire.close();
  });

  it.each([
    ['within the journal deadline: retried', 60_000, 2, { status: 200 }],
    [
      'past it (a held-up process): not sent again',
      50,
      1,
      { code: 'TIMEOUT', attempts: 1, mayHaveExecuted: true },
    ],
  ])('retries a payout whose next attempt ends %s', async (_label, marginMs, requests, outcome) => {
    // The retry starts at least 200 ms (the first backoff) after the first attempt: with the
    // deadline 50 ms beyond this attempt's timeout, it could only end after it.
    server.reply({ status: 503 });
    const resolved = options({ timeout: 2_000 });
    const wire = new HttpPaymentsWire(createPaymentsHttpService(resolved), resolved);

    const result = await wire
      .send({
        operation: 'payouts.mpesa',
        request: { method: 'POST', url: '/api/v2/withdrawal', body: { amount: 10 } },
        idempotencyKey: 'wire-spec-deadline',
        sendUntil: Date.now() + 2_000 + marginMs,
      })
      .catch((error: unknown) => error);

    expect(result).toMatchObject(outcome);
    expect(server.requests).toHaveLength(requests);
    await wire.close();
  });

  it('ends an attempt whose body never completes at the deadline', async () => {
    // The body completes (as a valid answer) only after 5 s: a wire that waited for it would
    // resolve instead of failing RESPONSE_INCOMPLETE.
    server.reply({ status: 200, stallAfterHeadersMs: 5_000 });
    // Long enough for the headers to arrive however busy the machine, far below the stall.
    const resolved = options({ timeout: 1_000 });
    const wire = new HttpPaymentsWire(createPaymentsHttpService(resolved), resolved);

    const outcome = await wire
      .send({
        operation: 'transactions.status',
        request: { method: 'GET', url: '/api/v1/status/TX-1' },
        idempotencyKey: 'wire-spec-get',
      })
      .then(
        () => 'resolved',
        (error: unknown) => error,
      );

    expect(outcome).toMatchObject({ code: 'RESPONSE_INCOMPLETE', status: 200 });
    await wire.close();
  });
});

import * as net from 'node:net';
import { ConsoleLogger, Logger } from '@nestjs/common';
import { CapturingLogger, everythingVisibleIn } from '../spec-support/capture';
import { correlatedWire, OPERATION_CASES, successBody } from '../spec-support/operation-cases';
import type { Reply } from '../spec-support/recording-server';
import { RecordingServer } from '../spec-support/recording-server';
import { createPaymentsClient } from './create-payments-client';
import { AuthenticationError, PaymentsValidationError, ServiceAPIError } from './errors';
import { PAYMENTS_LOGGER_CONTEXT } from './payments.constants';
import { retryDelay } from './http-payments-wire';
import { basicAuthorization } from './secret-redactor';
import type { PaymentsModuleOptions } from './payments-options.interface';
import type { MpesaPayoutRequest } from './dto/payout-requests';

const PASSWORD = 'S3cr3t-pässword"quoted';
const BASIC_TOKEN = Buffer.from(`api-user:${PASSWORD}`).toString('base64');
const [MPESA_COLLECTION, CARD, , MPESA_PAYOUT] = OPERATION_CASES;

describe('transport: retries, errors, debug logging', () => {
  let server: RecordingServer;
  let logger: CapturingLogger;

  const client = (options: Partial<PaymentsModuleOptions> = {}) =>
    createPaymentsClient({
      apiUsername: 'api-user',
      apiPassword: PASSWORD,
      baseUrl: server.url,
      ...options,
    });

  async function failure(promise: Promise<unknown>): Promise<ServiceAPIError> {
    const error: unknown = await promise.then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(ServiceAPIError);
    return error as ServiceAPIError;
  }

  beforeAll(async () => {
    server = await RecordingServer.start();
  });
  beforeEach(() => {
    logger = new CapturingLogger();
    Logger.overrideLogger(logger);
  });
  afterEach(() => server.reset());
  afterAll(async () => {
    Logger.overrideLogger(new ConsoleLogger());
    await server.close();
  });

  describe.each([500, 502, 503, 504])('HTTP %i', (status) => {
    it('is retried maxRetries times with the same idempotency key, then rejected', async () => {
      server.fallback = () => ({
        status,
        body: { success: false, message: 'upstream down', code: 'E_UPSTREAM' },
      });

      const error = await failure(client().payouts.mpesa(MPESA_PAYOUT.request));

      expect(server.requests).toHaveLength(3);
      expect(error).toMatchObject({
        status,
        attempts: 3,
        code: 'SERVICE_ERROR',
        serviceCode: 'E_UPSTREAM',
        serviceMessage: 'upstream down',
        mayHaveExecuted: true,
        operation: 'payouts.mpesa',
      });
      expect(error.message).toContain('upstream down');
      const keys = new Set(server.requests.map((r) => r.headers['idempotency-key']));
      expect(keys.size).toBe(1);
      expect(error.idempotencyKey).toBe([...keys][0]);
    });
  });

  it('heals when a retry succeeds, keeping the idempotency key', async () => {
    server.reply({ status: 503 }, { reset: true }, { status: 200, body: successBody('payout') });

    const response = await client().payouts.mpesa(MPESA_PAYOUT.request, {
      idempotencyKey: 'payout-77',
    });

    expect(response.transactionReference).toBe('9BD141203407eW');
    expect(server.requests.map((r) => r.headers['idempotency-key'])).toEqual([
      'payout-77',
      'payout-77',
      'payout-77',
    ]);
    expect(server.requests.map((r) => r.text)).toEqual(Array(3).fill(server.requests[0].text));
  });

  it('retries a reset connection and reports a transport failure without status', async () => {
    server.fallback = () => ({ reset: true });

    const error = await failure(client().collections.mpesa(MPESA_COLLECTION.request));

    expect(server.requests).toHaveLength(3);
    expect(error.status).toBeUndefined();
    expect(error.attempts).toBe(3);
    expect(error.code).toBe('NETWORK_ERROR');
    expect(error.cause).toMatchObject({ code: 'ECONNRESET' });
    // The reset came after the request was written: the service may have executed it.
    expect(error.mayHaveExecuted).toBe(true);
  });

  it('retries a refused connection', async () => {
    const closed = await RecordingServer.start();
    const url = closed.url;
    await closed.close();

    const error = await failure(
      client({ baseUrl: url, maxRetries: 1 }).collections.mpesa(MPESA_COLLECTION.request),
    );

    expect(error).toMatchObject({ code: 'NETWORK_ERROR', attempts: 2, mayHaveExecuted: false });
    expect(error.cause).toMatchObject({ code: 'ECONNREFUSED' });
    expect(error.status).toBeUndefined();
  });

  it('retries a timeout, each attempt with the full timeout', async () => {
    // Answers far beyond the timeout, however busy the machine: every attempt times out.
    server.fallback = () => ({ status: 200, body: successBody('payout'), delayMs: 5_000 });

    const error = await failure(client({ timeout: 1_000 }).payouts.mpesa(MPESA_PAYOUT.request));

    expect(server.requests).toHaveLength(3);
    expect(error).toMatchObject({ code: 'TIMEOUT', attempts: 3, mayHaveExecuted: true });
    expect(error.status).toBeUndefined();
    expect(error.message).toContain('no response within 1000 ms');
  });

  it('does not let earlier attempts eat into a later attempt’s timeout', async () => {
    // Three attempts of 2 s each, with backoffs of 200 and 400 ms: a budget of 5 s shared by the
    // call would run out during the third attempt, while each attempt alone has 3 s to spare.
    server.reply(
      { status: 500, delayMs: 2_000 },
      { status: 500, delayMs: 2_000 },
      { status: 200, body: successBody('payout'), delayMs: 2_000 },
    );

    const response = await client({ timeout: 5_000 }).payouts.mpesa(MPESA_PAYOUT.request);

    expect(response.success).toBe(true);
    expect(server.requests).toHaveLength(3);
  });

  it.each([400, 401, 403, 404, 409, 422, 429])('does not retry HTTP %i', async (status) => {
    server.fallback = () => ({
      status,
      body: { success: false, message: `refused ${status}`, code: `E${status}` },
    });

    const error = await failure(client().payouts.mpesa(MPESA_PAYOUT.request));

    expect(server.requests).toHaveLength(1);
    expect(error).toMatchObject({
      status,
      attempts: 1,
      code: status === 401 ? 'AUTHENTICATION_FAILED' : 'SERVICE_ERROR',
      serviceCode: `E${status}`,
      // A 409 is answered to a key in use: not retried, but the call under it may have executed.
      mayHaveExecuted: status === 409,
    });
    expect(error.body).toEqual({
      success: false,
      message: `refused ${status}`,
      code: `E${status}`,
    });
    expect(error instanceof AuthenticationError).toBe(status === 401);
  });

  it('makes 401 an AuthenticationError that is also a ServiceAPIError', async () => {
    server.reply({ status: 401, body: { success: false, message: 'bad credentials' } });

    const error = await failure(client().collections.mpesa(MPESA_COLLECTION.request));

    expect(error).toBeInstanceOf(AuthenticationError);
    expect(error.name).toBe('AuthenticationError');
    expect(error.message).toBe(
      'collections.mpesa was refused with HTTP 401 after 1 attempt: bad credentials',
    );
  });

  it('follows maxRetries, and 0 disables retries', async () => {
    server.fallback = () => ({ status: 503 });
    await failure(client({ maxRetries: 0 }).payouts.mpesa(MPESA_PAYOUT.request));
    expect(server.requests).toHaveLength(1);

    server.reset();
    server.fallback = () => ({ status: 503 });
    const error = await failure(client({ maxRetries: 3 }).payouts.mpesa(MPESA_PAYOUT.request));
    expect(server.requests).toHaveLength(4);
    expect(error.attempts).toBe(4);
  });

  it('waits 200, 400, 800 ms between attempts', async () => {
    server.fallback = () => ({ status: 502 });

    await failure(client({ maxRetries: 3 }).payouts.mpesa(MPESA_PAYOUT.request));

    const gaps = server.requests.slice(1).map((r, i) => r.at - server.requests[i].at);
    expect([retryDelay(1), retryDelay(2), retryDelay(3), retryDelay(4)]).toEqual([
      200, 400, 800, 1600,
    ]);
    // At least the backoff before each retry: a lower bound holds on a busy machine.
    expect(gaps).toHaveLength(3);
    gaps.forEach((gap, i) => {
      expect(gap).toBeGreaterThanOrEqual(retryDelay(i + 1) - 5);
    });
  });

  describe('retryAmbiguous', () => {
    it('false: a POST is not retried after a 5xx or a timeout, and says it may have executed', async () => {
      server.fallback = () => ({ status: 503 });
      const error = await failure(
        client({ retryAmbiguous: false }).payouts.mpesa(MPESA_PAYOUT.request),
      );
      expect(server.requests).toHaveLength(1);
      expect(error).toMatchObject({ status: 503, mayHaveExecuted: true, attempts: 1 });

      server.reset();
      server.fallback = () => ({ status: 200, body: successBody('payout'), delayMs: 5_000 });
      const timeout = await failure(
        client({ retryAmbiguous: false, timeout: 1_000 }).payouts.mpesa(MPESA_PAYOUT.request),
      );
      expect(server.requests).toHaveLength(1);
      expect(timeout).toMatchObject({ code: 'TIMEOUT', mayHaveExecuted: true, attempts: 1 });
    });

    it('false: a failure before the request was sent is still retried', async () => {
      const closed = await RecordingServer.start();
      const url = closed.url;
      await closed.close();

      const error = await failure(
        client({ baseUrl: url, retryAmbiguous: false }).payouts.mpesa(MPESA_PAYOUT.request),
      );

      expect(error).toMatchObject({ code: 'NETWORK_ERROR', attempts: 3, mayHaveExecuted: false });
    });

    it('is overridden per call, both ways', async () => {
      server.fallback = () => ({ status: 503 });
      await failure(
        client({ retryAmbiguous: false }).payouts.mpesa(MPESA_PAYOUT.request, {
          retryAmbiguous: true,
        }),
      );
      expect(server.requests).toHaveLength(3);

      server.reset();
      server.fallback = () => ({ status: 503 });
      await failure(client().payouts.mpesa(MPESA_PAYOUT.request, { retryAmbiguous: false }));
      expect(server.requests).toHaveLength(1);
    });

    it('does not apply to look-ups: a GET is always safe to retry', async () => {
      server.fallback = () => ({ status: 503 });
      const error = await failure(
        client({ retryAmbiguous: false }).transactions.status('9BD103350408eR'),
      );
      expect(server.requests).toHaveLength(3);
      expect(server.requests.every((r) => r.method === 'GET')).toBe(true);
      expect(server.requests[0].headers['idempotency-key']).toBeUndefined();
      expect(error).toMatchObject({ status: 503, mayHaveExecuted: false });
    });
  });

  describe('card rule 4.2.3', () => {
    it.each([
      ['absent', {}],
      ['empty', { checkout_url: '' }],
      ['null', { checkout_url: null }],
    ])('rejects a 200 response whose checkoutUrl is %s', async (_label, patch) => {
      const { checkout_url: _dropped, ...body } = successBody('card');
      server.reply({ status: 200, body: { ...body, ...patch } });

      const error = await failure(client().collections.card(CARD.request));

      expect(error).toMatchObject({ status: 200, code: 'MISSING_FIELD', attempts: 1 });
      expect(error.message).toMatch(
        /^collections\.card: the response has no checkoutUrl; the request may have been executed/,
      );
      expect(error.body).toMatchObject({
        success: true,
        transaction_reference: '9BD114038965eR',
      });
      expect(server.requests).toHaveLength(1);
    });
  });

  it('rejects a request whose getter throws with a PaymentsValidationError, sending nothing', async () => {
    const request = {
      ...MPESA_PAYOUT.request,
      get narration(): string {
        throw new Error('the order was deleted');
      },
    };

    const error = await client()
      .payouts.mpesa(request)
      .catch((e: unknown) => e);

    expect(error).toBeInstanceOf(PaymentsValidationError);
    expect(error).toMatchObject({
      mayHaveExecuted: false,
      errors: [{ field: 'request', rule: 'isReadable' }],
    });
    expect((error as Error).message).toContain('the order was deleted');
    expect(server.requests).toHaveLength(0);
  });

  describe('the callback URL with its malipo_key', () => {
    const longUrl = (length: number) =>
      `https://shop.example.com/${'h'.repeat(length - 'https://shop.example.com/'.length)}`;

    it('refuses a callbackUrl that malipo_key would take past 2,048 characters, sending nothing', async () => {
      const request = { ...MPESA_PAYOUT.request, callbackUrl: longUrl(2048) };

      const error = await client()
        .payouts.mpesa(request, { idempotencyKey: 'key-1' })
        .catch((e: unknown) => e);

      expect(error).toMatchObject({
        errors: [{ field: 'callbackUrl', rule: 'maxLength' }],
        mayHaveExecuted: false,
      });
      expect(server.requests).toHaveLength(0);
    });

    it('sends one that fits with it, and any length without correlation', async () => {
      const fits = {
        ...MPESA_PAYOUT.request,
        callbackUrl: longUrl(2048 - '?malipo_key=key-1'.length),
      };
      server.reply({ status: 200, body: successBody('payout') });
      server.reply({ status: 200, body: successBody('payout') });

      await client().payouts.mpesa(fits, { idempotencyKey: 'key-1' });
      await client({ correlateCallbacks: false }).payouts.mpesa({
        ...MPESA_PAYOUT.request,
        callbackUrl: longUrl(2048),
      });

      const sent = server.requests.map((r) => (r.json as { callback_url: string }).callback_url);
      expect(sent.map((url) => url.length)).toEqual([2048, 2048]);
    });
  });

  describe('bodies that are not JSON objects', () => {
    it.each<[string, Reply]>([
      ['HTML', { status: 200, raw: '<html><body>Gateway</body></html>' }],
      ['empty', { status: 200, raw: '' }],
      ['a JSON array', { status: 200, body: [1, 2] }],
      ['JSON null', { status: 200, raw: 'null' }],
      ['truncated JSON', { status: 201, raw: '{"success": tr' }],
    ])('rejects a 2xx %s body without retrying', async (_label, reply) => {
      server.reply(reply);

      const error = await failure(client().collections.mpesa(MPESA_COLLECTION.request));

      expect(error).toMatchObject({
        status: (reply as { status: number }).status,
        code: 'INVALID_RESPONSE',
        attempts: 1,
      });
      expect(server.requests).toHaveLength(1);
    });

    it('keeps a non-JSON error body as text', async () => {
      server.fallback = () => ({ status: 502, raw: '<h1>Bad Gateway</h1>' });

      const error = await failure(
        client({ maxRetries: 1 }).collections.mpesa(MPESA_COLLECTION.request),
      );

      expect(error).toMatchObject({ status: 502, attempts: 2, body: '<h1>Bad Gateway</h1>' });
      expect(error.code).toBe('SERVICE_ERROR');
      expect(error.serviceCode).toBeUndefined();
    });

    it('does not follow redirects', async () => {
      server.reply({ status: 302, headers: { Location: 'http://127.0.0.1:1/elsewhere' } });

      const error = await failure(client().collections.mpesa(MPESA_COLLECTION.request));

      expect(error).toMatchObject({ status: 302, attempts: 1 });
    });

    it.each(['content-length', 'chunked'] as const)(
      'reports a 2xx body cut short (%s) as RESPONSE_INCOMPLETE, not retried, may have executed',
      async (cutBody) => {
        server.reply({ status: 200, body: successBody('payout'), cutBody });

        const cut = await failure(client().payouts.mpesa(MPESA_PAYOUT.request));

        expect(cut).toMatchObject({
          code: 'RESPONSE_INCOMPLETE',
          status: 200,
          attempts: 1,
          mayHaveExecuted: true,
        });
        expect(server.requests).toHaveLength(1);
      },
    );

    it('reads an error status whose body was cut short by its status: a 503 retried, a 401 refused', async () => {
      const body = { status: 503, success: false, message: 'unavailable' };
      server.reply({ status: 503, body, cutBody: 'content-length' });
      server.reply({ status: 200, body: successBody('payout') });
      server.reply({ status: 401, body, cutBody: 'content-length' });

      const retried = await client().payouts.mpesa(MPESA_PAYOUT.request);
      const refused = await failure(client().payouts.mpesa(MPESA_PAYOUT.request));

      expect(retried.success).toBe(true);
      expect(refused).toBeInstanceOf(AuthenticationError);
      expect(refused).toMatchObject({ status: 401, mayHaveExecuted: false });
      expect(server.requests).toHaveLength(3);
    });

    it('ends an attempt answered 101 Switching Protocols: it settles, and may have executed', async () => {
      // Node closes such a socket silently when nobody listens for the upgrade: a call left to
      // axios alone would never settle, and this test would end at jest's timeout.
      let requests = 0;
      const switching = net.createServer((socket) => {
        socket.on('error', () => undefined);
        socket.once('data', () => {
          requests += 1;
          socket.write(
            'HTTP/1.1 101 Switching Protocols\r\nupgrade: websocket\r\nconnection: upgrade\r\n\r\n',
          );
        });
      });
      await new Promise<void>((resolve) => switching.listen(0, '127.0.0.1', resolve));
      const { port } = switching.address() as net.AddressInfo;
      const payments = client({ baseUrl: `http://127.0.0.1:${port}`, maxRetries: 1 });
      try {
        const error = await failure(payments.payouts.mpesa(MPESA_PAYOUT.request));
        const lookup = await failure(payments.transactions.status('9BD1eW'));

        // An answer began (its status line came) and no usable one followed: not retried.
        expect(error).toMatchObject({
          code: 'RESPONSE_INCOMPLETE',
          status: 101,
          attempts: 1,
          mayHaveExecuted: true,
        });
        expect(error.message).toContain(
          'HTTP 101 arrived but its body did not complete (EPROTOCOLSWITCH)',
        );
        expect(lookup).toMatchObject({ code: 'RESPONSE_INCOMPLETE', mayHaveExecuted: false });
        expect(requests).toBe(2);
      } finally {
        await payments.close();
        switching.close();
      }
    });

    it.each([301, 302, 303, 307, 308])(
      'takes a %s to a POST for a call that may have executed (a 303 may stand for one done)',
      async (status) => {
        server.reply({ status, headers: { Location: 'http://127.0.0.1:1/done' } });

        const error = await failure(client().payouts.mpesa(MPESA_PAYOUT.request));

        expect(error).toMatchObject({ status, attempts: 1, mayHaveExecuted: true });
        expect(error.message).toContain('may have been executed');
        expect(server.requests).toHaveLength(1);
      },
    );

    it.each([
      [400, false],
      [500, true],
      [503, true],
    ])(
      'takes an error body under HTTP 200 whose status is %s for a call that may have executed: %s',
      async (serviceStatus, mayHaveExecuted) => {
        server.reply({
          status: 200,
          body: { status: serviceStatus, success: false, message: 'internal error' },
        });

        const error = await failure(client().payouts.mpesa(MPESA_PAYOUT.request));

        expect(error).toMatchObject({ status: 200, serviceStatus, mayHaveExecuted, attempts: 1 });
      },
    );

    it.each([
      ['500', 500, true],
      [' 500', 500, true],
      ['503 Service Unavailable', 503, true],
      ['503: upstream timed out', 503, true],
      ['504-Gateway Timeout', 504, true],
      ['502.3', 502, true],
      ['409 Conflict', 409, true],
      ['400', 400, false],
      ['5e2', undefined, false],
      ['5000', undefined, false],
    ])(
      'reads an error body status written as the text %s under HTTP 200 as %s (may have executed: %s)',
      async (written, serviceStatus, mayHaveExecuted) => {
        server.reply({
          status: 200,
          body: { status: written, success: false, message: 'internal error' },
        });

        const error = await failure(client().payouts.mpesa(MPESA_PAYOUT.request));

        expect(error).toMatchObject({ status: 200, mayHaveExecuted, attempts: 1 });
        expect(error.serviceStatus).toBe(serviceStatus);
      },
    );

    it.each([
      ['a 400 whose body says 500', 400, { success: false, status: 500, message: 'upstream' }],
      ['a 409 whose body says the call succeeded', 409, { success: true, status: 409 }],
      [
        'a refusal under HTTP 200 that names a transaction',
        200,
        { success: false, status: 'SUCCESS', transaction_reference: '9BD1eW' },
      ],
      ['a 400 that names a transaction', 400, { success: false, correlator_id: '9BD1eW' }],
    ])('takes %s for a call that may have executed', async (_label, status, body) => {
      server.reply({ status, body });

      const error = await failure(client().payouts.mpesa(MPESA_PAYOUT.request));

      expect(error).toMatchObject({ status, mayHaveExecuted: true, attempts: 1 });
    });

    it.each([
      ['an empty reference', { correlator_id: '' }],
      ['a reference no look-up can take', { correlator_id: '../balances' }],
      ['an amount of 1e400', { amount: '1e400' }],
    ])(
      'refuses an acceptance with %s: INVALID_RESPONSE, may have executed',
      async (_label, fields) => {
        const body = { ...successBody('payout'), ...fields };
        // `1e400` is written as a JSON number, which JSON.stringify cannot write.
        const raw = JSON.stringify(body).replace('"1e400"', '1e400');
        server.reply({ status: 200, raw });

        const error = await failure(client().payouts.mpesa(MPESA_PAYOUT.request));

        expect(error).toMatchObject({ code: 'INVALID_RESPONSE', mayHaveExecuted: true });
      },
    );

    it('takes a 4xx and a redirected look-up for calls that did not execute', async () => {
      server.reply({ status: 422, body: { success: false, message: 'invalid amount' } });
      server.reply({ status: 303, headers: { Location: 'http://127.0.0.1:1/done' } });

      const refused = await failure(client().payouts.mpesa(MPESA_PAYOUT.request));
      const lookup = await failure(client().transactions.status('9BD1eW'));

      expect(refused).toMatchObject({ status: 422, mayHaveExecuted: false });
      expect(lookup).toMatchObject({ status: 303, mayHaveExecuted: false });
    });

    it('takes a 409 for a call that may have executed: the key is in use by a call in progress or done', async () => {
      server.reply({ status: 409, body: { success: false, message: 'request in progress' } });
      server.reply({ status: 409, body: { success: false, message: 'duplicate' } });

      const timedOutRetry = await failure(
        client().payouts.mpesa(MPESA_PAYOUT.request, { idempotencyKey: 'order-409' }),
      );
      const lookup = await failure(client().transactions.status('9BD1eW'));

      expect(timedOutRetry).toMatchObject({ status: 409, mayHaveExecuted: true, attempts: 1 });
      expect(timedOutRetry.message).toMatch(/may have been executed: check its outcome/);
      expect(lookup).toMatchObject({ status: 409, mayHaveExecuted: false });
    });
  });

  describe('responses that cannot be trusted', () => {
    it.each<[string, Record<string, unknown>, string]>([
      [
        'success as a string',
        { success: 'false', transaction_reference: 'TX-1', status: 'QUEUED' },
        'success',
      ],
      ['no success at all', { transaction_reference: 'TX-1' }, 'success'],
      ['success without a reference', { success: true, status: 'QUEUED' }, 'transactionReference'],
      [
        'amount as a string',
        { success: true, transaction_reference: 'TX-1', amount: '1000' },
        'amount',
      ],
      [
        'status as an object',
        { success: true, transaction_reference: 'TX-1', status: { code: 200 } },
        'status',
      ],
    ])('rejects a 200 with %s as INVALID_RESPONSE, not retried', async (_label, body, field) => {
      server.reply({ status: 200, body });

      const error = await failure(client().payouts.mpesa(MPESA_PAYOUT.request));

      expect(error).toMatchObject({ status: 200, code: 'INVALID_RESPONSE', attempts: 1 });
      expect(error.message).toContain(field);
      expect(error.message).toContain('may have been executed');
      expect(server.requests).toHaveLength(1);
    });

    it("accepts a 2xx whose status is a number (the service's SDK allows one), as its text", async () => {
      const body = {
        success: true,
        correlator_id: '9BD100000001eW',
        message: 'Transaction request sent successfully',
        status: 200,
        channel: '',
        amount: 0,
      };
      server.reply({ status: 200, body });

      const response = await client().payouts.mpesa(MPESA_PAYOUT.request);

      expect(response).toMatchObject({ transactionReference: '9BD100000001eW', status: '200' });
      expect(response._raw).toEqual(body);
    });

    it('answers a payout amount the service gives as 0 as it was sent: 100.1 * 3 as 300.3', async () => {
      server.reply({
        status: 200,
        body: { success: true, correlator_id: '9BD100000002eW', status: '200', amount: 0 },
      });
      const payments = client();
      const request = { ...(MPESA_PAYOUT.request as MpesaPayoutRequest), amount: 100.1 * 3 };

      const response = await payments.payouts.mpesa(request);

      expect((server.requests[0].json as { amount: number }).amount).toBe(300.3);
      expect(response.amount).toBe(300.3);
    });

    it.each([
      ['a numeric status', { status: 400, success: false, message: 'Insufficient float' }],
      ['a string status', { success: false, message: 'Insufficient float', status: 'REJECTED' }],
    ])('rejects success: false on a 2xx with %s, not retried', async (_label, body) => {
      server.fallback = () => ({ status: 200, body });

      const error = await failure(client().payouts.mpesa(MPESA_PAYOUT.request));

      expect(error).toMatchObject({
        status: 200,
        code: 'SERVICE_ERROR',
        serviceMessage: 'Insufficient float',
        mayHaveExecuted: false,
        attempts: 1,
      });
      expect(error.serviceStatus).toBe(typeof body.status === 'number' ? 400 : undefined);
      expect(error.message).toContain('Insufficient float');
      expect(server.requests).toHaveLength(1);
    });

    it('does not retry when the headers of a 2xx arrived but the body stalled', async () => {
      // The headers come at once, the body only after five times the timeout.
      server.fallback = () => ({ status: 200, stallAfterHeadersMs: 5_000 });

      const error = await failure(client({ timeout: 1_000 }).payouts.mpesa(MPESA_PAYOUT.request));

      expect(error).toMatchObject({ status: 200, code: 'RESPONSE_INCOMPLETE', attempts: 1 });
      expect(error.message).toContain('may have been executed');
      expect(server.requests).toHaveLength(1);
    });
  });

  describe('debug logging', () => {
    it('logs method and URL, body, status line and data of every attempt under one context', async () => {
      server.reply(
        { status: 503, body: { message: 'busy' } },
        { status: 200, body: successBody('payout') },
      );

      await client({ debug: true }).payouts.mpesa(MPESA_PAYOUT.request, {
        idempotencyKey: 'dbg-1',
      });

      const lines = logger.lines
        .filter((l) => l.context === PAYMENTS_LOGGER_CONTEXT)
        .map((l) => l.message);
      expect(lines).toEqual([
        `[dbg-1 attempt 1/3] POST ${server.url}/api/v2/withdrawal`,
        `[dbg-1 attempt 1/3] request body ${JSON.stringify(correlatedWire(MPESA_PAYOUT.wire, 'dbg-1'))}`,
        '[dbg-1 attempt 1/3] response HTTP 503 Service Unavailable',
        '[dbg-1 attempt 1/3] response data {"message":"busy"}',
        `[dbg-1 attempt 2/3] POST ${server.url}/api/v2/withdrawal`,
        `[dbg-1 attempt 2/3] request body ${JSON.stringify(correlatedWire(MPESA_PAYOUT.wire, 'dbg-1'))}`,
        '[dbg-1 attempt 2/3] response HTTP 200 OK',
        `[dbg-1 attempt 2/3] response data ${JSON.stringify(successBody('payout'))}`,
      ]);
    });

    it('logs transport failures of each attempt', async () => {
      server.fallback = () => ({ reset: true });

      await failure(
        client({ debug: true, maxRetries: 1 }).payouts.mpesa(MPESA_PAYOUT.request, {
          idempotencyKey: 'dbg-2',
        }),
      );

      const failures = logger.lines.map((l) => l.message).filter((m) => m.includes('no response'));
      expect(failures).toHaveLength(2);
      expect(failures[0]).toMatch(/^\[dbg-2 attempt 1\/2\] no response: ECONNRESET/);
    });

    it('logs nothing when debug is off', async () => {
      server.reply({ status: 200, body: successBody('payout') });
      await client().payouts.mpesa(MPESA_PAYOUT.request);
      expect(logger.lines.filter((l) => l.context === PAYMENTS_LOGGER_CONTEXT)).toEqual([]);
    });
  });

  describe('credentials never escape', () => {
    const SCENARIOS: [string, Reply[]][] = [
      ['success', [{ status: 200, body: successBody('payout') }]],
      ['5xx until exhausted', [{ status: 500 }, { status: 502 }, { status: 503 }]],
      ['reset', [{ reset: true }, { reset: true }, { reset: true }]],
      [
        'timeout',
        [
          { status: 200, delayMs: 5_000 },
          { status: 200, delayMs: 5_000 },
          { status: 200, delayMs: 5_000 },
        ],
      ],
      ['401', [{ status: 401, body: { message: 'no' } }]],
      ['400', [{ status: 400, body: { message: 'bad', code: 'E' } }]],
      ['HTML 200', [{ status: 200, raw: '<html></html>' }]],
      [
        'echoed secrets',
        [{ status: 400, body: { message: `denied ${PASSWORD}`, auth: `Basic ${BASIC_TOKEN}` } }],
      ],
    ];

    it.each(SCENARIOS)('%s: not in logs, nor in any part of the error', async (label, replies) => {
      server.reply(...replies);

      // Only the timeout scenario may time out: the others' answers must be read, however busy
      // the machine.
      const timeout = label === 'timeout' ? 1_000 : 10_000;
      const outcome: unknown = await client({ debug: true, timeout })
        .payouts.mpesa(MPESA_PAYOUT.request)
        .catch((e: unknown) => e);

      const visible = [
        ...logger.lines.map((l) => l.message),
        outcome instanceof Error ? everythingVisibleIn(outcome) : JSON.stringify(outcome),
      ].join('\n');
      expect(logger.lines.length).toBeGreaterThan(0);
      for (const secret of [PASSWORD, BASIC_TOKEN, JSON.stringify(PASSWORD).slice(1, -1)]) {
        expect(visible).not.toContain(secret);
      }
      expect(visible).not.toMatch(/authorization/i);
    });

    it.each([
      ['JSON-escaped slashes', (p: string) => JSON.stringify({ echo: p }).replace(/\//g, '\\/')],
      [
        'unicode escapes',
        (p: string) =>
          `{"echo":"${[...p].map((c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`).join('')}"}`,
      ],
    ])(
      'redacts an echoed secret written with %s, in errors, _raw and logs',
      async (_label, encode) => {
        const password = 'p@ss/w0rd-long';
        const token = Buffer.from(`api-user:${password}`).toString('base64');
        server.reply(
          { status: 400, raw: encode(password) },
          {
            status: 200,
            raw: JSON.stringify({
              success: true,
              transaction_reference: 'TX-E',
              auth: `Basic ${token}`,
            }).replace(/\//g, '\\/'),
          },
        );
        const echoing = createPaymentsClient({
          apiUsername: 'api-user',
          apiPassword: password,
          baseUrl: server.url,
          debug: true,
        });

        const error = await failure(echoing.payouts.mpesa(MPESA_PAYOUT.request));
        const response = await echoing.payouts.mpesa(MPESA_PAYOUT.request);

        const visible = [
          everythingVisibleIn(error),
          JSON.stringify(response),
          ...logger.lines.map((l) => l.message),
        ].join('\n');
        expect(visible).not.toContain(password);
        expect(visible).not.toContain(token);
        expect(error.body).toEqual({ echo: '[REDACTED]' });
        expect(response._raw).toEqual({
          success: true,
          transaction_reference: 'TX-E',
          auth: 'Basic [REDACTED]',
        });
      },
    );

    it('keeps a body without secrets as the very same object in _raw', async () => {
      server.reply({ status: 200, body: successBody('payout') });
      const response = await client().payouts.mpesa(MPESA_PAYOUT.request);
      expect(response._raw).toEqual(successBody('payout'));
    });

    it('gives a large answer the same redacted _raw, parsed on first read and then kept', async () => {
      const lines = Array.from({ length: 600 }, (_, i) => ({ sku: `SKU-${i}`, quantity: i }));
      const body = { ...successBody('payout'), echo: `Basic ${BASIC_TOKEN}`, lines };
      expect(JSON.stringify(body).length).toBeGreaterThan(16 * 1024);
      server.reply({ status: 200, body });

      const response = await client().payouts.mpesa(MPESA_PAYOUT.request);

      const expected = { ...body, echo: 'Basic [REDACTED]' };
      expect(Object.keys(response)).toContain('_raw');
      expect(JSON.parse(JSON.stringify(response))).toMatchObject({ _raw: expected });
      expect(response._raw).toEqual(expected);
      expect(response._raw).toBe(response._raw);
      expect(Object.getOwnPropertyDescriptor(response, '_raw')).toMatchObject({
        value: expected,
        writable: true,
        enumerable: true,
      });
      response._raw = { replaced: true };
      expect(response._raw).toEqual({ replaced: true });
    });

    it('redacts what a proxy echoes: its own password, the Basic tokens in hex, a header named after a password', async () => {
      const apiPassword = 'hunter2secretpass';
      const proxyPassword = 'pr0xy-pa55word';
      const proxyToken = Buffer.from(`px:${proxyPassword}`).toString('base64');
      const apiTokenHex = Buffer.from(
        Buffer.from(`api-user:${apiPassword}`).toString('base64'),
      ).toString('hex');
      // The recording server stands as the proxy: a plain-http call goes to it whole.
      server.reply({
        status: 407,
        headers: { [`x-debug-${apiPassword}`]: `Basic ${proxyToken}` },
        body: { message: `denied ${proxyPassword}`, dump: apiTokenHex.toUpperCase() },
      });
      const proxied = createPaymentsClient({
        apiUsername: 'api-user',
        apiPassword,
        baseUrl: 'http://payments.invalid',
        allowInsecureHttp: true,
        proxy: {
          host: '127.0.0.1',
          port: Number(new URL(server.url).port),
          auth: { username: 'px', password: proxyPassword },
        },
        debug: true,
      });

      const error = await failure(proxied.payouts.mpesa(MPESA_PAYOUT.request));

      expect(server.requests[0].headers['proxy-authorization']).toBe(`Basic ${proxyToken}`);
      const visible = [everythingVisibleIn(error), ...logger.lines.map((l) => l.message)].join(
        '\n',
      );
      for (const secret of [apiPassword, proxyPassword, proxyToken, apiTokenHex]) {
        expect(visible.toLowerCase()).not.toContain(secret.toLowerCase());
      }
      expect(error).toMatchObject({ status: 407, mayHaveExecuted: false });
      expect(error.headers).toEqual(
        expect.objectContaining({ 'x-debug-[REDACTED]': 'Basic [REDACTED]' }),
      );
    });

    /** A client of `apiPassword` on the recording server: one attempt, debug logging on. */
    const debugClientWith = (apiPassword: string) =>
      createPaymentsClient({
        apiUsername: 'api-user',
        apiPassword,
        baseUrl: server.url,
        allowInsecureHttp: true,
        maxRetries: 0,
        debug: true,
      });

    it('redacts a password with non-ASCII characters echoed through a wrong charset', async () => {
      const apiPassword = 'Geheim-Pässwört-2024';
      const utf8 = Buffer.from(apiPassword, 'utf8');
      const hex = utf8.toString('hex');
      server.reply({
        status: 400,
        // Node writes a header's text as Latin-1 bytes: these are the password's UTF-8 bytes,
        // as a server in another language echoes it, and read back as Latin-1 (`PÃ¤ss...`).
        headers: { 'x-echo': utf8.toString('latin1') },
        body: {
          message: `denied ${apiPassword.normalize('NFD')}`,
          // The password sent as ISO-8859-1 and read as UTF-8, and its hex in mixed case.
          latin1: Buffer.from(apiPassword, 'latin1').toString('utf8'),
          encoded: encodeURIComponent(utf8.toString('latin1')),
          dump: [...hex].map((digit, i) => (i % 2 ? digit.toUpperCase() : digit)).join(''),
        },
      });
      const echoed = debugClientWith(apiPassword);

      const error = await failure(echoed.payouts.mpesa(MPESA_PAYOUT.request));

      const visible = [everythingVisibleIn(error), ...logger.lines.map((l) => l.message)].join(
        '\n',
      );
      expect(error.headers).toEqual(expect.objectContaining({ 'x-echo': '[REDACTED]' }));
      expect(visible).not.toMatch(/Geheim|wört|w\u00c3|4765686569/i);
    });

    it.each([
      ['upper-cased, under HTTP 400', 400, (p: string) => p.toUpperCase()],
      ['lower-cased, under HTTP 200 with success false', 200, (p: string) => p.toLowerCase()],
      [
        'as its Basic token lower-cased, under HTTP 401',
        401,
        () => basicAuthorization('api-user', 'Str0ngPassw0rdX').slice(6).toLowerCase(),
      ],
    ])(
      'redacts the password echoed %s in a body with no escape or exact form',
      async (_, status, echo) => {
        const apiPassword = 'Str0ngPassw0rdX';
        const form = echo(apiPassword);
        server.reply({
          status,
          body: { status, success: false, message: `invalid credentials for ${form}`, [form]: 1 },
        });
        const caseChanging = debugClientWith(apiPassword);

        const error = await failure(caseChanging.payouts.mpesa(MPESA_PAYOUT.request));

        expect(error.message).toContain('invalid credentials for [REDACTED]');
        const visible = [everythingVisibleIn(error), ...logger.lines.map((l) => l.message)];
        expect(visible.join('\n').toLowerCase()).not.toContain(form.toLowerCase());
      },
    );

    it.each([
      ['a small answer', ''],
      ['an answer whose _raw is parsed on read', 'x'.repeat(20 * 1024)],
    ])(
      'redacts the password echoed upper-cased in %s that succeeded, and its _raw',
      async (_, padding) => {
        const apiPassword = 'Str0ngPassw0rdX';
        server.reply({
          status: 200,
          body: {
            ...successBody('payout'),
            message: `processed for ${apiPassword.toUpperCase()}`,
            padding,
          },
        });

        const answer = await debugClientWith(apiPassword).payouts.mpesa(MPESA_PAYOUT.request);

        const visible = JSON.stringify(answer) + JSON.stringify(answer._raw);
        expect(visible).toContain('processed for [REDACTED]');
        expect(visible.toLowerCase()).not.toContain(apiPassword.toLowerCase());
      },
    );

    it('redacts a secret the service echoes back in an error body', async () => {
      server.reply({ status: 400, body: { message: `denied ${PASSWORD}` } });

      const error = await failure(client().payouts.mpesa(MPESA_PAYOUT.request));

      expect(error.message).toContain('denied [REDACTED]');
      expect(error.body).toEqual({ message: 'denied [REDACTED]' });
    });
  });
});

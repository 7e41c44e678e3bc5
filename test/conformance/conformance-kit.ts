/**
 * The one helper of the conformance specs: a loopback HTTP server that answers with the real
 * service's recorded JSON examples (libs/payments/spec-support/real-service/, mirrored from the public SDK repository
 * `Yug3ne/payd-sdks`, folder `shared/fixtures/`) and records every request the library sends.
 * See docs/wire-contract.md.
 */
import { readFileSync } from 'node:fs';
import type { IncomingHttpHeaders } from 'node:http';
import { join } from 'node:path';
import { createPaymentsClient } from '@malipo/nestjs';
import type { PaymentsCallOptions, PaymentsClient, PaymentsModuleOptions } from '@malipo/nestjs';
import { RecordingServer } from '../../libs/payments/spec-support/recording-server';

/** One request as the server received it. */
export interface RecordedRequest {
  readonly method: string;
  /** Path and query exactly as sent, e.g. `/v2/networks/grouped?transaction_type=receipt`. */
  readonly url: string;
  readonly headers: IncomingHttpHeaders;
  /** The raw body text (`''` for a GET). */
  readonly text: string;
  /** The body parsed as JSON; `undefined` when it is not JSON. */
  readonly json: unknown;
}

/** The answer the server gives to every request until changed. */
export interface Answer {
  readonly status: number;
  /** Sent as is, with `Content-Type: application/json`. */
  readonly text: string;
}

const FIXTURES = join(__dirname, '../../libs/payments/spec-support/real-service');

/** The text of a recorded example, e.g. `payouts/mpesa-response.json`, as recorded. */
export function fixtureText(name: string): string {
  return readFileSync(join(FIXTURES, name), 'utf8');
}

/** A fresh parse of a recorded example. */
export function fixture<T = Record<string, unknown>>(name: string): T {
  return JSON.parse(fixtureText(name)) as T;
}

/** `Authorization` header of the credentials `u` / `p` used by every spec. */
export const BASIC_AUTHORIZATION = `Basic ${Buffer.from('u:p').toString('base64')}`;

/** An `Idempotency-Key` the library generates: a UUID v4. */
export const UUID_V4 = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

/** The library's recording server, answering every request with one recorded example. */
export class ConformanceServer {
  private constructor(private readonly recording: RecordingServer) {}

  static async start(): Promise<ConformanceServer> {
    const conformance = new ConformanceServer(await RecordingServer.start());
    conformance.reset();
    return conformance;
  }

  /** Every request received, in order. */
  get requests(): readonly RecordedRequest[] {
    return this.recording.requests.map(({ method, path, headers, text, json }) => ({
      method,
      url: path,
      headers,
      text,
      json,
    }));
  }

  private answerAll(answer: Answer): void {
    // `raw` keeps the example's text byte for byte; the header says JSON, as the service does.
    this.recording.fallback = () => ({
      status: answer.status,
      raw: answer.text,
      headers: { 'Content-Type': 'application/json' },
    });
  }

  /** `http://127.0.0.1:<port>`. */
  get url(): string {
    return this.recording.url;
  }

  /** Answers every following request with the recorded example `name`, under HTTP `status`. */
  answerWith(name: string, status = 200): this {
    this.answerAll({ status, text: fixtureText(name) });
    return this;
  }

  /** Answers every following request with `body` as JSON: a variant of a recorded example. */
  answerWithBody(body: unknown, status = 200): this {
    this.answerAll({ status, text: JSON.stringify(body) });
    return this;
  }

  /** The only request received; fails when there were none or several. */
  onlyRequest(): RecordedRequest {
    expect(this.requests).toHaveLength(1);
    return this.requests[0];
  }

  /** Forgets the recorded requests and the answer. */
  reset(): void {
    this.recording.reset();
    this.answerAll({ status: 200, text: '{"success":true}' });
  }

  close(): Promise<void> {
    return this.recording.close();
  }
}

/** What a spec gets from {@link useConformanceServer}. */
export interface Conformance {
  readonly server: ConformanceServer;
  /**
   * A client of the server: credentials `u`/`p`, no retries and no `malipo_key` unless `options`
   * say otherwise. Closed after each test.
   */
  client(options?: Partial<PaymentsModuleOptions>): PaymentsClient;
}

/** Starts the server for the spec file, closes clients and forgets requests after each test. */
export function useConformanceServer(): Conformance {
  let server: ConformanceServer | undefined;
  const clients: PaymentsClient[] = [];
  beforeAll(async () => {
    server = await ConformanceServer.start();
  });
  afterEach(async () => {
    await Promise.all(clients.splice(0).map((client) => client.close()));
    server?.reset();
  });
  afterAll(async () => {
    await server?.close();
  });
  const started = (): ConformanceServer => {
    if (!server) throw new Error('the conformance server is not started');
    return server;
  };
  return {
    get server(): ConformanceServer {
      return started();
    },
    client(options?: Partial<PaymentsModuleOptions>): PaymentsClient {
      const client = createPaymentsClient({
        apiUsername: 'u',
        apiPassword: 'p',
        baseUrl: started().url,
        maxRetries: 0,
        correlateCallbacks: false,
        ...options,
      });
      clients.push(client);
      return client;
    },
  };
}

/** The headers every request carries, and `Idempotency-Key` on a POST only. */
export function expectHeaders(request: RecordedRequest, idempotencyKey?: string): void {
  expect(request.headers.authorization).toBe(BASIC_AUTHORIZATION);
  if (request.method === 'POST') {
    expect(request.headers['content-type']).toMatch(/^application\/json\b/);
    if (idempotencyKey === undefined) {
      expect(request.headers['idempotency-key']).toMatch(UUID_V4);
    } else {
      expect(request.headers['idempotency-key']).toBe(idempotencyKey);
    }
  } else {
    expect(request.headers).not.toHaveProperty('idempotency-key');
    expect(request.text).toBe('');
  }
}

/** The rejection of `promise`; fails when it resolves. */
export async function rejectionOf(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    (value) => {
      throw new Error(`expected a rejection, got ${JSON.stringify(value)}`);
    },
    (error: unknown) => error,
  );
}

/** One operation called with the request record built from its recorded example. */
export interface ExampleCall {
  /** `service.method`, as `ServiceAPIError.operation` names it. */
  readonly operation: string;
  /** The recorded request example, for the operations that have one. */
  readonly requestExample?: string;
  /** The recorded answer of the operation. */
  readonly responseExample: string;
  /** Whether the request carries a `callback_url`. */
  readonly hasCallback: boolean;
  /** Calls the operation; `callbackUrl` replaces the example's. */
  readonly call: (
    client: PaymentsClient,
    callbackUrl?: string,
    options?: PaymentsCallOptions,
  ) => Promise<unknown>;
}

const EXAMPLE_CALLBACK_URL = 'https://your-server.com/callback';

/** Every operation, each with the request of its recorded example (docs/wire-contract.md). */
export const EXAMPLE_CALLS: readonly ExampleCall[] = [
  {
    operation: 'collections.mpesa',
    requestExample: 'collections/mpesa-request.json',
    responseExample: 'collections/mpesa-response.json',
    hasCallback: true,
    call: (client, callbackUrl = EXAMPLE_CALLBACK_URL, options) =>
      client.collections.mpesa(
        {
          username: 'your_payd_username',
          amount: 10,
          phoneNumber: '0700000000',
          narration: 'Payment for goods',
          callbackUrl,
        },
        options,
      ),
  },
  {
    operation: 'collections.card',
    requestExample: 'collections/card-request.json',
    responseExample: 'collections/card-response.json',
    hasCallback: true,
    call: (client, callbackUrl = EXAMPLE_CALLBACK_URL, options) =>
      client.collections.card(
        {
          username: 'your_payd_username',
          amount: 101,
          phoneNumber: '0700000000',
          narration: 'Payment for goods',
          callbackUrl,
        },
        options,
      ),
  },
  {
    operation: 'collections.panAfrican',
    requestExample: 'collections/pan-african-request.json',
    responseExample: 'collections/pan-african-response.json',
    hasCallback: true,
    call: (client, callbackUrl = EXAMPLE_CALLBACK_URL, options) =>
      client.collections.panAfrican(
        {
          username: 'your_payd_username',
          accountName: 'bank',
          amount: 1800,
          phoneNumber: '+2340000000000',
          accountNumber: '0000000000',
          networkCode: '344f1324-11fb-4875-bd74-fbb43cd2b32d',
          channelId: 'af944f0c-ba70-47c7-86dc-1bad5a6ab4e4',
          redirectUrl: 'https://your-server.com/redirect',
          narration: 'Payment for goods',
          currency: 'NGN',
          callbackUrl,
          transactionChannel: 'bank',
        },
        options,
      ),
  },
  {
    operation: 'payouts.mpesa',
    requestExample: 'payouts/mpesa-request.json',
    responseExample: 'payouts/mpesa-response.json',
    hasCallback: true,
    call: (client, callbackUrl = EXAMPLE_CALLBACK_URL, options) =>
      client.payouts.mpesa(
        { phoneNumber: '0700000000', amount: 100, narration: 'Withdrawal request', callbackUrl },
        options,
      ),
  },
  {
    operation: 'payouts.panAfrican',
    requestExample: 'payouts/pan-african-request.json',
    responseExample: 'payouts/pan-african-response.json',
    hasCallback: true,
    call: (client, callbackUrl = EXAMPLE_CALLBACK_URL, options) =>
      client.payouts.panAfrican(
        {
          username: 'your_payd_username',
          networkCode: '344f1324-11fb-4875-bd74-fbb43cd2b32d',
          accountName: 'bank',
          accountHolderName: 'John Doe',
          accountNumber: '0000000000',
          amount: 1800,
          phoneNumber: '+2340000000000',
          channelId: 'fe8f4989-3bf6-41ca-9621-ffe2bc127569',
          narration: 'Payment for goods',
          currency: 'NGN',
          callbackUrl,
          transactionChannel: 'bank',
          providerName: 'OPay',
          providerCode: '100004',
        },
        options,
      ),
  },
  {
    operation: 'payouts.merchant',
    requestExample: 'payouts/merchant-request.json',
    responseExample: 'payouts/merchant-response.json',
    hasCallback: true,
    call: (client, callbackUrl = EXAMPLE_CALLBACK_URL, options) =>
      client.payouts.merchant(
        {
          username: 'your_payd_username',
          amount: 12,
          phoneNumber: '+254700000000',
          narration: 'Payment for goods',
          businessAccount: '123456',
          businessNumber: '9876543210',
          callbackUrl,
        },
        options,
      ),
  },
  {
    operation: 'transfers.send',
    requestExample: 'transfers/request.json',
    responseExample: 'transfers/response.json',
    hasCallback: false,
    call: (client, _callbackUrl, options) =>
      client.transfers.send(
        {
          receiverUsername: 'recipient_username',
          amount: 10,
          narration: 'Family breakfast',
          phoneNumber: '+254700000000',
        },
        options,
      ),
  },
  {
    operation: 'networks.discover',
    responseExample: 'networks/discovery-response.json',
    hasCallback: false,
    call: (client, _callbackUrl, options) => client.networks.discover('receipt', '+234', options),
  },
  {
    operation: 'transactions.status',
    responseExample: 'transactions/status-response.json',
    hasCallback: false,
    call: (client, _callbackUrl, options) => client.transactions.status('9BD103350408eR', options),
  },
  {
    operation: 'balances.all',
    responseExample: 'balances/response.json',
    hasCallback: false,
    call: (client, _callbackUrl, options) => client.balances.all('your_payd_username', options),
  },
];

/**
 * The body the library must send for a request example: the example itself, except that the
 * interface document (section 4.0) makes the Kenyan mobile-money `channel` `MOBILE_MONEY_KE`
 * where the real examples say `MPESA`.
 */
export function expectedWireBody(requestExample: string): Record<string, unknown> {
  const example = fixture(requestExample);
  return example.channel === 'MPESA' ? { ...example, channel: 'MOBILE_MONEY_KE' } : example;
}

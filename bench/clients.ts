/**
 * The clients compared, each making the same M-Pesa collection (`POST /api/v2/payments`). Each one
 * loads only what it uses (dynamic imports), since each runs in a process of its own and its
 * memory figures should hold nothing of the others.
 */
import { randomUUID } from 'node:crypto';
import * as http from 'node:http';
import type { AxiosInstance } from 'axios';
import type { MpesaCollectionRequest, PaymentsJournalStore } from '@malipo/nestjs';
import type { Call } from './load';
import { OPERATION_CASES } from '../libs/payments/spec-support/operation-cases';
import { isBenchReference } from './server-api';

export const API_USERNAME = 'bench-user';
export const API_PASSWORD = 'bench-password';
export const PATH = '/api/v2/payments';

export type ClientKey = 'a' | 'aj' | 'ar' | 'b0' | 'b0d' | 'b' | 'c' | 'd';

/** Rotation order of the rounds, and the order of the report's rows. */
export const CLIENT_KEYS: readonly ClientKey[] = ['a', 'aj', 'ar', 'b0', 'b0d', 'b', 'c', 'd'];

/** (a) with the payments journal: the journal section of the report (docs/performance.md). */
export type JournalClientKey = 'aj' | 'ar';
export const JOURNAL_CLIENT_KEYS: readonly JournalClientKey[] = ['aj', 'ar'];

export function isJournalClient(key: ClientKey): key is JournalClientKey {
  return (JOURNAL_CLIENT_KEYS as readonly string[]).includes(key);
}

export const CLIENT_LABELS: Record<ClientKey, string> = {
  a: '(a) CollectionsService.mpesa',
  aj: '(a+j) (a), InMemoryPaymentsJournal',
  ar: '(a+r) (a), RedisPaymentsJournal',
  b0: '(b0) axios like (a)',
  b0d: '(b0+d) (b0), deadline for timeout',
  b: '(b) axios.post, defaults',
  c: '(c) node:http',
  d: '(d) undici Pool',
};

export function isClientKey(value: string): value is ClientKey {
  return (CLIENT_KEYS as readonly string[]).includes(value);
}

/**
 * The client-side request of every client and its wire body: the M-Pesa collection of the specs'
 * operation cases, so the baselines send exactly what the library sends for (a).
 */
const MPESA_CASE = OPERATION_CASES[0];
export const MPESA_REQUEST: MpesaCollectionRequest = MPESA_CASE.request;

/** The wire body (docs/wire-contract.md), which the baselines send as is, key included. */
export const MPESA_WIRE_BODY = {
  ...MPESA_CASE.wire,
  callback_url: `${MPESA_CASE.request.callbackUrl}?malipo_key=bench`,
};

const AUTHORIZATION = `Basic ${Buffer.from(`${API_USERNAME}:${API_PASSWORD}`).toString('base64')}`;

interface WireRecord {
  transaction_reference?: unknown;
}

// Every client checks its result, so a broken server or client cannot look fast.
function expect(ok: boolean, key: ClientKey): void {
  if (!ok) throw new Error(`${key}: unexpected response`);
}

export interface Client {
  readonly key: ClientKey;
  readonly label: string;
  readonly call: Call;
  close(): Promise<void>;
}

/** What a client needs besides the server's port: the bench's redis-server for (a+r). */
export interface ClientContext {
  /** `redis://127.0.0.1:<port>` of the redis-server the bench started (bench/redis.ts). */
  readonly redisUrl?: string;
}

/**
 * The journal of (a+j) and (a+r), made as an app makes it. (a+j)'s keeps its default bound
 * (100,000 entries), which the load rounds never reach: its entries stay, as in an app, and the
 * report says how many it held.
 */
async function journalStore(
  key: ClientKey,
  context: ClientContext,
): Promise<PaymentsJournalStore | undefined> {
  switch (key) {
    case 'aj': {
      const { InMemoryPaymentsJournal } = await import('@malipo/nestjs');
      return new InMemoryPaymentsJournal();
    }
    case 'ar': {
      if (context.redisUrl === undefined) {
        throw new Error("(a+r) needs the URL of the bench's redis-server");
      }
      const { RedisPaymentsJournal } = await import('@malipo/nestjs/redis');
      return new RedisPaymentsJournal({ url: context.redisUrl });
    }
    default:
      return undefined;
  }
}

/**
 * (a) The library as an app uses it: `CollectionsService` from a Nest application context; (a+j)
 * and (a+r) the same with a journal. Every call gets a new generated idempotency key, as a
 * journaled call must have.
 */
async function libraryClient(
  key: 'a' | JournalClientKey,
  baseUrl: string,
  context: ClientContext,
): Promise<Client> {
  const [{ Module }, { NestFactory }, { CollectionsService, PaymentsModule }, journal] =
    await Promise.all([
      import('@nestjs/common'),
      import('@nestjs/core'),
      import('@malipo/nestjs'),
      journalStore(key, context),
    ]);
  @Module({
    imports: [
      PaymentsModule.forRoot({
        apiUsername: API_USERNAME,
        apiPassword: API_PASSWORD,
        baseUrl,
        ...(journal === undefined ? {} : { journal }),
      }),
    ],
  })
  class BenchAppModule {}

  const app = await NestFactory.createApplicationContext(BenchAppModule, { logger: false });
  const collections = app.get(CollectionsService);
  return {
    key,
    label: CLIENT_LABELS[key],
    call: async () => {
      const response = await collections.mpesa(MPESA_REQUEST);
      expect(isBenchReference(response.transactionReference), key);
    },
    // Closes the journal's store too, once the calls' last journal writes are done.
    close: () => app.close(),
  };
}

/**
 * (b0) axios configured as `createPaymentsHttpService` (http-payments-wire.ts) configures the
 * library's own instance: keep-alive agent, no redirects, no proxy, the body read as text and
 * parsed once, the same headers and size limit; a fresh Idempotency-Key per call, as the library
 * makes. Keep it in step with that function: it is the fair baseline. (b0) keeps axios's own
 * `timeout`, as any sane axios client does; with `withDeadline` the library's per-attempt
 * deadline transport replaces it, as in the library, so (b0+d) − (b0) is what the deadline costs
 * over axios's timer.
 */
export async function createConfiguredAxios(
  baseUrl: string,
  withDeadline: boolean,
  agent: http.Agent,
): Promise<AxiosInstance> {
  const [{ default: axios }, library] = await Promise.all([
    import('axios'),
    import('./library-internals'),
  ]);
  const timeout = 30_000;
  return axios.create({
    baseURL: baseUrl,
    ...(withDeadline ? { transport: new library.DeadlineTransport(timeout) } : { timeout }),
    headers: {
      Authorization: library.basicAuthorization(API_USERNAME, API_PASSWORD),
      'Content-Type': 'application/json',
      Accept: 'application/json',
      'User-Agent': `${library.LIBRARY_NAME}/${library.LIBRARY_VERSION} node/${process.version}`,
    },
    responseType: 'text',
    transformResponse: [(data: unknown) => data],
    maxRedirects: 0,
    proxy: false,
    maxContentLength: 10 * 1024 * 1024,
    httpAgent: agent,
  });
}

async function configuredAxiosClient(baseUrl: string, withDeadline: boolean): Promise<Client> {
  const agent = new http.Agent({ keepAlive: true });
  const instance = await createConfiguredAxios(baseUrl, withDeadline, agent);
  const key = withDeadline ? 'b0d' : 'b0';
  return {
    key,
    label: CLIENT_LABELS[key],
    call: async () => {
      const response = await instance.post<string>(PATH, MPESA_WIRE_BODY, {
        headers: { 'Idempotency-Key': randomUUID() },
      });
      const record = JSON.parse(response.data) as WireRecord;
      expect(isBenchReference(record.transaction_reference), key);
    },
    close: () => {
      agent.destroy();
      return Promise.resolve();
    },
  };
}

/**
 * (b) The floor for any axios-based client as most apps write it: `axios.post` with axios's
 * defaults (Node's global keep-alive agent, follow-redirects, JSON parsed by axios).
 */
async function axiosClient(baseUrl: string): Promise<Client> {
  const { default: axios } = await import('axios');
  const url = `${baseUrl}${PATH}`;
  return {
    key: 'b',
    label: CLIENT_LABELS.b,
    call: async () => {
      const response = await axios.post<WireRecord>(url, MPESA_WIRE_BODY, {
        headers: { Authorization: AUTHORIZATION, 'Idempotency-Key': randomUUID() },
      });
      expect(isBenchReference(response.data.transaction_reference), 'b');
    },
    close: () => {
      http.globalAgent.destroy();
      return Promise.resolve();
    },
  };
}

/** (c) The floor for any Node client on `node:http`: JSON in and out, keep-alive agent. */
function nodeHttpClient(port: number): Promise<Client> {
  const agent = new http.Agent({ keepAlive: true });
  const post = (): Promise<WireRecord> =>
    new Promise((resolve, reject) => {
      const payload = JSON.stringify(MPESA_WIRE_BODY);
      const req = http.request(
        {
          host: '127.0.0.1',
          port,
          path: PATH,
          method: 'POST',
          agent,
          headers: {
            Authorization: AUTHORIZATION,
            'Content-Type': 'application/json',
            Accept: 'application/json',
            'Content-Length': Buffer.byteLength(payload),
            'Idempotency-Key': randomUUID(),
          },
        },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (chunk: Buffer) => chunks.push(chunk));
          res.on('end', () => {
            try {
              if (res.statusCode !== 200) throw new Error(`HTTP ${res.statusCode}`);
              resolve(JSON.parse(Buffer.concat(chunks).toString('utf8')) as WireRecord);
            } catch (error: unknown) {
              reject(error instanceof Error ? error : new Error(String(error)));
            }
          });
          res.on('error', reject);
        },
      );
      req.on('error', reject);
      req.end(payload);
    });
  return Promise.resolve({
    key: 'c',
    label: CLIENT_LABELS.c,
    call: async () => {
      const record = await post();
      expect(isBenchReference(record.transaction_reference), 'c');
    },
    close: () => {
      agent.destroy();
      return Promise.resolve();
    },
  });
}

/**
 * (d) undici, the other platform client (Node's own fetch is built on it): a keep-alive `Pool`
 * without a connection limit, like the agents above.
 */
async function undiciClient(baseUrl: string): Promise<Client> {
  const { Pool } = await import('undici');
  const pool = new Pool(baseUrl);
  return {
    key: 'd',
    label: CLIENT_LABELS.d,
    call: async () => {
      const { statusCode, body } = await pool.request({
        path: PATH,
        method: 'POST',
        headers: {
          Authorization: AUTHORIZATION,
          'Content-Type': 'application/json',
          Accept: 'application/json',
          'Idempotency-Key': randomUUID(),
        },
        body: JSON.stringify(MPESA_WIRE_BODY),
      });
      const record = (await body.json()) as WireRecord;
      expect(statusCode === 200 && isBenchReference(record.transaction_reference), 'd');
    },
    close: () => pool.close(),
  };
}

/** Client `key` against the benchmark server listening on `port` of 127.0.0.1. */
export function createClient(
  key: ClientKey,
  port: number,
  context: ClientContext = {},
): Promise<Client> {
  const baseUrl = `http://127.0.0.1:${port}`;
  switch (key) {
    case 'a':
    case 'aj':
    case 'ar':
      return libraryClient(key, baseUrl, context);
    case 'b0':
      return configuredAxiosClient(baseUrl, false);
    case 'b0d':
      return configuredAxiosClient(baseUrl, true);
    case 'b':
      return axiosClient(baseUrl);
    case 'c':
      return nodeHttpClient(port);
    case 'd':
      return undiciClient(baseUrl);
  }
}

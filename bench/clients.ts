import * as http from 'node:http';
import { Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import axios from 'axios';
import { CollectionsService, PaymentsModule, type MpesaCollectionRequest } from '@malipo/nestjs';
import { deadlineTransport } from '../libs/payments/src/http-payments-wire';
import type { Call } from './load';

export const API_USERNAME = 'bench-user';
export const API_PASSWORD = 'bench-password';
export const PATH = '/api/v2/payments';

/** The client-side request of every scenario. */
export const MPESA_REQUEST: MpesaCollectionRequest = {
  username: 'acme',
  amount: 1500,
  phoneNumber: '0712345678',
  narration: 'Order 42',
  callbackUrl: 'https://merchant.example.com/hook',
};

/** Its wire body (docs/wire-contract.md), which the baselines send as is. */
export const MPESA_WIRE_BODY = {
  username: 'acme',
  channel: 'MOBILE_MONEY_KE',
  amount: 1500,
  phone_number: '0712345678',
  narration: 'Order 42',
  currency: 'KES',
  callback_url: 'https://merchant.example.com/hook?malipo_key=bench',
} as const;

const AUTHORIZATION = `Basic ${Buffer.from(`${API_USERNAME}:${API_PASSWORD}`).toString('base64')}`;

interface WireRecord {
  success?: unknown;
  transaction_reference?: unknown;
}

// Every scenario checks its result, so a broken server or client cannot look fast.
function expectRecord(ok: boolean, scenario: string): void {
  if (!ok) throw new Error(`${scenario}: unexpected response`);
}

export interface Scenario {
  readonly key: 'a' | 'b0' | 'b0d' | 'b' | 'c';
  readonly label: string;
  readonly call: Call;
  close(): Promise<void>;
}

/** (a) The library as an app uses it: `CollectionsService` from a Nest application context. */
export async function nestScenario(baseUrl: string): Promise<Scenario> {
  @Module({
    imports: [
      PaymentsModule.forRoot({ apiUsername: API_USERNAME, apiPassword: API_PASSWORD, baseUrl }),
    ],
  })
  class BenchAppModule {}

  const app = await NestFactory.createApplicationContext(BenchAppModule, { logger: false });
  const collections = app.get(CollectionsService);
  return {
    key: 'a',
    label: '(a) CollectionsService.mpesa',
    call: async () => {
      const response = await collections.mpesa(MPESA_REQUEST);
      expectRecord(response.transactionReference === 'TX-1', 'a');
    },
    close: () => app.close(),
  };
}

/**
 * (b0) axios configured as the library configures its own instance: keep-alive agent, no
 * redirects, the body read as text and parsed once, the same headers. With `withDeadline`, also
 * the library's per-attempt deadline transport, so (b0+d) − (b0) is what the deadline costs.
 */
export function configuredAxiosScenario(baseUrl: string, withDeadline: boolean): Scenario {
  const agent = new http.Agent({ keepAlive: true });
  const instance = axios.create({
    baseURL: baseUrl,
    timeout: 30_000,
    headers: {
      Authorization: AUTHORIZATION,
      'Content-Type': 'application/json',
      Accept: 'application/json',
      'User-Agent': 'bench node',
    },
    responseType: 'text',
    transformResponse: [(data: unknown) => data],
    maxRedirects: 0,
    proxy: false,
    httpAgent: agent,
    ...(withDeadline ? { transport: deadlineTransport(30_000) } : {}),
  });
  const key = withDeadline ? 'b0d' : 'b0';
  return {
    key,
    label: withDeadline ? '(b0+d) axios like (a), with its deadline' : '(b0) axios like (a)',
    call: async () => {
      const response = await instance.post<string>(PATH, MPESA_WIRE_BODY, {
        headers: { 'Idempotency-Key': 'bench' },
      });
      const record = JSON.parse(response.data) as WireRecord;
      expectRecord(record.transaction_reference === 'TX-1', key);
    },
    close: () => {
      agent.destroy();
      return Promise.resolve();
    },
  };
}

/** (b) The floor for any axios-based client: one `axios.post` per call, nothing else. */
export function axiosScenario(baseUrl: string): Scenario {
  const agent = new http.Agent({ keepAlive: true });
  const url = `${baseUrl}${PATH}`;
  const config = { httpAgent: agent, headers: { Authorization: AUTHORIZATION } };
  return {
    key: 'b',
    label: '(b) axios.post',
    call: async () => {
      const response = await axios.post<WireRecord>(url, MPESA_WIRE_BODY, config);
      expectRecord(response.data.transaction_reference === 'TX-1', 'b');
    },
    close: () => {
      agent.destroy();
      return Promise.resolve();
    },
  };
}

/** (c) The floor for any Node client: `node:http` with JSON in and out. */
export function nodeHttpScenario(port: number): Scenario {
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
          },
        },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (chunk: Buffer) => chunks.push(chunk));
          res.on('end', () => {
            try {
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
  return {
    key: 'c',
    label: '(c) node:http',
    call: async () => {
      const record = await post();
      expectRecord(record.transaction_reference === 'TX-1', 'c');
    },
    close: () => {
      agent.destroy();
      return Promise.resolve();
    },
  };
}

// Run by the graceful-shutdown spec in a child process: the process must exit by itself after
// client.close(), although the call had up to 10 retries pending, the next one 10 minutes away
// (the third 503 asks for that with Retry-After).
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Logger } from '@nestjs/common';
import { createPaymentsClient, ServiceAPIError } from '@malipo/nestjs';

async function main(): Promise<void> {
  let requests = 0;
  const server = createServer((_req, res) => {
    requests += 1;
    res.writeHead(503, requests === 3 ? { 'Retry-After': '600' } : {}).end();
  });
  // The debug lines tell when the client has the third 503, so is waiting to retry: not a guess.
  const lines: string[] = [];
  const keep = (message: unknown) => void lines.push(String(message));
  Logger.overrideLogger({ log: keep, error: keep, warn: keep, debug: keep, verbose: keep });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const client = createPaymentsClient({
    apiUsername: 'u',
    apiPassword: 'script-password',
    baseUrl: `http://127.0.0.1:${port}`,
    maxRetries: 10,
    maxRetryAfterMs: 600_000,
    debug: true,
  });

  const call = client.payouts.mpesa({
    phoneNumber: '0712345678',
    amount: 100,
    narration: 'x',
    callbackUrl: 'http://127.0.0.1/hook',
  });
  while (!lines.some((line) => line.includes('attempt 3/11] response HTTP 503'))) {
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  await client.close();
  server.close();
  const error = await call.catch((e: unknown) => e);
  const code = error instanceof ServiceAPIError ? error.code : 'resolved?';
  const attempts = error instanceof ServiceAPIError ? error.attempts : -1;
  console.log(`rejected ${code} after ${attempts} attempt(s); ${requests} request(s) sent`);
}

void main();

// Run by the graceful-shutdown spec in a child process: the process must exit by itself after
// client.close(), although the call had up to 10 retries pending (the longest wait 102 s).
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createPaymentsClient, ServiceAPIError } from '@malipo/nestjs';

async function main(): Promise<void> {
  let requests = 0;
  const server = createServer((_req, res) => {
    requests += 1;
    res.writeHead(503).end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const client = createPaymentsClient({
    apiUsername: 'u',
    apiPassword: 'script-password',
    baseUrl: `http://127.0.0.1:${port}`,
    maxRetries: 10,
  });

  const call = client.payouts.mpesa({
    phoneNumber: '0712345678',
    amount: 100,
    narration: 'x',
    callbackUrl: 'http://127.0.0.1/hook',
  });
  while (requests < 3) await new Promise((resolve) => setTimeout(resolve, 10));
  // Well inside the 800 ms wait before the fourth attempt, once the third 503 is back.
  await new Promise((resolve) => setTimeout(resolve, 100));
  await client.close();
  server.close();
  const error = await call.catch((e: unknown) => e);
  const code = error instanceof ServiceAPIError ? error.code : 'resolved?';
  const attempts = error instanceof ServiceAPIError ? error.attempts : -1;
  console.log(`rejected ${code} after ${attempts} attempt(s); ${requests} request(s) sent`);
}

void main();

// Run by the Redis-down journal spec in a child process: a call refused because Redis cannot be
// reached leaves an undo of its write-ahead retrying in the background. After client.close() the
// process must exit by itself, without waiting for that undo to give up (it logs when it does).
import { createServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import { Logger } from '@nestjs/common';
import { createPaymentsClient, PaymentsJournalError } from '@malipo/nestjs';
import { RedisPaymentsJournal } from '@malipo/nestjs/redis';

/** A loopback port nothing listens on. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

async function main(): Promise<void> {
  const say = (message: unknown) => console.log(String(message));
  Logger.overrideLogger({ log: say, error: say, warn: say, debug: say, verbose: say });
  const client = createPaymentsClient({
    apiUsername: 'u',
    apiPassword: 'script-password',
    baseUrl: 'http://127.0.0.1:9',
    journal: new RedisPaymentsJournal({ url: `redis://127.0.0.1:${await closedPort()}` }),
  });
  const error = await client.payouts
    .mpesa(
      { phoneNumber: '0712345678', amount: 100, narration: 'x', callbackUrl: 'http://a.b/c' },
      { idempotencyKey: 'redis-down-script' },
    )
    .catch((e: unknown) => e);
  say(`call: ${error instanceof PaymentsJournalError ? error.code : 'not refused'}`);
  await client.close();
  say('closed');
}

void main();

// A process that sends one M-Pesa payout with the Redis journal and is killed before the answer,
// for crash-in-doubt.e2e-spec.ts: `node -r ts-node/register/transpile-only -r
// tsconfig-paths/register test/journal/payout-child.ts`, configured by environment variables,
// reporting on stdout as JSON lines.
import { createPaymentsClient } from '@malipo/nestjs';
import { RedisPaymentsJournal } from '@malipo/nestjs/redis';

/** The payout both the child and the test's instance send under one key: same fingerprint. */
export function childPayout(callbackUrl: string) {
  return { phoneNumber: '0712345678', amount: 250, narration: 'Salary 7', callbackUrl };
}

/** SANDBOX_URL, API_USERNAME, API_PASSWORD, REDIS_URL, IDEMPOTENCY_KEY, CALLBACK_URL, TIMEOUT_MS. */
async function main(): Promise<void> {
  const env = (name: string) => {
    const value = process.env[name];
    if (value === undefined) throw new Error(`${name} is not set`);
    return value;
  };
  const report = (line: Record<string, unknown>) => console.log(JSON.stringify(line));
  const client = createPaymentsClient({
    apiUsername: env('API_USERNAME'),
    apiPassword: env('API_PASSWORD'),
    baseUrl: env('SANDBOX_URL'),
    // A short send budget, so that the entry this process leaves is in doubt soon after.
    timeout: Number(env('TIMEOUT_MS')),
    maxRetries: 0,
    // Patient with a busy machine: this test is about a crash, not a slow Redis.
    journal: new RedisPaymentsJournal({
      url: env('REDIS_URL'),
      connection: { commandTimeout: 10_000 },
    }),
  });
  report({ step: 'sending' });
  try {
    const answer = await client.payouts.mpesa(childPayout(env('CALLBACK_URL')), {
      idempotencyKey: env('IDEMPOTENCY_KEY'),
    });
    report({ step: 'answered', reference: answer.transactionReference });
  } catch (error) {
    report({ step: 'failed', error: error instanceof Error ? error.message : String(error) });
  }
  await client.close();
}

if (require.main === module) void main();

import { existsSync } from 'node:fs';
import { Logger } from '@nestjs/common';
import type { RunningSandbox } from '../../sandbox/src/sandbox';
import { startSandbox } from '../../sandbox/src/sandbox';
import { startDemo } from './demo';

/**
 * `npm start`: the demo shop, against the embedded sandbox unless PAYMENTS_BASE_URL names a real
 * service. No credentials or network needed in the sandbox case.
 */
async function main(): Promise<void> {
  if (existsSync('.env')) process.loadEnvFile('.env');
  const environment = { ...process.env };
  const port = Number(environment.PORT ?? 3000);
  let sandbox: RunningSandbox | undefined;

  if (!environment.PAYMENTS_BASE_URL) {
    environment.PAYMENTS_DEFAULT_USERNAME ||= 'demo-shop';
    // The sandbox's account bears the demo's username, so that the balance look-up (a payroll
    // run reads the balance before it sends) finds it.
    sandbox = await startSandbox({
      port: Number(environment.SANDBOX_PORT ?? 4010),
      accountUsername: environment.PAYMENTS_DEFAULT_USERNAME,
    });
    environment.PAYMENTS_BASE_URL = sandbox.url;
    environment.PAYMENTS_API_USERNAME = sandbox.credentials.apiUsername;
    environment.PAYMENTS_API_PASSWORD = sandbox.credentials.apiPassword;
  }
  const demo = await startDemo({ port, environment });

  const lines = [
    `Demo shop:     ${demo.url}`,
    `OpenAPI docs:  ${demo.url}/docs`,
    `Payroll page:  ${demo.url}/payroll  (a CSV of payouts paid as one run)`,
    sandbox
      ? `Sandbox:       ${sandbox.url}  (ledger: ${sandbox.url}/__sandbox/transactions, wallets: ${sandbox.url}/__sandbox/wallets)`
      : `Payments API:  ${environment.PAYMENTS_BASE_URL}`,
    '',
    'Try an M-Pesa collection, then look at the order:',
    `  curl -s -X POST ${demo.url}/orders/collections/mpesa -H 'content-type: application/json' \\`,
    `    -d '{"amount": 1500, "phoneNumber": "0712345678", "narration": "Order 42"}'`,
    `  curl -s ${demo.url}/orders/<id from above>`,
    '',
    'What the payments journal knows of every call, and a reconcile pass:',
    `  curl -s ${demo.url}/journal`,
    `  curl -s -X POST ${demo.url}/journal/reconcile`,
  ];
  console.log(`\n${lines.join('\n')}\n`);

  const stop = async () => {
    await demo.close();
    await sandbox?.close();
    process.exit(0);
  };
  process.once('SIGINT', () => void stop());
  process.once('SIGTERM', () => void stop());
}

main().catch((error: unknown) => {
  new Logger('Demo').error(error instanceof Error ? error.message : String(error));
  process.exit(1);
});

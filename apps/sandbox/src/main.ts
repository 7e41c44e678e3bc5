import { Logger } from '@nestjs/common';
import { startSandbox } from './sandbox';

/** `node dist/apps/sandbox/main`: the emulator alone, configured from SANDBOX_* variables. */
async function main(): Promise<void> {
  const sandbox = await startSandbox();
  sandbox.app.enableShutdownHooks();
  const { url, accounts } = sandbox;
  const [main, second] = accounts;
  const lines = [
    `Payments Service sandbox: ${url}`,
    `  Account ${main.username}: API credentials ${main.apiUsername} / ${main.apiPassword}`,
    `  Account ${second.username}: API credentials ${second.apiUsername} / ${second.apiPassword}`,
    `  Ledger:       ${url}/__sandbox/transactions`,
    `  Accounts:     ${url}/__sandbox/accounts`,
    `  Requests:     ${url}/__sandbox/requests`,
    '',
    'Try an M-Pesa collection, then its status:',
    `  curl -s -u ${main.apiUsername}:${main.apiPassword} ${url}/api/v2/payments -H 'content-type: application/json' \\`,
    `    -d '{"username":"${main.username}","channel":"MOBILE_MONEY_KE","amount":1500,"phone_number":"0712345678","narration":"Order 42","currency":"KES","callback_url":"http://127.0.0.1:3000/webhooks/payments"}'`,
    `  curl -s -u ${main.apiUsername}:${main.apiPassword} ${url}/api/v1/status/<transaction_reference>`,
  ];
  process.stdout.write(`${lines.join('\n')}\n`);
}

main().catch((error: unknown) => {
  new Logger('Sandbox').error(error instanceof Error ? error.message : String(error));
  process.exit(1);
});

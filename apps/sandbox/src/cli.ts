import 'reflect-metadata';
import { Logger } from '@nestjs/common';
import { parseSandboxArgs, SANDBOX_USAGE, type SandboxCommand } from './cli-options';
import { startSandbox } from './sandbox';

/**
 * `malipo-sandbox`, the package's bin (compiled to `cli.js` with a shebang), and `npm run
 * sandbox` (through `main.ts`): the emulator alone, configured from flags and the SANDBOX_*
 * variables (a flag wins over its variable); prints its URL and credentials; SIGINT (Ctrl-C) or
 * SIGTERM stops it with exit code 0.
 */
async function main(): Promise<void> {
  let command: SandboxCommand;
  try {
    command = parseSandboxArgs(process.argv.slice(2));
  } catch (error) {
    // A bad flag: say so and show the usage, as command-line tools do.
    process.stderr.write(`malipo-sandbox: ${(error as Error).message}\n\n${SANDBOX_USAGE}\n`);
    process.exitCode = 2;
    return;
  }
  if (command.help) {
    process.stdout.write(`${SANDBOX_USAGE}\n`);
    return;
  }
  const sandbox = await startSandbox(command.options);
  const stop = () => {
    sandbox.close().then(
      () => {
        process.stdout.write('Sandbox stopped.\n');
        process.exit(0);
      },
      (error: unknown) => {
        new Logger('Sandbox').error(error instanceof Error ? error.message : String(error));
        process.exit(1);
      },
    );
  };
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
  const { url, accounts } = sandbox;
  const [main, second] = accounts;
  const lines = [
    `Payments Service sandbox: ${url}`,
    `  Account ${main.username}: API credentials ${main.apiUsername} / ${main.apiPassword}`,
    `  Account ${second.username}: API credentials ${second.apiUsername} / ${second.apiPassword}`,
    `  Ledger:       ${url}/__sandbox/transactions`,
    `  Accounts:     ${url}/__sandbox/accounts`,
    `  Requests:     ${url}/__sandbox/requests`,
    ...(command.options.rateLimit
      ? [
          `  Rate limit:   ${command.options.rateLimit.requestsPerSecond} API requests/s (429 above)`,
        ]
      : []),
    '',
    'Try an M-Pesa collection, then its status:',
    `  curl -s -u ${main.apiUsername}:${main.apiPassword} ${url}/api/v2/payments -H 'content-type: application/json' \\`,
    `    -d '{"username":"${main.username}","channel":"MOBILE_MONEY_KE","amount":1500,"phone_number":"0712345678","narration":"Order 42","currency":"KES","callback_url":"http://127.0.0.1:3000/webhooks/payments"}'`,
    `  curl -s -u ${main.apiUsername}:${main.apiPassword} ${url}/api/v1/status/<transaction_reference>`,
    '',
    'Ctrl-C stops it.',
  ];
  process.stdout.write(`${lines.join('\n')}\n`);
}

main().catch((error: unknown) => {
  new Logger('Sandbox').error(error instanceof Error ? error.message : String(error));
  process.exit(1);
});

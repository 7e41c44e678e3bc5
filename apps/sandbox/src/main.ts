import { Logger } from '@nestjs/common';
import { startSandbox } from './sandbox';

/** `node dist/apps/sandbox/main`: the emulator alone, configured from SANDBOX_* variables. */
async function main(): Promise<void> {
  const sandbox = await startSandbox();
  sandbox.app.enableShutdownHooks();
  const { url, credentials } = sandbox;
  const lines = [
    `Payments Service sandbox: ${url}`,
    `  API username: ${credentials.apiUsername}`,
    `  API password: ${credentials.apiPassword}`,
    `  Ledger:       ${url}/__sandbox/transactions`,
    `  Wallets:      ${url}/__sandbox/wallets`,
    `  Requests:     ${url}/__sandbox/requests`,
  ];
  process.stdout.write(`${lines.join('\n')}\n`);
}

main().catch((error: unknown) => {
  new Logger('Sandbox').error(error instanceof Error ? error.message : String(error));
  process.exit(1);
});

import { parseArgs } from 'node:util';
import type { SandboxOptions } from './sandbox';

/** What `malipo-sandbox --help` prints. */
export const SANDBOX_USAGE = `Usage: malipo-sandbox [options]

An offline emulator of the Payments Service (docs: the package README).

Options:
  --port <n>              port to listen on (default: SANDBOX_PORT or 4010; 0 picks a free one)
  --host <address>        address to bind (default 127.0.0.1)
  --username <name>       API username (default: SANDBOX_API_USERNAME or sandbox)
  --password <secret>     API password (default: SANDBOX_API_PASSWORD or sandbox-secret)
  --webhook-delay-ms <n>  delay before an outcome webhook (default: SANDBOX_WEBHOOK_DELAY_MS or 1000)
  --rate-limit <n>        answer API requests above n per second with 429 and Retry-After,
                          unexecuted (default: no limit; the control API changes it)
  --help                  show this help`;

/** The command line, parsed: `help`, or the options of `startSandbox`. */
export type SandboxCommand = { help: true } | { help: false; options: SandboxOptions };

function wholeNumber(flag: string, value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const number = Number(value);
  if (!/^\d+$/.test(value) || !Number.isSafeInteger(number)) {
    throw new Error(`--${flag} must be a whole number, got "${value}"`);
  }
  return number;
}

/**
 * Parses `malipo-sandbox` arguments (flags win over environment variables, which
 * `startSandbox` reads for what is left unset).
 * @throws Error naming the flag for an unknown flag or a bad number.
 */
export function parseSandboxArgs(args: readonly string[]): SandboxCommand {
  const { values } = parseArgs({
    args: [...args],
    strict: true,
    allowPositionals: false,
    options: {
      port: { type: 'string' },
      host: { type: 'string' },
      username: { type: 'string' },
      password: { type: 'string' },
      'webhook-delay-ms': { type: 'string' },
      'rate-limit': { type: 'string' },
      help: { type: 'boolean' },
    },
  });
  if (values.help) return { help: true };
  const options: SandboxOptions = {};
  const port = wholeNumber('port', values.port);
  if (port !== undefined) {
    if (port > 65_535) throw new Error('--port must be at most 65535');
    options.port = port;
  }
  if (values.host !== undefined) options.host = values.host;
  if (values.username !== undefined) options.apiUsername = values.username;
  if (values.password !== undefined) options.apiPassword = values.password;
  const delay = wholeNumber('webhook-delay-ms', values['webhook-delay-ms']);
  if (delay !== undefined) options.webhookDelayMs = delay;
  const rate = wholeNumber('rate-limit', values['rate-limit']);
  if (rate !== undefined) {
    if (rate < 1) throw new Error('--rate-limit must be at least 1 (leave it out for no limit)');
    options.rateLimit = { requestsPerSecond: rate };
  }
  return { help: false, options };
}

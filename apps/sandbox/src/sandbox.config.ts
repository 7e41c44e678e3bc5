import type { SandboxOptions } from './sandbox';

const DEFAULTS = {
  port: 4010,
  host: '127.0.0.1',
  apiUsername: 'sandbox',
  apiPassword: 'sandbox-secret',
  webhookDelayMs: 1000,
  webhookRetryDelaysMs: [500, 1000, 2000],
  webhookTimeoutMs: 5000,
  usdRate: 130,
  initialBalances: { local: 1_000_000, USD: 10_000 },
} as const;

export interface Balances {
  local: number;
  USD: number;
}

/**
 * The resolved settings of one sandbox. A class so that Nest can inject it by type; one instance
 * per sandbox, so several sandboxes can run side by side in one process.
 */
export class SandboxConfig {
  readonly port: number;
  readonly host: string;
  readonly apiUsername: string;
  readonly apiPassword: string;
  readonly webhookDelayMs: number;
  readonly webhookRetryDelaysMs: readonly number[];
  readonly webhookTimeoutMs: number = DEFAULTS.webhookTimeoutMs;
  readonly usdRate: number;
  readonly initialBalances: Readonly<Balances>;
  /** Known only once listening (the port may be ephemeral); hosted checkout URLs start with it. */
  publicUrl = '';

  constructor(options: SandboxOptions = {}, env: NodeJS.ProcessEnv = process.env) {
    this.port = checkInteger(
      'port',
      options.port ?? envInteger(env, 'SANDBOX_PORT') ?? DEFAULTS.port,
      0,
      65_535,
    );
    this.host = options.host ?? DEFAULTS.host;
    this.apiUsername = options.apiUsername ?? (env.SANDBOX_API_USERNAME || DEFAULTS.apiUsername);
    this.apiPassword = options.apiPassword ?? (env.SANDBOX_API_PASSWORD || DEFAULTS.apiPassword);
    this.webhookDelayMs = checkInteger(
      'webhookDelayMs',
      options.webhookDelayMs ??
        envInteger(env, 'SANDBOX_WEBHOOK_DELAY_MS') ??
        DEFAULTS.webhookDelayMs,
      0,
      Number.MAX_SAFE_INTEGER,
    );
    this.webhookRetryDelaysMs = (options.webhookRetryDelaysMs ?? DEFAULTS.webhookRetryDelaysMs).map(
      (delay, i) => checkInteger(`webhookRetryDelaysMs[${i}]`, delay, 0, Number.MAX_SAFE_INTEGER),
    );
    this.usdRate = options.usdRate ?? DEFAULTS.usdRate;
    if (!Number.isFinite(this.usdRate) || this.usdRate <= 0) {
      throw new Error('Sandbox option usdRate must be a number greater than 0');
    }
    const balances = options.initialBalances ?? DEFAULTS.initialBalances;
    for (const wallet of ['local', 'USD'] as const) {
      if (!Number.isFinite(balances[wallet]) || balances[wallet] < 0) {
        throw new Error(`Sandbox option initialBalances.${wallet} must be a number of at least 0`);
      }
    }
    this.initialBalances = Object.freeze({ local: balances.local, USD: balances.USD });
    if (!this.apiUsername || !this.apiPassword) {
      throw new Error('Sandbox credentials must not be empty');
    }
  }
}

function envInteger(env: NodeJS.ProcessEnv, name: string): number | undefined {
  const raw = env[name];
  if (raw === undefined || raw.trim() === '') return undefined;
  if (!/^\d+$/.test(raw.trim())) throw new Error(`${name} must be a whole number, got "${raw}"`);
  return Number(raw);
}

function checkInteger(name: string, value: number, min: number, max: number): number {
  if (!Number.isInteger(value) || value < min || value > max) {
    throw new Error(`Sandbox option ${name} must be a whole number from ${min} to ${max}`);
  }
  return value;
}

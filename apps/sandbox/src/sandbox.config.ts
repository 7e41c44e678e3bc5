import type { LoggerService } from '@nestjs/common';
import { parseRateLimit } from './rate-limit';
import type { RateLimitSettings } from './rate-limit';

/** Options of `startSandbox`; each one wins over its environment variable. */
export interface SandboxOptions {
  /** Default: env SANDBOX_PORT or 4010; 0 = ephemeral. */
  port?: number;
  /** Default '127.0.0.1'. */
  host?: string;
  /** Default: env SANDBOX_API_USERNAME or 'sandbox'. */
  apiUsername?: string;
  /** Default: env SANDBOX_API_PASSWORD or 'sandbox-secret'. */
  apiPassword?: string;
  /**
   * Username of the default account (the one of apiUsername/apiPassword). Default: env
   * SANDBOX_ACCOUNT_USERNAME or the apiUsername. The second account is always `beta`.
   */
  accountUsername?: string;
  /** Delay before an outcome webhook. Default: env SANDBOX_WEBHOOK_DELAY_MS or 1000. */
  webhookDelayMs?: number;
  /** Waits between re-deliveries of a failed webhook. Default [500, 1000, 2000]. */
  webhookRetryDelaysMs?: number[];
  /** KES per USD, fixed. Default 130. */
  usdRate?: number;
  /** Of each account. Default { local: 1_000_000, USD: 10_000 }. */
  initialBalances?: { local: number; USD: number };
  /** Default: Nest's console logger; false silences. */
  logger?: false | LoggerService;
  /**
   * Answer API requests above this rate with 429 and `Retry-After`, unexecuted, as the real
   * service's undisclosed limits do. Default: no limit. The control API changes it at run time.
   */
  rateLimit?: RateLimitSettings;
}

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

/** The second sandbox account, the other side of transfers (`POST /api/v2/p2p`). */
export const SECOND_ACCOUNT = {
  username: 'beta',
  apiUsername: 'beta',
  apiPassword: 'beta-secret',
} as const;

export interface Balances {
  local: number;
  USD: number;
}

/** One account of the sandbox: its username, its API credentials and its two wallets. */
export interface SandboxAccount {
  /** The account username (`receiver_username` of transfers, path of the balances look-up). */
  readonly username: string;
  readonly apiUsername: string;
  readonly apiPassword: string;
  /** `user_id` of its webhooks. */
  readonly userId: string;
  readonly initialBalances: Readonly<Balances>;
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
  /** The rate limit at start (and after a reset). */
  readonly rateLimit?: Readonly<RateLimitSettings>;
  /** The default account (the API credentials of the options) first, then `beta`. */
  readonly accounts: readonly SandboxAccount[];
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
    if (options.rateLimit !== undefined) {
      try {
        this.rateLimit = Object.freeze(parseRateLimit(options.rateLimit));
      } catch (error) {
        throw new Error(`Sandbox option rateLimit: ${(error as Error).message}`);
      }
    }
    if (!this.apiUsername || !this.apiPassword) {
      throw new Error('Sandbox credentials must not be empty');
    }
    const username = options.accountUsername ?? (env.SANDBOX_ACCOUNT_USERNAME || this.apiUsername);
    if (!username) throw new Error('Sandbox option accountUsername must not be empty');
    if (username === SECOND_ACCOUNT.username || this.apiUsername === SECOND_ACCOUNT.apiUsername) {
      throw new Error(`The account and API username "${SECOND_ACCOUNT.username}" is reserved`);
    }
    this.accounts = Object.freeze([
      {
        username,
        apiUsername: this.apiUsername,
        apiPassword: this.apiPassword,
        userId: '00000000-0000-4000-a000-000000000001',
        initialBalances: this.initialBalances,
      },
      {
        ...SECOND_ACCOUNT,
        userId: '00000000-0000-4000-a000-000000000002',
        initialBalances: this.initialBalances,
      },
    ]);
  }

  /** The default account: the one of the `apiUsername` / `apiPassword` options. */
  get defaultAccount(): SandboxAccount {
    return this.accounts[0];
  }

  findAccount(username: string): SandboxAccount | undefined {
    return this.accounts.find((account) => account.username === username);
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

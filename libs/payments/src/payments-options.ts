import { Logger } from '@nestjs/common';
import {
  IsBoolean,
  IsIn,
  IsInt,
  IsObject,
  IsNotEmpty,
  IsOptional,
  IsString,
  Matches,
  Max,
  Min,
  MinLength,
  validateSync,
} from 'class-validator';
import { IsHttpUrl, readField } from './request-rules';
import { PaymentsFieldError, PaymentsValidationError } from './errors';
import { DEFAULT_BASE_URL, PAYMENTS_LOGGER_CONTEXT } from './payments.constants';
import { MIN_REDACTED_PASSWORD_LENGTH, redactsNumbers } from './secret-redactor';
import type { PaymentsJournalStore } from './journal/payments-journal.interfaces';
import {
  PaymentsDefaults,
  PaymentsModuleOptions,
  PaymentsProxyOptions,
  WALLET_TYPES,
  WalletType,
} from './payments-options.interface';
import { withSecretsHidden } from './secret-holders';
import { unknownKeyProblems } from './unknown-keys';

/** Options with every default of section 2.1 applied. */
export interface ResolvedPaymentsOptions {
  readonly apiUsername: string;
  readonly apiPassword: string;
  readonly baseUrl: string;
  readonly timeout: number;
  readonly walletType: WalletType;
  readonly defaultCallbackUrl: string | undefined;
  readonly defaultUsername: string | undefined;
  readonly debug: boolean;
  readonly maxRetries: number;
  readonly allowInsecureHttp: boolean;
  readonly correlateCallbacks: boolean;
  readonly retryAmbiguous: boolean;
  readonly maxRetryAfterMs: number;
  readonly proxy: PaymentsProxyOptions | undefined;
  readonly journal: PaymentsJournalStore | undefined;
  readonly journalFingerprintSecret: string | undefined;
}

const OPTION_DEFAULTS = {
  baseUrl: DEFAULT_BASE_URL,
  timeout: 30_000,
  walletType: 'local',
  debug: false,
  maxRetries: 2,
  allowInsecureHttp: false,
  correlateCallbacks: true,
  retryAmbiguous: true,
  maxRetryAfterMs: 5_000,
} as const;

/** Upper bound of `timeout` (10 minutes); Node timers overflow past 2^31 ms and fire at once. */
const MAX_TIMEOUT_MS = 600_000;

/** Upper bound of `maxRetries`: with 200 ms doubling, 10 retries already wait over three minutes. */
const MAX_RETRIES_LIMIT = 10;

class PaymentsOptionsSchema implements PaymentsModuleOptions {
  @IsString({ message: '$property must be a string' })
  @IsNotEmpty({ message: '$property is required and must not be empty' })
  // Basic authentication (RFC 7617) cannot carry a user-id with a colon.
  @Matches(/^[^:]*$/, { message: '$property must not contain ":"' })
  apiUsername!: string;

  @IsString({ message: '$property must be a string' })
  @IsNotEmpty({ message: '$property is required and must not be empty' })
  apiPassword!: string;

  @IsOptional()
  @IsHttpUrl()
  baseUrl?: string;

  @IsOptional()
  @IsInt({ message: '$property must be an integer number of milliseconds' })
  @Min(1, { message: '$property must be at least 1 ms' })
  @Max(MAX_TIMEOUT_MS, { message: `$property must be at most ${MAX_TIMEOUT_MS} ms` })
  timeout?: number;

  @IsOptional()
  @IsIn(WALLET_TYPES, { message: '$property must be "local" or "USD"' })
  walletType?: WalletType;

  @IsOptional()
  @IsHttpUrl()
  defaultCallbackUrl?: string;

  @IsOptional()
  @IsString({ message: '$property must be a string' })
  defaultUsername?: string;

  @IsOptional()
  @IsBoolean({ message: '$property must be a boolean' })
  debug?: boolean;

  @IsOptional()
  @IsInt({ message: '$property must be an integer' })
  @Min(0, { message: '$property must not be negative' })
  @Max(MAX_RETRIES_LIMIT, { message: `$property must be at most ${MAX_RETRIES_LIMIT}` })
  maxRetries?: number;

  @IsOptional()
  @IsBoolean({ message: '$property must be a boolean' })
  allowInsecureHttp?: boolean;

  @IsOptional()
  @IsBoolean({ message: '$property must be a boolean' })
  correlateCallbacks?: boolean;

  @IsOptional()
  @IsBoolean({ message: '$property must be a boolean' })
  retryAmbiguous?: boolean;

  @IsOptional()
  @IsInt({ message: '$property must be an integer number of milliseconds' })
  @Min(0, { message: '$property must not be negative' })
  @Max(MAX_TIMEOUT_MS, { message: `$property must be at most ${MAX_TIMEOUT_MS} ms` })
  maxRetryAfterMs?: number;

  @IsOptional()
  @IsObject({ message: '$property must be an object' })
  proxy?: PaymentsProxyOptions;

  @IsOptional()
  @IsObject({ message: '$property must be an object' })
  journal?: PaymentsJournalStore;

  @IsOptional()
  @IsString({ message: '$property must be a string' })
  @MinLength(16, { message: '$property must be at least 16 characters' })
  journalFingerprintSecret?: string;
}

const OPTION_KEYS = {
  apiUsername: 'credential',
  apiPassword: 'credential',
  baseUrl: 'setting',
  timeout: 'setting',
  walletType: 'setting',
  defaultCallbackUrl: 'setting',
  defaultUsername: 'setting',
  debug: 'setting',
  maxRetries: 'setting',
  allowInsecureHttp: 'setting',
  correlateCallbacks: 'setting',
  retryAmbiguous: 'setting',
  maxRetryAfterMs: 'setting',
  proxy: 'setting',
  journal: 'setting',
  journalFingerprintSecret: 'setting',
} as const satisfies Record<keyof PaymentsModuleOptions, 'credential' | 'setting'>;
const OPTION_NAMES = Object.keys(OPTION_KEYS) as (keyof PaymentsModuleOptions)[];
const OPTION_KEY_NAMES: ReadonlySet<string> = new Set(OPTION_NAMES);
const OPTIONS_TARGET = 'PaymentsModuleOptions';

function optionError(field: string, rule: string, message: string): PaymentsFieldError {
  return { field, rule, message };
}

/** The rules that say what kind of value an option takes. */
const KIND_RULES = new Set(['isString', 'isInt', 'isBoolean', 'isObject']);

/**
 * What to tell of one option's failed rules: a missing value, or one of the wrong kind, fails
 * every rule of the option, and only that is said (a string `timeout`, read from the environment
 * without `Number()`, is not "at least 1 ms"). Never the value: it may be a credential.
 */
function optionProblems(
  property: string,
  constraints: Record<string, string>,
  value: unknown,
): PaymentsFieldError[] {
  if (constraints.isNotEmpty !== undefined) {
    return [optionError(property, 'isNotEmpty', constraints.isNotEmpty)];
  }
  if (constraints.isInt !== undefined && (typeof value !== 'number' || Number.isNaN(value))) {
    const kind = typeof value === 'number' ? 'NaN' : `a ${typeof value}`;
    return [
      optionError(
        property,
        'isInt',
        `${property} must be a number, not ${kind} (convert an environment variable with Number())`,
      ),
    ];
  }
  const rules = Object.entries(constraints);
  const kinds = rules.filter(([rule]) => KIND_RULES.has(rule));
  return (kinds.length > 0 ? kinds : rules).map(([rule, message]) =>
    optionError(property, rule, message),
  );
}

function isLoopback(hostname: string): boolean {
  return hostname === 'localhost' || hostname === '[::1]' || /^127(?:\.\d{1,3}){3}$/.test(hostname);
}

/** Rules class-validator has no decorator for. Messages name the option, never its value. */
function checkBaseUrl(
  baseUrl: string | undefined,
  allowInsecureHttp: boolean,
): PaymentsFieldError[] {
  if (baseUrl === undefined || !URL.canParse(baseUrl)) return [];
  const url = new URL(baseUrl);
  const errors: PaymentsFieldError[] = [];
  if (url.username || url.password) {
    errors.push(
      optionError(
        'baseUrl',
        'noCredentialsInUrl',
        'baseUrl must not contain credentials: use apiUsername and apiPassword',
      ),
    );
  }
  if (url.protocol === 'http:' && !isLoopback(url.hostname) && !allowInsecureHttp) {
    errors.push(
      optionError(
        'baseUrl',
        'isSecureUrl',
        'baseUrl must use https: plain http would send the credentials in clear to a host that is not loopback (set allowInsecureHttp to allow it)',
      ),
    );
  }
  return errors;
}

/** The methods a journal store must have (docs/journal.md, "The store contract"). */
const JOURNAL_STORE_METHODS = ['create', 'replace', 'get', 'findByReference', 'list'] as const;

/** A journal store has every method of the contract. */
function checkJournal(journal: unknown): PaymentsFieldError[] {
  if (typeof journal !== 'object' || journal === null) return [];
  const missing = JOURNAL_STORE_METHODS.filter(
    (method) => typeof (journal as Record<string, unknown>)[method] !== 'function',
  );
  return missing.length === 0
    ? []
    : [
        optionError(
          'journal',
          'isPaymentsJournalStore',
          `journal must be a PaymentsJournalStore (missing ${missing.join(', ')})`,
        ),
      ];
}

/** An explicit proxy: its shape, and no plain-http target through it unless allowed. */
function checkProxy(
  proxy: PaymentsProxyOptions | undefined,
  baseUrl: string | undefined,
  allowInsecureHttp: boolean,
): PaymentsFieldError[] {
  if (proxy === undefined || typeof proxy !== 'object' || proxy === null) return [];
  const errors: PaymentsFieldError[] = [];
  if (typeof proxy.host !== 'string' || proxy.host === '') {
    errors.push(optionError('proxy', 'isProxy', 'proxy.host must be a non-empty string'));
  }
  if (!Number.isInteger(proxy.port) || proxy.port < 1 || proxy.port > 65_535) {
    errors.push(optionError('proxy', 'isProxy', 'proxy.port must be a port number'));
  }
  if (proxy.protocol !== undefined && proxy.protocol !== 'http' && proxy.protocol !== 'https') {
    errors.push(optionError('proxy', 'isProxy', 'proxy.protocol must be "http" or "https"'));
  }
  if (baseUrl !== undefined && baseUrl.startsWith('http:') && !allowInsecureHttp) {
    errors.push(
      optionError(
        'proxy',
        'isSecureUrl',
        'a proxy with a plain-http baseUrl would see the credentials in clear (use https, or set allowInsecureHttp)',
      ),
    );
  }
  return errors;
}

/**
 * Validates module options and applies the defaults of section 2.1.
 * @throws PaymentsValidationError naming each bad option (never a credential's value).
 */
export function resolvePaymentsOptions(options: PaymentsModuleOptions): ResolvedPaymentsOptions {
  if (typeof options !== 'object' || options === null) {
    throw new PaymentsValidationError(OPTIONS_TARGET, [
      optionError('options', 'isObject', 'options must be an object'),
    ]);
  }
  const schema = new PaymentsOptionsSchema();
  const errors: PaymentsFieldError[] = [];
  errors.push(
    ...unknownKeyProblems(options, OPTION_KEY_NAMES, (shown) => `${shown} is not an option`),
  );
  for (const name of OPTION_NAMES) {
    const value = readField(options, name);
    // An empty environment variable means "not set" for settings, but never for credentials,
    // nor for baseUrl: not set, it is the production service, which an empty staging variable
    // must not reach.
    if (name === 'baseUrl' && value === '') {
      errors.push(
        optionError(
          'baseUrl',
          'isNotEmpty',
          `baseUrl is empty: set the service's URL, or leave baseUrl out for the production service (${DEFAULT_BASE_URL})`,
        ),
      );
      continue;
    }
    if (value === undefined || (value === '' && OPTION_KEYS[name] === 'setting')) continue;
    Object.assign(schema, { [name]: value });
  }
  for (const error of validateSync(schema, { validationError: { target: false, value: false } })) {
    const value: unknown = (schema as unknown as Record<string, unknown>)[error.property];
    errors.push(...optionProblems(error.property, error.constraints ?? {}, value));
  }
  errors.push(...checkBaseUrl(schema.baseUrl, schema.allowInsecureHttp === true));
  errors.push(...checkProxy(schema.proxy, schema.baseUrl, schema.allowInsecureHttp === true));
  errors.push(...checkJournal(schema.journal));
  if (errors.length > 0) throw new PaymentsValidationError(OPTIONS_TARGET, errors);

  if (schema.apiPassword.length < MIN_REDACTED_PASSWORD_LENGTH) {
    new Logger(PAYMENTS_LOGGER_CONTEXT).warn(
      `apiPassword is shorter than ${MIN_REDACTED_PASSWORD_LENGTH} characters: too short to be told apart from ordinary text, so only the Basic token is redacted from logs, errors and _raw.`,
    );
  }
  // Asked of the redactor the calls use: a password trimmed of its newline, or the proxy's.
  if (redactsNumbers(schema)) {
    new Logger(PAYMENTS_LOGGER_CONTEXT).warn(
      "A password of this client (apiPassword, or the proxy's) is all digits, once trimmed: it " +
        'is redacted wherever that number appears, so an answer or a webhook whose amount equals it reads as [REDACTED] (an ' +
        'unreadable answer: in doubt, or answered 503). A password with letters too cannot be ' +
        'mistaken for an amount.',
    );
  }
  for (const name of ['apiUsername', 'apiPassword'] as const) {
    // Sent as given: a newline a secret file ends with makes every call a 401, told only then.
    if (schema[name] !== schema[name].trim()) {
      new Logger(PAYMENTS_LOGGER_CONTEXT).warn(
        `${name} begins or ends with whitespace (a newline from a secret file?): it is sent as it ` +
          'is, and the service will refuse it (401) unless that is part of it; trim it when reading it.',
      );
    }
  }
  if (
    schema.baseUrl !== undefined &&
    URL.canParse(schema.baseUrl) &&
    /\/api\/v\d+\/?$/.test(new URL(schema.baseUrl).pathname)
  ) {
    // Every operation's path starts with its own /api/vN (docs/wire-contract.md).
    new Logger(PAYMENTS_LOGGER_CONTEXT).warn(
      'baseUrl ends with an API version path (/api/vN): each call adds its own, so calls would go ' +
        "to /api/vN/api/v2/...; set the service's origin (https://api.payd.money), or your proxy's.",
    );
  }
  if (schema.baseUrl === undefined) {
    // Said once at boot: an app meant for a test environment would otherwise reach production.
    new Logger(PAYMENTS_LOGGER_CONTEXT).log(
      `baseUrl is not set: calls go to the production service, ${DEFAULT_BASE_URL}.`,
    );
  }
  const resolved: ResolvedPaymentsOptions = {
    apiUsername: schema.apiUsername,
    apiPassword: schema.apiPassword,
    baseUrl: schema.baseUrl ?? OPTION_DEFAULTS.baseUrl,
    timeout: schema.timeout ?? OPTION_DEFAULTS.timeout,
    walletType: schema.walletType ?? OPTION_DEFAULTS.walletType,
    defaultCallbackUrl: schema.defaultCallbackUrl || undefined,
    defaultUsername: schema.defaultUsername || undefined,
    debug: schema.debug ?? OPTION_DEFAULTS.debug,
    maxRetries: schema.maxRetries ?? OPTION_DEFAULTS.maxRetries,
    allowInsecureHttp: schema.allowInsecureHttp ?? OPTION_DEFAULTS.allowInsecureHttp,
    correlateCallbacks: schema.correlateCallbacks ?? OPTION_DEFAULTS.correlateCallbacks,
    retryAmbiguous: schema.retryAmbiguous ?? OPTION_DEFAULTS.retryAmbiguous,
    maxRetryAfterMs: schema.maxRetryAfterMs ?? OPTION_DEFAULTS.maxRetryAfterMs,
    proxy: schema.proxy,
    journal: schema.journal,
    journalFingerprintSecret: schema.journalFingerprintSecret || undefined,
  };
  return withSecretsHidden(resolved, ['apiPassword', 'journalFingerprintSecret', 'proxy']);
}

/** The `defaults` object of section 2.2. */
export function toDefaults(options: ResolvedPaymentsOptions): PaymentsDefaults {
  return Object.freeze({
    username: options.defaultUsername,
    callbackUrl: options.defaultCallbackUrl,
    walletType: options.walletType,
  });
}

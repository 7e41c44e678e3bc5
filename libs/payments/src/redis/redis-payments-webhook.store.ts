import { randomUUID } from 'node:crypto';
import type { OnModuleDestroy } from '@nestjs/common';
import type { Redis } from 'ioredis';
import {
  connectRedis,
  quit,
  REDIS_CONNECTION_OPTION_NAMES,
  type RedisConnectionOptions,
  redisServerCheck,
} from './redis-connection';
import { assertKnownOptions, textOption, wholeNumberOption } from '../known-options';
import {
  MAX_REFERENCES_PER_KEY,
  type PaymentsWebhookClaim,
  type PaymentsWebhookStore,
} from '../webhooks/payments-webhook.store';
import { printsAsNameOnly } from '../secret-holders';

/** Options of {@link RedisPaymentsWebhookStore}: a client, or what to connect with. */
export interface RedisPaymentsWebhookStoreOptions extends RedisConnectionOptions {
  /** Prefix of every key the store writes. Default `malipo:webhook:`. */
  keyPrefix?: string;
  /** How long a processed event is remembered (ms). Default 30 days: longer than any re-delivery. */
  doneTtlMs?: number;
  /** How long the references of an idempotency key are kept after the last one (ms). Default 30 days. */
  journalTtlMs?: number;
}

const DAY_MS = 24 * 60 * 60 * 1000;

/** Value of a processed event's key; a claim holds a random UUID instead, never this. */
const DONE = 'done';

/**
 * Deletes the claim only if it is still ours: once our lease ended, another delivery may have
 * claimed the event, and its claim must stay.
 */
const RELEASE_SCRIPT =
  "if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) else return 0 end";

/**
 * KEYS: the bucket. ARGV: tokens a second, burst. A token bucket on Redis's own clock (`TIME`),
 * so that instances whose clocks differ share one budget; returns 1 when a token was taken.
 */
const TAKE_TOKEN_SCRIPT = `
local rate = tonumber(ARGV[1])
local burst = tonumber(ARGV[2])
local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
local state = redis.call('HMGET', KEYS[1], 't', 'at')
local tokens = tonumber(state[1]) or burst
local at = tonumber(state[2]) or now
tokens = math.min(burst, tokens + math.max(0, now - at) * rate / 1000)
local taken = 0
if tokens >= 1 then
  tokens = tokens - 1
  taken = 1
end
redis.call('HSET', KEYS[1], 't', tostring(tokens), 'at', now)
redis.call('PEXPIRE', KEYS[1], math.ceil(burst / rate * 1000) + 1000)
return taken
`;

/** Lets a `SET NX` that lost to a key expiring just then look again, a bounded number of times. */
const CLAIM_ATTEMPTS = 3;

const OPTION_NAMES: Readonly<Record<keyof RedisPaymentsWebhookStoreOptions, true>> = {
  ...REDIS_CONNECTION_OPTION_NAMES,
  keyPrefix: true,
  doneTtlMs: true,
  journalTtlMs: true,
};

/** A time to live of the store's options, in ms. */
function ttlOption(name: 'doneTtlMs' | 'journalTtlMs', value: number): number {
  return wholeNumberOption('RedisPaymentsWebhookStore', name, value, { min: 1, unit: ' (ms)' });
}

/**
 * A {@link PaymentsWebhookStore} on Redis, shared by every instance of the app behind a load
 * balancer:
 * - `claim`: `SET <prefix>event:<key> <random token> NX PX <lease>`; a key that holds `done` is
 *   processed, any other value is another delivery's live claim (`busy`). The lease expires by
 *   itself, so the claim of an instance that crashed mid-handler is taken over after it;
 * - `complete`: `SET <key> done PX <doneTtlMs>`;
 * - `release`: deletes the key only if it still holds this store's token (a tiny Lua script);
 * - `takeLookupToken`: a token bucket per budget on Redis's clock, so the look-up budget of
 *   webhook confirmation is shared by all instances;
 * - `recordReference`: one `MULTI` over a sorted set `<prefix>refs:<idempotencyKey>` (the score is
 *   when a reference was first seen, so references come oldest first), bounded to the first one
 *   and the latest ones, expiring `journalTtlMs` after the last.
 *
 * Every command fails within `commandTimeout` (1 s by default for a client the store makes): the
 * delivery is then answered 503 and the service delivers it again.
 */
export class RedisPaymentsWebhookStore implements PaymentsWebhookStore, OnModuleDestroy {
  /** The client; made by the store unless given as `client`. */
  readonly client: Redis;
  private readonly ownsClient: boolean;
  /** The check of Redis's eviction policy, at the first `claim`. */
  private readonly checkServer: () => void;
  private readonly prefix: string;
  private readonly doneTtlMs: number;
  private readonly journalTtlMs: number;
  /** The token of each claim this store holds. */
  private readonly tokens = new Map<string, string>();
  private closing?: Promise<void>;

  constructor(options: RedisPaymentsWebhookStoreOptions = {}) {
    assertKnownOptions('RedisPaymentsWebhookStore', options, OPTION_NAMES);
    this.prefix =
      textOption('RedisPaymentsWebhookStore', 'keyPrefix', options.keyPrefix) ?? 'malipo:webhook:';
    this.doneTtlMs = ttlOption('doneTtlMs', options.doneTtlMs ?? 30 * DAY_MS);
    this.journalTtlMs = ttlOption('journalTtlMs', options.journalTtlMs ?? 30 * DAY_MS);
    ({ client: this.client, ownsClient: this.ownsClient } = connectRedis(
      options,
      'RedisPaymentsWebhookStore',
      'webhook deliveries are answered 503',
    ));
    this.checkServer = redisServerCheck(this.client, 'RedisPaymentsWebhookStore', {
      whenEvicted: "an evicted delivery's record lets its handlers run again",
      whenRestarted:
        'the handlers of deliveries it forgot run again when the service delivers them again',
    });
  }

  async claim(key: string, leaseMs: number): Promise<PaymentsWebhookClaim> {
    this.checkServer();
    const eventKey = this.eventKey(key);
    for (let attempt = 1; ; attempt += 1) {
      const token = randomUUID();
      let answer: string | null;
      try {
        answer = await this.client.set(eventKey, token, 'PX', leaseMs, 'NX');
      } catch (error) {
        // A timed-out SET may still run once Redis answers again (it was written to the socket),
        // leaving a claim nobody holds until its lease ends. The release, queued behind it on the
        // same connection, undoes it then; it fails quietly if the connection is gone.
        this.client.eval(RELEASE_SCRIPT, 1, eventKey, token).catch(() => undefined);
        throw error;
      }
      if (answer === 'OK') {
        this.tokens.set(key, token);
        return 'claimed';
      }
      const value = await this.client.get(eventKey);
      if (value === DONE) return 'done';
      // null: the key expired between the two commands; claim again.
      if (value !== null || attempt >= CLAIM_ATTEMPTS) return 'busy';
    }
  }

  // The token goes whether or not Redis answered: a claim given up or completed is not released
  // again, and a store that lives for months must not keep one per failed write.
  async complete(key: string): Promise<void> {
    try {
      await this.client.set(this.eventKey(key), DONE, 'PX', this.doneTtlMs);
    } finally {
      this.tokens.delete(key);
    }
  }

  async release(key: string): Promise<void> {
    const token = this.tokens.get(key);
    if (token === undefined) return;
    try {
      await this.client.eval(RELEASE_SCRIPT, 1, this.eventKey(key), token);
    } finally {
      this.tokens.delete(key);
    }
  }

  async recordReference(idempotencyKey: string, reference: string): Promise<readonly string[]> {
    const key = `${this.prefix}refs:${idempotencyKey}`;
    const results = await this.client
      .multi()
      .zadd(key, 'NX', String(Date.now()), reference)
      // Keeps rank 0 (the original execution) and the latest MAX - 1.
      .zremrangebyrank(key, 1, -MAX_REFERENCES_PER_KEY)
      .pexpire(key, this.journalTtlMs)
      .zrange(key, '0', '-1')
      .exec();
    const failed = results?.find(([error]) => error);
    if (!results || failed) throw failed?.[0] ?? new Error('The Redis transaction was aborted');
    return results[3][1] as string[];
  }

  /**
   * Takes a token of the look-up budget `bucket`, shared by every instance on this Redis: one
   * script (`<prefix>budget:<bucket>`, expiring once full again).
   */
  async takeLookupToken(bucket: string, perSecond: number, burst: number): Promise<boolean> {
    const taken = await this.client.eval(
      TAKE_TOKEN_SCRIPT,
      1,
      `${this.prefix}budget:${bucket}`,
      perSecond,
      burst,
    );
    return taken === 1;
  }

  /** Closes the connection if the store made it (idempotent); a given `client` stays open. */
  close(): Promise<void> {
    this.closing ??= this.ownsClient ? quit(this.client) : Promise.resolve();
    return this.closing;
  }

  onModuleDestroy(): Promise<void> {
    return this.close();
  }

  private eventKey(key: string): string {
    return `${this.prefix}event:${key}`;
  }
}

printsAsNameOnly(RedisPaymentsWebhookStore.prototype, 'RedisPaymentsWebhookStore');

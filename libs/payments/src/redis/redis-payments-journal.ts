import { randomUUID } from 'node:crypto';
import { Logger } from '@nestjs/common';
import type { Redis } from 'ioredis';
import {
  journalEntryReferences,
  type PaymentsJournalEntry,
  type PaymentsJournalQuery,
  type PaymentsJournalState,
  type PaymentsJournalStore,
} from '../journal/payments-journal.interfaces';
import {
  connectRedis,
  isCluster,
  keyPrefixOf,
  quit,
  REDIS_CONNECTION_OPTION_NAMES,
  redisLocation,
  type RedisConnectionOptions,
  redisServerCheck,
} from './redis-connection';
import {
  REDIS_REPLICATION_OPTION_NAMES,
  type RedisReplicationOptions,
  type ReplicatedWrite,
  replicatedWrites,
} from './redis-replication';
import { printsAsNameOnly } from '../secret-holders';
import {
  assertKnownOptions,
  moduleOptionError,
  textOption,
  wholeNumberOption,
} from '../known-options';

/** Options of {@link RedisPaymentsJournal}: a client, or what to connect with. */
export interface RedisPaymentsJournalOptions
  extends RedisConnectionOptions, RedisReplicationOptions {
  /**
   * Prefix of every key the journal writes. Default `malipo:journal:`. On Redis Cluster, give it a
   * hash tag (`{malipo-journal}:`): an entry and its indexes change in one script. A Cluster
   * client with a prefix that holds none is refused.
   */
  keyPrefix?: string;
  /** How long an entry is kept after its last change (ms). Default 30 days. */
  ttlMs?: number;
}

const DAY_MS = 24 * 60 * 60 * 1000;

/** States an entry is listed under in the `open` index: the ones a reconcile pass looks at. */
const OPEN_STATES: ReadonlySet<PaymentsJournalState> = new Set(['started', 'accepted', 'in_doubt']);

/** Entries read per round trip when listing. */
const LIST_PAGE = 500;

/** A key of a sorted-set index and its score, as Redis writes it. */
interface IndexPosition {
  readonly member: string;
  readonly score: string;
}

/**
 * Lua: an open entry's keys (entry, reference) never expire, a settled one's expire `ttl` ms from
 * now: an entry that may have executed leaves the journal only once it is settled.
 */
const KEEP_FUNCTION = `
local function keep(key, open, ttl)
  if open then redis.call('PERSIST', key) else redis.call('PEXPIRE', key, ttl) end
end
`;

/**
 * KEYS: entry, by-start index, open index, mark, then the key of each reference the entry is found
 * by. ARGV: json, ttl, start score, idempotency key, open (1/0), oldest start score kept in the
 * by-start index, a mark to set when there is none. Adds the entry unless its key holds one. Each
 * create trims the by-start index of entries started more than `ttl` ago, so that it holds what
 * was started within `ttl`; open entries stay listed through the open index, which holds nothing
 * else and so needs no expiry. Answers whether it added the entry, the entry, and the journal's
 * mark: a key that never expires, so that a new one tells a Redis that lost its data.
 */
const CREATE_SCRIPT = `${KEEP_FUNCTION}
local mark = redis.call('GET', KEYS[4])
if not mark then
  mark = ARGV[7]
  redis.call('SET', KEYS[4], mark)
end
local existing = redis.call('HGET', KEYS[1], 'e')
if existing then return {0, existing, mark} end
local open = ARGV[5] == '1'
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', '(' .. ARGV[6])
redis.call('ZADD', KEYS[2], ARGV[3], ARGV[4])
redis.call('PEXPIRE', KEYS[2], ARGV[2])
redis.call('HSET', KEYS[1], 'v', 1, 'e', ARGV[1])
keep(KEYS[1], open, ARGV[2])
if open then
  redis.call('ZADD', KEYS[3], ARGV[3], ARGV[4])
  redis.call('PERSIST', KEYS[3])
end
for i = 5, #KEYS do
  if redis.call('SET', KEYS[i], ARGV[4], 'NX') then keep(KEYS[i], open, ARGV[2]) end
end
return {1, ARGV[1], mark}
`;

/**
 * KEYS: entry, open index, by-start index, then the key of each reference the entry is found by.
 * ARGV: json, version it replaces, ttl, start score, idempotency key, open (1/0). Replaces the
 * entry only over that version. The by-start index lives as long as its last changed entry: an
 * entry changed after the last create must stay listed. A reference another entry held first
 * stays that entry's.
 */
const REPLACE_SCRIPT = `${KEEP_FUNCTION}
local version = redis.call('HGET', KEYS[1], 'v')
if not version or tonumber(version) ~= tonumber(ARGV[2]) then return 0 end
local open = ARGV[6] == '1'
redis.call('HSET', KEYS[1], 'v', tonumber(ARGV[2]) + 1, 'e', ARGV[1])
keep(KEYS[1], open, ARGV[3])
redis.call('ZADD', KEYS[3], ARGV[4], ARGV[5])
redis.call('PEXPIRE', KEYS[3], ARGV[3])
if open then
  redis.call('ZADD', KEYS[2], ARGV[4], ARGV[5])
  redis.call('PERSIST', KEYS[2])
else
  redis.call('ZREM', KEYS[2], ARGV[5])
end
for i = 4, #KEYS do
  redis.call('SET', KEYS[i], ARGV[5], 'NX')
  if redis.call('GET', KEYS[i]) == ARGV[5] then keep(KEYS[i], open, ARGV[3]) end
end
return 1
`;

interface JournalCommands {
  malipoJournalCreate(...args: (string | number)[]): Promise<[number, string, string]>;
  malipoJournalReplace(...args: (string | number)[]): Promise<number>;
}

const OPTION_NAMES: Readonly<Record<keyof RedisPaymentsJournalOptions, true>> = {
  ...REDIS_CONNECTION_OPTION_NAMES,
  ...REDIS_REPLICATION_OPTION_NAMES,
  keyPrefix: true,
  ttlMs: true,
};

/**
 * A {@link PaymentsJournalStore} on Redis (ioredis), shared by every instance of the app, and
 * kept across restarts as far as your Redis persists (AOF with `appendfsync everysec` or
 * stricter for a journal of money):
 * - an entry is a hash `<prefix>entry:<key>` holding its version and JSON; `create` and `replace`
 *   are Lua scripts, so each is atomic per key across instances;
 * - `<prefix>started` (a sorted set by start time) lists entries, `<prefix>open` the ones not
 *   final, `<prefix>ref:<reference>` finds an entry by the service's reference (its own or one of
 *   its `otherExecutions`);
 * - an entry that is settled (`succeeded`, `failed`, `refused`) and its reference key expire
 *   `ttlMs` (default 30 days) after its last change; an open one (`started`, `accepted`,
 *   `in_doubt`) never expires: it stays until it is settled, so that nothing that may have
 *   executed leaves the journal unseen. `started` holds the entries started within `ttlMs`.
 *
 * Every command fails within `commandTimeout` (1 s by default for a client the journal makes):
 * a call whose intent cannot be written is then not sent (`JOURNAL_UNAVAILABLE`).
 */
export class RedisPaymentsJournal implements PaymentsJournalStore {
  /** The client; made by the journal unless given as `client`. */
  readonly client: Redis;
  /** The Redis database and key prefix of the entries (`127.0.0.1:6379/0 malipo:journal:`). */
  readonly location: string | undefined;
  private readonly commands: JournalCommands;
  private readonly replicated: ReplicatedWrite;
  private readonly ownsClient: boolean;
  private readonly prefix: string;
  private readonly ttlMs: number;
  private closing?: Promise<void>;
  private readonly logger = new Logger('RedisPaymentsJournal');
  /** The journal's mark this store met first (then the latest): a new one tells a loss. */
  private mark?: string;
  /** The check of Redis's eviction policy, persistence and clock, at the first `create`. */
  private readonly checkServer: () => void;

  constructor(options: RedisPaymentsJournalOptions = {}) {
    assertKnownOptions('RedisPaymentsJournal', options, OPTION_NAMES);
    this.prefix =
      textOption('RedisPaymentsJournal', 'keyPrefix', options.keyPrefix) ?? 'malipo:journal:';
    this.ttlMs = wholeNumberOption('RedisPaymentsJournal', 'ttlMs', options.ttlMs ?? 30 * DAY_MS, {
      min: 1,
      unit: ' (ms)',
    });
    const replicated = replicatedWrites(options, 'RedisPaymentsJournal');
    // A Cluster client is checked before it is touched: a refused option leaves it as given.
    if (
      options.client !== undefined &&
      isCluster(options.client) &&
      !hasHashTag(keyPrefixOf(options.client) + this.prefix)
    ) {
      throw moduleOptionError(
        'RedisPaymentsJournal',
        'keyPrefix',
        'hasHashTag',
        'keyPrefix must hold a hash tag with a Cluster client, such as {malipo-journal}: (one ' +
          "script writes an entry and its indexes, which must share a node's slot)",
      );
    }
    ({ client: this.client, ownsClient: this.ownsClient } = connectRedis(
      options,
      'RedisPaymentsJournal',
      'money-moving calls are refused unsent (JOURNAL_UNAVAILABLE)',
    ));
    // Defined on the client (EVALSHA, loaded once): a given client gains two commands.
    // No fixed number of keys: each call names its entry's reference keys (docs/journal.md).
    this.client.defineCommand('malipoJournalCreate', { lua: CREATE_SCRIPT });
    this.client.defineCommand('malipoJournalReplace', { lua: REPLACE_SCRIPT });
    this.commands = this.client as unknown as JournalCommands;
    const database = redisLocation(this.client);
    this.location = database === undefined ? undefined : `${database} ${this.prefix}`;
    this.replicated = replicated(this.client);
    this.checkServer = redisServerCheck(this.client, 'RedisPaymentsJournal', {
      whenEvicted: "an evicted entry's key is sent again, and an evicted entry in doubt is lost",
      whenRestarted: 'the journal forgets calls that may have executed: their keys are sent again',
      clock: true,
    });
  }

  async create(
    entry: PaymentsJournalEntry,
  ): Promise<{ created: boolean; entry: PaymentsJournalEntry }> {
    this.checkServer();
    const startedAtMs = Date.parse(entry.startedAt);
    const references = this.referenceKeys(entry);
    const [created, json, mark] = await this.replicated(
      this.commands.malipoJournalCreate(
        4 + references.length,
        this.entryKey(entry.idempotencyKey),
        this.key('started'),
        this.key('open'),
        this.key('mark'),
        ...references,
        JSON.stringify(entry),
        this.ttlMs,
        startedAtMs,
        entry.idempotencyKey,
        OPEN_STATES.has(entry.state) ? '1' : '0',
        startedAtMs - this.ttlMs,
        randomUUID(),
      ),
    );
    this.noticeMark(mark);
    return { created: created === 1, entry: JSON.parse(json) as PaymentsJournalEntry };
  }

  async replace(next: PaymentsJournalEntry): Promise<boolean> {
    const references = this.referenceKeys(next);
    const replaced = await this.replicated(
      this.commands.malipoJournalReplace(
        3 + references.length,
        this.entryKey(next.idempotencyKey),
        this.key('open'),
        this.key('started'),
        ...references,
        JSON.stringify(next),
        next.version - 1,
        this.ttlMs,
        Date.parse(next.startedAt),
        next.idempotencyKey,
        OPEN_STATES.has(next.state) ? '1' : '0',
      ),
    );
    return replaced === 1;
  }

  async get(idempotencyKey: string): Promise<PaymentsJournalEntry | undefined> {
    const json = await this.client.hget(this.entryKey(idempotencyKey), 'e');
    return json === null ? undefined : (JSON.parse(json) as PaymentsJournalEntry);
  }

  async findByReference(reference: string): Promise<PaymentsJournalEntry | undefined> {
    const key = await this.client.get(this.referenceKey(reference));
    return key === null ? undefined : this.get(key);
  }

  async list(query: PaymentsJournalQuery = {}): Promise<PaymentsJournalEntry[]> {
    const states = query.states && new Set(query.states);
    const wanted = (entry: PaymentsJournalEntry): boolean => !states || states.has(entry.state);
    const min = query.since === undefined ? '-inf' : String(query.since.getTime());
    const asked = states === undefined ? undefined : [...states];
    // The open index is enough when only open states are asked for.
    if (asked?.every((state) => OPEN_STATES.has(state))) {
      return this.listIndex(this.key('open'), min, '+inf', wanted);
    }
    const found = await this.listIndex(this.key('started'), min, '+inf', wanted);
    if (asked !== undefined && !asked.some((state) => OPEN_STATES.has(state))) return found;
    // Open entries never expire, but `started` holds only the last `ttlMs` of starts: older open
    // ones are listed from the open index (a day's margin for the clocks of other instances).
    const listed = new Set(found.map((entry) => entry.idempotencyKey));
    const older = (
      await this.listIndex(this.key('open'), min, String(Date.now() - this.ttlMs + DAY_MS), wanted)
    ).filter((entry) => !listed.has(entry.idempotencyKey));
    if (older.length === 0) return found;
    return [...older, ...found].sort((a, b) => Date.parse(a.startedAt) - Date.parse(b.startedAt));
  }

  /** The entries of `index` with scores from `min` to `max` that are `wanted`, in its order. */
  private async listIndex(
    index: string,
    min: string,
    max: string,
    wanted: (entry: PaymentsJournalEntry) => boolean,
  ): Promise<PaymentsJournalEntry[]> {
    const found: PaymentsJournalEntry[] = [];
    // Paged by the last key read, not by offset: entries settled meanwhile leave the open index,
    // and an offset would then step over as many entries that are still open.
    let after: IndexPosition | undefined;
    for (;;) {
      const page = await this.indexPage(index, min, max, after);
      if (page.length === 0) break;
      after = page[page.length - 1];
      const keys = page.map((position) => position.member);
      const pipeline = this.client.pipeline();
      for (const key of keys) pipeline.hget(this.entryKey(key), 'e');
      const results = (await pipeline.exec()) ?? [];
      const expired: string[] = [];
      results.forEach(([error, json], position) => {
        if (error) throw error;
        if (json === null) expired.push(keys[position]);
        else {
          const entry = JSON.parse(json as string) as PaymentsJournalEntry;
          if (wanted(entry)) found.push(entry);
        }
      });
      if (expired.length === 0) continue;
      // An open entry never expires: one that is gone was evicted, deleted or lost by Redis. Said
      // before its index member goes, which is the last trace of it.
      if (index === this.key('open')) {
        this.logger.error(
          `${expired.length} open entr${expired.length === 1 ? 'y' : 'ies'} of the payments ` +
            `journal (started, accepted or in doubt) are gone from Redis (evicted, deleted, or ` +
            `lost by Redis): calls that may have executed, no longer journaled, whose keys would ` +
            `be sent again. Idempotency keys: ${expired.slice(0, 20).join(', ')}` +
            `${expired.length > 20 ? ', ...' : ''} (docs/journal.md, "The two stores")`,
        );
      }
      // Index members of expired entries are dropped as they are met.
      await this.client.zrem(index, ...expired);
    }
    return found;
  }

  /**
   * Up to a page of `index` from `min` to `max`, in its order (score, then key bytes), after
   * `after`: the rest of `after`'s score (keys that sort after it), then higher scores.
   */
  private async indexPage(
    index: string,
    min: string,
    max: string,
    after: IndexPosition | undefined,
  ): Promise<IndexPosition[]> {
    const page: IndexPosition[] = [];
    if (after !== undefined) {
      const last = Buffer.from(after.member);
      for (const member of await this.client.zrangebyscore(index, after.score, after.score)) {
        if (Buffer.compare(Buffer.from(member), last) > 0)
          page.push({ score: after.score, member });
      }
    }
    const above = after === undefined ? min : `(${after.score}`;
    const scored = await this.client.zrangebyscore(
      index,
      above,
      max,
      'WITHSCORES',
      'LIMIT',
      0,
      LIST_PAGE,
    );
    for (let position = 0; position < scored.length; position += 2) {
      page.push({ member: scored[position], score: scored[position + 1] });
    }
    return page;
  }

  /** Closes the connection if the journal made it (idempotent); a given `client` stays open. */
  close(): Promise<void> {
    this.closing ??= this.ownsClient ? quit(this.client) : Promise.resolve();
    return this.closing;
  }

  private key(name: string): string {
    return `${this.prefix}${name}`;
  }

  private entryKey(idempotencyKey: string): string {
    return `${this.prefix}entry:${idempotencyKey}`;
  }

  private referenceKey(reference: string): string {
    return `${this.prefix}ref:${reference}`;
  }

  /** The keys of the references `entry` is found by (its own, and its other executions'). */
  /**
   * Logs, at error level, a journal mark other than the one this store met first: Redis lost the
   * journal's keys since (a restart without persistence, a `FLUSHALL`, a failover to a replica
   * that had not received them). It cannot say which: the calls journaled before are unknown to
   * it, and the next mark is taken as the journal's.
   */
  private noticeMark(mark: string): void {
    if (this.mark !== undefined && this.mark !== mark) {
      this.logger.error(
        `Redis lost the payments journal's entries (under ${this.prefix}): its mark, written with ` +
          'its first entry and never expiring, is new (a Redis restarted without persistence, a ' +
          'FLUSHALL or FLUSHDB, a failover to a replica that had not received it). Every call ' +
          'journaled before is unknown to it: a retry under one of their keys is sent again, and ' +
          "inDoubt() no longer lists them. Check the service's transactions of that time " +
          '(docs/journal.md, "What happens when something breaks")',
      );
    }
    this.mark = mark;
  }

  private referenceKeys(entry: PaymentsJournalEntry): string[] {
    return journalEntryReferences(entry).map((reference) => this.referenceKey(reference));
  }
}

printsAsNameOnly(RedisPaymentsJournal.prototype, 'RedisPaymentsJournal');

/**
 * Whether every key under `prefix` has the same Redis Cluster hash slot: the prefix holds a hash
 * tag, a `{` followed later by a `}` with something between (Redis hashes the first such tag).
 */
function hasHashTag(prefix: string): boolean {
  const open = prefix.indexOf('{');
  return open >= 0 && prefix.indexOf('}', open + 1) > open + 1;
}

import type { Redis } from 'ioredis';
import type {
  PaymentsJournalEntry,
  PaymentsJournalQuery,
  PaymentsJournalState,
  PaymentsJournalStore,
} from '../journal/payments-journal.interfaces';
import { connectRedis, quit, type RedisConnectionOptions } from './redis-connection';

/** Options of {@link RedisPaymentsJournal}: a client, or what to connect with. */
export interface RedisPaymentsJournalOptions extends RedisConnectionOptions {
  /**
   * Prefix of every key the journal writes. Default `malipo:journal:`. On Redis Cluster, give it a
   * hash tag (`{malipo-journal}:`): an entry and its indexes change in one script.
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
 * KEYS: entry, by-start index, open index, reference key. ARGV: json, ttl, start score, idempotency
 * key, open (1/0), has reference (1/0). Adds the entry unless its key holds one.
 */
const CREATE_SCRIPT = `
local existing = redis.call('HGET', KEYS[1], 'e')
if existing then return {0, existing} end
redis.call('HSET', KEYS[1], 'v', 1, 'e', ARGV[1])
redis.call('PEXPIRE', KEYS[1], ARGV[2])
redis.call('ZADD', KEYS[2], ARGV[3], ARGV[4])
redis.call('PEXPIRE', KEYS[2], ARGV[2])
if ARGV[5] == '1' then
  redis.call('ZADD', KEYS[3], ARGV[3], ARGV[4])
  redis.call('PEXPIRE', KEYS[3], ARGV[2])
end
if ARGV[6] == '1' and redis.call('SET', KEYS[4], ARGV[4], 'NX', 'PX', ARGV[2]) then end
return {1, ARGV[1]}
`;

/**
 * KEYS: entry, open index, reference key, by-start index. ARGV: json, version it replaces, ttl,
 * start score, idempotency key, open (1/0), has reference (1/0). Replaces the entry only over that
 * version. The by-start index lives as long as its last changed entry: an entry changed after the
 * last create must stay listed.
 */
const REPLACE_SCRIPT = `
local version = redis.call('HGET', KEYS[1], 'v')
if not version or tonumber(version) ~= tonumber(ARGV[2]) then return 0 end
redis.call('HSET', KEYS[1], 'v', tonumber(ARGV[2]) + 1, 'e', ARGV[1])
redis.call('PEXPIRE', KEYS[1], ARGV[3])
redis.call('ZADD', KEYS[4], ARGV[4], ARGV[5])
redis.call('PEXPIRE', KEYS[4], ARGV[3])
if ARGV[6] == '1' then
  redis.call('ZADD', KEYS[2], ARGV[4], ARGV[5])
  redis.call('PEXPIRE', KEYS[2], ARGV[3])
else
  redis.call('ZREM', KEYS[2], ARGV[5])
end
if ARGV[7] == '1' then
  if not redis.call('SET', KEYS[3], ARGV[5], 'NX', 'PX', ARGV[3]) then
    if redis.call('GET', KEYS[3]) == ARGV[5] then redis.call('PEXPIRE', KEYS[3], ARGV[3]) end
  end
end
return 1
`;

interface JournalCommands {
  malipoJournalCreate(...args: (string | number)[]): Promise<[number, string]>;
  malipoJournalReplace(...args: (string | number)[]): Promise<number>;
}

/**
 * A {@link PaymentsJournalStore} on Redis (ioredis), shared by every instance of the app, and
 * kept across restarts as far as your Redis persists (AOF with `appendfsync everysec` or
 * stricter for a journal of money):
 * - an entry is a hash `<prefix>entry:<key>` holding its version and JSON; `create` and `replace`
 *   are Lua scripts, so each is atomic per key across instances;
 * - `<prefix>started` (a sorted set by start time) lists entries, `<prefix>open` the ones not
 *   final, `<prefix>ref:<reference>` finds an entry by the service's reference;
 * - everything expires `ttlMs` (default 30 days) after the entry's last change.
 *
 * Every command fails within `commandTimeout` (1 s by default for a client the journal makes):
 * a call whose intent cannot be written is then not sent (`JOURNAL_UNAVAILABLE`).
 */
export class RedisPaymentsJournal implements PaymentsJournalStore {
  /** The client; made by the journal unless given as `client`. */
  readonly client: Redis;
  private readonly commands: JournalCommands;
  private readonly ownsClient: boolean;
  private readonly prefix: string;
  private readonly ttlMs: number;
  private closing?: Promise<void>;

  constructor(options: RedisPaymentsJournalOptions = {}) {
    this.prefix = options.keyPrefix ?? 'malipo:journal:';
    const ttlMs = options.ttlMs ?? 30 * DAY_MS;
    if (!Number.isSafeInteger(ttlMs) || ttlMs < 1) {
      throw new Error('RedisPaymentsJournal: ttlMs must be a positive integer (ms)');
    }
    this.ttlMs = ttlMs;
    ({ client: this.client, ownsClient: this.ownsClient } = connectRedis(
      options,
      'RedisPaymentsJournal',
      'money-moving calls are refused unsent (JOURNAL_UNAVAILABLE)',
    ));
    // Defined on the client (EVALSHA, loaded once): a given client gains two commands.
    this.client.defineCommand('malipoJournalCreate', { numberOfKeys: 4, lua: CREATE_SCRIPT });
    this.client.defineCommand('malipoJournalReplace', { numberOfKeys: 4, lua: REPLACE_SCRIPT });
    this.commands = this.client as unknown as JournalCommands;
  }

  async create(
    entry: PaymentsJournalEntry,
  ): Promise<{ created: boolean; entry: PaymentsJournalEntry }> {
    const [created, json] = await this.commands.malipoJournalCreate(
      this.entryKey(entry.idempotencyKey),
      this.key('started'),
      this.key('open'),
      this.referenceKey(entry.reference),
      JSON.stringify(entry),
      this.ttlMs,
      Date.parse(entry.startedAt),
      entry.idempotencyKey,
      OPEN_STATES.has(entry.state) ? '1' : '0',
      entry.reference === undefined ? '0' : '1',
    );
    return { created: created === 1, entry: JSON.parse(json) as PaymentsJournalEntry };
  }

  async replace(next: PaymentsJournalEntry): Promise<boolean> {
    const replaced = await this.commands.malipoJournalReplace(
      this.entryKey(next.idempotencyKey),
      this.key('open'),
      this.referenceKey(next.reference),
      this.key('started'),
      JSON.stringify(next),
      next.version - 1,
      this.ttlMs,
      Date.parse(next.startedAt),
      next.idempotencyKey,
      OPEN_STATES.has(next.state) ? '1' : '0',
      next.reference === undefined ? '0' : '1',
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
    // The open index is enough when only open states are asked for.
    const onlyOpen = states !== undefined && [...states].every((state) => OPEN_STATES.has(state));
    const index = this.key(onlyOpen ? 'open' : 'started');
    const min = query.since === undefined ? '-inf' : String(query.since.getTime());
    const found: PaymentsJournalEntry[] = [];
    // Paged by the last key read, not by offset: entries settled meanwhile leave the open index,
    // and an offset would then step over as many entries that are still open.
    let after: IndexPosition | undefined;
    for (;;) {
      const page = await this.indexPage(index, min, after);
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
          if (!states || states.has(entry.state)) found.push(entry);
        }
      });
      // Index members of expired entries are dropped as they are met.
      if (expired.length > 0) await this.client.zrem(index, ...expired);
    }
    return found;
  }

  /**
   * Up to a page of `index` from `min`, in its order (score, then key bytes), after `after`: the
   * rest of `after`'s score (keys that sort after it), then higher scores.
   */
  private async indexPage(
    index: string,
    min: string,
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
      '+inf',
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

  /** The reference's key; an entry without one names a key that is never written. */
  private referenceKey(reference: string | undefined): string {
    return `${this.prefix}ref:${reference ?? ''}`;
  }
}

import { randomUUID } from 'node:crypto';
import type { Redis } from 'ioredis';
import {
  connectRedis,
  quit,
  REDIS_CONNECTION_OPTION_NAMES,
  type RedisConnectionOptions,
  redisServerCheck,
} from '../../redis/redis-connection';
import {
  REDIS_REPLICATION_OPTION_NAMES,
  type RedisReplicationOptions,
  type ReplicatedWrite,
  replicatedWrites,
} from '../../redis/redis-replication';
import type { MinorTotal } from '../../money';
import { itemMinorUnits, summaryOf } from '../payout-run-tally';
import { PAYOUT_RUN_ITEM_STATES } from '../payout-run.interfaces';
import type { PayoutRunItemState, PayoutRunState } from '../payout-run.interfaces';
import {
  cursorPosition,
  FINAL_ITEM_STATES,
  pastTheEnd,
  PayoutRunExistsError,
} from '../payout-run.store';
import type {
  PayoutRunChange,
  PayoutRunCondition,
  PayoutRunItemChange,
  PayoutRunItemRecord,
  PayoutRunRecord,
  PayoutRunStore,
  PayoutRunSummary,
} from '../payout-run.store';
import { printsAsNameOnly } from '../../secret-holders';
import { assertKnownOptions, textOption, wholeNumberOption } from '../../known-options';

/** Options of {@link RedisPayoutRunStore}: a client, or what to connect with. */
export interface RedisPayoutRunStoreOptions
  extends RedisConnectionOptions, RedisReplicationOptions {
  /**
   * Prefix of every key the store writes. Default `malipo:runs:`. The keys of one run share the
   * hash tag `{<runId>}`, so the scripts work on Redis Cluster too.
   */
  keyPrefix?: string;
  /**
   * Seconds a finished run's keys live after it finished (its items hold phone and account
   * numbers until final). Default 30 days, as the journal's entries; `0` keeps them until
   * `deleteRun`.
   */
  finishedRunTtlSeconds?: number;
}

const OPTION_NAMES: Readonly<Record<keyof RedisPayoutRunStoreOptions, true>> = {
  ...REDIS_CONNECTION_OPTION_NAMES,
  ...REDIS_REPLICATION_OPTION_NAMES,
  keyPrefix: true,
  finishedRunTtlSeconds: true,
};

/** Items written per round trip when a run is created. */
const CREATE_CHUNK = 500;
/** Items whose expiry one script sets when a run finished: Redis is held about 5 ms. */
const EXPIRE_PAGE = 1000;

/**
 * A creation's claim on a run id until its run is written: renewed every third of it while the
 * creation runs, so that one that died (its process killed) frees the id within this time, and
 * the next creation of the id (`create()` again) removes what it had written.
 */
const CREATE_CLAIM_LEASE_MS = 15_000;
/**
 * How long what a dead creation wrote (items with their requests, indexes) lives if no creation
 * of the id comes to remove it. Longer than the lease: a live creation's first items must not
 * expire while it writes the last.
 */
const UNFINISHED_CREATION_TTL_MS = 10 * 60 * 1000;

/**
 * How many keys of a run every script of it takes first, in `runKeys` order: the run hash, `order`,
 * `claim`, `totals`, then a sorted set per item state. A script writes only keys it is given, its
 * items' hashes after these: on a Redis Cluster that moves the run's slot (a reshard), a script
 * whose keys are not all on one node is retried, never run on the half it finds.
 */
const RUN_KEY_COUNT = 4 + PAYOUT_RUN_ITEM_STATES.length;

/** Lua: `STATE_SETS[state]`, the sorted set of a state among a script's run keys. */
const STATE_SETS_LUA = `
local STATE_SETS = {}
for index, state in ipairs({ ${PAYOUT_RUN_ITEM_STATES.map((state) => `'${state}'`).join(', ')} }) do
  STATE_SETS[state] = KEYS[4 + index]
end
`;

/**
 * KEYS: the run's keys, then the item hash. ARGV: allowed states (comma-separated, '' for any),
 * updatedAt, new state ('' keeps it), reason, has reason (1/0), reference, has reference (1/0),
 * sends ('' keeps it), allowed run states ('' for any), final states (the request is dropped on
 * reaching one), send claim ('' keeps it), unsent call ids (a JSON list, '' keeps it).
 * Changes the item only from an allowed state while its run is in an allowed state (one step: a
 * pause stored before can never be overtaken), and moves its totals and indexes with it.
 */
const UPDATE_ITEM_SCRIPT = `${STATE_SETS_LUA}
local item, totals, run = KEYS[${RUN_KEY_COUNT + 1}], KEYS[4], KEYS[1]
local current = redis.call('HGET', item, 'state')
if not current then return false end
local function listed(list, value)
  for entry in string.gmatch(list, '[^,]+') do
    if entry == value then return true end
  end
  return false
end
if ARGV[1] ~= '' and not listed(ARGV[1], current) then return false end
if ARGV[9] ~= '' then
  local state = redis.call('HGET', run, 'state')
  if not state or not listed(ARGV[9], state) then return false end
end
redis.call('HSET', item, 'updatedAt', ARGV[2])
if ARGV[8] ~= '' then redis.call('HSET', item, 'sends', ARGV[8]) end
if ARGV[11] ~= '' then redis.call('HSET', item, 'claim', ARGV[11]) end
if ARGV[12] ~= '' then redis.call('HSET', item, 'unsent', ARGV[12]) end
if ARGV[7] == '1' then redis.call('HSET', item, 'reference', ARGV[6]) end
if ARGV[5] == '1' then
  redis.call('HSET', item, 'reason', ARGV[4])
elseif ARGV[3] ~= '' then
  redis.call('HDEL', item, 'reason')
end
if ARGV[3] ~= '' and ARGV[3] ~= current then
  local fields = redis.call('HMGET', item, 'id', 'pos', 'currency', 'minor')
  local minor = tonumber(fields[4])
  redis.call('ZREM', STATE_SETS[current], fields[1])
  redis.call('ZADD', STATE_SETS[ARGV[3]], fields[2], fields[1])
  redis.call('HINCRBY', totals, current .. ':' .. fields[3] .. ':count', -1)
  redis.call('HINCRBY', totals, current .. ':' .. fields[3] .. ':minor', -minor)
  redis.call('HINCRBY', totals, ARGV[3] .. ':' .. fields[3] .. ':count', 1)
  redis.call('HINCRBY', totals, ARGV[3] .. ':' .. fields[3] .. ':minor', minor)
  redis.call('HSET', item, 'state', ARGV[3])
  if listed(ARGV[10], ARGV[3]) then redis.call('HDEL', item, 'rq') end
  -- A finished run's keys expire together: a state set made now expires with them.
  local ttl = redis.call('PTTL', run)
  if ttl > 0 then redis.call('PEXPIRE', STATE_SETS[ARGV[3]], ttl) end
end
return redis.call('HGETALL', item)
`;

/**
 * KEYS: the run's keys, then the hash of each item of the chunk. ARGV: the claim's token, time to
 * live (ms), the totals as a JSON array of field, value ('' for none), then one JSON array per
 * item, in the order of KEYS: id, position, state, then its hash's field, value pairs (strings).
 * Writes a chunk of a creation's items, each key expiring unless kept, only while the claim is the
 * creation's own: 0 when it lapsed (a creation that stalled past its lease must not write into the
 * next one's run).
 */
const CREATE_ITEMS_SCRIPT = `${STATE_SETS_LUA}
local order, claim, totalsKey = KEYS[2], KEYS[3], KEYS[4]
if redis.call('GET', claim) ~= ARGV[1] then return 0 end
local totals = ARGV[3] ~= '' and cjson.decode(ARGV[3]) or nil
local sets = {}
for index = 4, #ARGV do
  local item = cjson.decode(ARGV[index])
  local key = KEYS[${RUN_KEY_COUNT} + index - 3]
  redis.call('HSET', key, unpack(item, 4))
  redis.call('PEXPIRE', key, ARGV[2])
  redis.call('ZADD', order, item[2], item[1])
  local set = STATE_SETS[item[3]]
  redis.call('ZADD', set, item[2], item[1])
  sets[set] = true
end
redis.call('PEXPIRE', order, ARGV[2])
for set in pairs(sets) do redis.call('PEXPIRE', set, ARGV[2]) end
if totals then
  redis.call('HSET', totalsKey, unpack(totals))
  redis.call('PEXPIRE', totalsKey, ARGV[2])
end
return 1
`;

/**
 * KEYS: the run's keys, then the hash of each item of a page. ARGV: the claim's token. Stops the
 * expiry of a creation's items, a page at a time before its run is written, only while the claim
 * is the creation's own (0 when it lapsed) and every item of the page is still there (-1 when
 * one expired: a creation that took longer than their time to live). Their index stays with
 * them: a creation that dies before its run is written leaves items the next creation of the id
 * finds, and removes.
 */
const PERSIST_ITEMS_SCRIPT = `
if redis.call('GET', KEYS[3]) ~= ARGV[1] then return 0 end
if redis.call('EXISTS', KEYS[2]) == 0 then return -1 end
for index = ${RUN_KEY_COUNT + 1}, #KEYS do
  if redis.call('EXISTS', KEYS[index]) == 0 then return -1 end
end
for index = ${RUN_KEY_COUNT + 1}, #KEYS do redis.call('PERSIST', KEYS[index]) end
redis.call('PERSIST', KEYS[2])
return 1
`;

/**
 * KEYS: the run's keys, then the hashes of the first page of items in `order`. ARGV: the claim's
 * token, then those items' ids. Removes that page of what an unfinished creation wrote, only while
 * the claim is the caller's and no run was written (a run whose answer was lost keeps its items):
 * the number of items removed; with no page, the creation's other keys, and 0; -1 when it is not
 * the creation's to remove.
 */
const REMOVE_UNFINISHED_CREATION_SCRIPT = `
if redis.call('GET', KEYS[3]) ~= ARGV[1] then return -1 end
if redis.call('HEXISTS', KEYS[1], 'state') == 1 then return -1 end
if #ARGV > 1 then
  for index = ${RUN_KEY_COUNT + 1}, #KEYS do redis.call('DEL', KEYS[index]) end
  redis.call('ZREM', KEYS[2], unpack(ARGV, 2))
  return #ARGV - 1
end
redis.call('DEL', KEYS[1], KEYS[2])
for index = 4, ${RUN_KEY_COUNT} do redis.call('DEL', KEYS[index]) end
return 0
`;

/**
 * KEYS: claim. ARGV: the claim's token. Frees the id of a creation that failed, when the claim is
 * still its own: a script of it still under way finds the claim gone and writes nothing.
 */
const RELEASE_CLAIM_SCRIPT = `
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
`;

/** KEYS: claim. ARGV: the claim's token, lease (ms). Renews the claim while it is the caller's. */
const RENEW_CLAIM_SCRIPT = `
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('PEXPIRE', KEYS[1], ARGV[2]) end
return 0
`;

/**
 * KEYS: run hash, order, claim, totals, then the state sets. ARGV: the claim's token, whether it
 * has items (1/0), the run's fixed part (JSON), then field, value pairs of the rest. Writes the
 * run whole in one step, or nothing: 0 when a run is there, -1 when the creation's claim lapsed,
 * -2 when the totals of its items expired (a creation slower than their time to live). The run's
 * other keys stop expiring in the same step (its items did, page by page, just before). A hash
 * with no state is what an older version left when it died between two writes: never a run to
 * readers, it is written over.
 */
const CREATE_RUN_SCRIPT = `
if redis.call('HEXISTS', KEYS[1], 'state') == 1 then return 0 end
if redis.call('GET', KEYS[3]) ~= ARGV[1] then return -1 end
if ARGV[2] == '1' and redis.call('EXISTS', KEYS[4]) == 0 then return -2 end
redis.call('DEL', KEYS[1])
redis.call('HSET', KEYS[1], 'static', ARGV[3], unpack(ARGV, 4))
for index = 2, #KEYS do redis.call('PERSIST', KEYS[index]) end
return 1
`;

/**
 * KEYS: run hash, order, claim, totals, then the state sets. ARGV: allowed states ('' for any),
 * unfinished only (1/0), updatedAt, state, finishedAt, rateLimited ('' keeps each), seconds a
 * finished run's keys live ('' for ever). Changes the run only when it meets the condition. A
 * change that finishes it sets the expiry of these keys in the same step, and marks where the
 * expiry of its items stands (`expiring`, item 0): they follow a page at a time (EXPIRE_ITEMS),
 * so that no script holds Redis for a whole run.
 */
const UPDATE_RUN_SCRIPT = `
local fields = redis.call('HMGET', KEYS[1], 'state', 'finishedAt')
if not fields[1] then return false end
if ARGV[1] ~= '' then
  local allowed = false
  for state in string.gmatch(ARGV[1], '[^,]+') do
    if state == fields[1] then allowed = true end
  end
  if not allowed then return false end
end
if ARGV[2] == '1' and fields[2] then return false end
redis.call('HSET', KEYS[1], 'updatedAt', ARGV[3])
if ARGV[4] ~= '' then redis.call('HSET', KEYS[1], 'state', ARGV[4]) end
if ARGV[5] ~= '' then redis.call('HSET', KEYS[1], 'finishedAt', ARGV[5]) end
if ARGV[6] ~= '' then redis.call('HSET', KEYS[1], 'rateLimited', ARGV[6]) end
if ARGV[5] ~= '' and ARGV[7] ~= '' then
  for index = 1, #KEYS do redis.call('EXPIRE', KEYS[index], ARGV[7]) end
  redis.call('HSET', KEYS[1], 'expiring', 0)
end
return redis.call('HGETALL', KEYS[1])
`;

/**
 * KEYS: run hash, then the hashes of the page of items from the `expiring` mark. ARGV: seconds the
 * items live, the mark the page was read from, the page size. Sets the expiry of a finished run's
 * items of that page, and moves the mark on, or removes it after the last page: the next mark, or
 * -1 when done. A mark moved meanwhile (another instance) changes nothing and is answered as it
 * stands, for the caller to read the page from there.
 */
const EXPIRE_ITEMS_SCRIPT = `
local cursor = redis.call('HGET', KEYS[1], 'expiring')
if not cursor then return -1 end
if cursor ~= ARGV[2] then return tonumber(cursor) end
for index = 2, #KEYS do redis.call('EXPIRE', KEYS[index], ARGV[1]) end
local count = #KEYS - 1
if count < tonumber(ARGV[3]) then
  redis.call('HDEL', KEYS[1], 'expiring')
  return -1
end
redis.call('HSET', KEYS[1], 'expiring', tonumber(cursor) + count)
return tonumber(cursor) + count
`;

interface RunStoreCommands {
  malipoRunsUpdateItem(...args: (string | number)[]): Promise<string[] | null>;
  malipoRunsUpdateRun(...args: (string | number)[]): Promise<string[] | null>;
  malipoRunsCreateRun(...args: (string | number)[]): Promise<number>;
  malipoRunsReleaseClaim(claimKey: string, claim: string): Promise<number>;
  malipoRunsRenewClaim(claimKey: string, claim: string, leaseMs: number): Promise<number>;
  malipoRunsRemoveUnfinishedCreation(...args: (string | number)[]): Promise<number>;
  malipoRunsCreateItems(...args: (string | number)[]): Promise<number>;
  malipoRunsPersistItems(...args: (string | number)[]): Promise<number>;
  malipoRunsExpireItems(...args: (string | number)[]): Promise<number>;
}

/**
 * The store's Lua scripts by command name, with their number of keys: a number, or `given` when
 * each call gives it first (a run's keys and some of its items').
 */
const RUN_STORE_SCRIPTS: Record<keyof RunStoreCommands, { keys: number | 'given'; lua: string }> = {
  malipoRunsUpdateItem: { keys: RUN_KEY_COUNT + 1, lua: UPDATE_ITEM_SCRIPT },
  malipoRunsUpdateRun: { keys: RUN_KEY_COUNT, lua: UPDATE_RUN_SCRIPT },
  malipoRunsPersistItems: { keys: 'given', lua: PERSIST_ITEMS_SCRIPT },
  malipoRunsExpireItems: { keys: 'given', lua: EXPIRE_ITEMS_SCRIPT },
  malipoRunsCreateItems: { keys: 'given', lua: CREATE_ITEMS_SCRIPT },
  malipoRunsCreateRun: { keys: RUN_KEY_COUNT, lua: CREATE_RUN_SCRIPT },
  malipoRunsRemoveUnfinishedCreation: { keys: 'given', lua: REMOVE_UNFINISHED_CREATION_SCRIPT },
  malipoRunsReleaseClaim: { keys: 1, lua: RELEASE_CLAIM_SCRIPT },
  malipoRunsRenewClaim: { keys: 1, lua: RENEW_CLAIM_SCRIPT },
};

/** What a run hash holds that never changes after creation. */
type StaticRun = Omit<PayoutRunRecord, 'state' | 'updatedAt' | 'finishedAt' | 'rateLimited'>;

/** A flat `HGETALL` reply as an object. */
function fieldsOf(reply: string[] | Record<string, string>): Record<string, string> {
  if (!Array.isArray(reply)) return reply;
  const fields: Record<string, string> = {};
  for (let index = 0; index + 1 < reply.length; index += 2) fields[reply[index]] = reply[index + 1];
  return fields;
}

/**
 * A {@link PayoutRunStore} on Redis (ioredis), shared by every instance of the app: runs are
 * readable and their items workable from each one, and kept across redeploys as far as your Redis
 * persists. **Items hold the payout requests as they will be sent, with phone and account
 * numbers**: protect this Redis as the app's database (TLS with `rediss://`, a password, no
 * public network), and delete the runs you no longer need.
 *
 * Keys, under `keyPrefix` and the run's hash tag `{<runId>}`:
 * - `run`: a hash of the run (its fixed part as JSON, its state, `finishedAt`, 429s met);
 * - `item:<itemId>`: a hash per item (fixed fields as JSON, the request as JSON until the item is
 *   final, state, sends, reason, reference, position, amount in minor units);
 * - `order`, and `state:<state>` per item state: sorted sets of item ids by position, for listing
 *   from a cursor (the position);
 * - `claim`: set first by `createRun`, so of two creations of one run id one writes items;
 * - `totals`: count and minor units per state and currency, moved in the same script as each
 *   item change, so `summary` reads one hash, never the items.
 *
 * Until its items are kept, a creation's keys expire after 10 minutes, and its claim on the id
 * 15 s after its last renewal, so that one that died leaves nothing behind and does not hold the
 * id; one that failed removes them itself; one killed after keeping its
 * items leaves them for the next creation of the id to remove; once a run finished, its keys expire after `finishedRunTtlSeconds`
 * (default 30 days): the run's own in the step that finishes it, its items a page at a time after
 * (docs/payout-runs.md, "Engines").
 *
 * `updateItem` and `updateRun` are Lua scripts: a change with `from` / `when` is atomic across
 * instances, so one worker wins an item.
 */
export class RedisPayoutRunStore implements PayoutRunStore {
  /** The client; made by the store unless given as `client`. */
  readonly client: Redis;
  private readonly commands: RunStoreCommands;
  private readonly ownsClient: boolean;
  private readonly prefix: string;
  private readonly finishedRunTtlSeconds: number;
  private closing?: Promise<void>;
  private readonly replicated: ReplicatedWrite;
  /** Runs whose items' expiry this store is setting now. */
  private readonly expiring = new Set<string>();
  /** The check of Redis's eviction policy and persistence, at the first write. */
  private readonly checkServer: () => void;

  constructor(options: RedisPayoutRunStoreOptions = {}) {
    assertKnownOptions('RedisPayoutRunStore', options, OPTION_NAMES);
    this.prefix =
      textOption('RedisPayoutRunStore', 'keyPrefix', options.keyPrefix) ?? 'malipo:runs:';
    this.finishedRunTtlSeconds = wholeNumberOption(
      'RedisPayoutRunStore',
      'finishedRunTtlSeconds',
      options.finishedRunTtlSeconds ?? 30 * 24 * 60 * 60,
      { min: 0 },
    );
    const replicated = replicatedWrites(options, 'RedisPayoutRunStore');
    ({ client: this.client, ownsClient: this.ownsClient } = connectRedis(
      options,
      'RedisPayoutRunStore',
      'payout runs can neither be read nor moved on',
    ));
    for (const [name, { keys, lua }] of Object.entries(RUN_STORE_SCRIPTS)) {
      this.client.defineCommand(name, keys === 'given' ? { lua } : { numberOfKeys: keys, lua });
    }
    this.commands = this.client as unknown as RunStoreCommands;
    this.replicated = replicated(this.client);
    this.checkServer = redisServerCheck(this.client, 'RedisPayoutRunStore', {
      whenEvicted:
        'an evicted run or item is lost mid-run: its payouts are neither sent nor reported',
      whenRestarted:
        'the runs in progress are lost: their unsent items are not sent and what was sent is not reported',
    });
  }

  async createRun(run: PayoutRunRecord, items: readonly PayoutRunItemRecord[]): Promise<void> {
    this.checkServer();
    const claimKey = this.key(run.runId, 'claim');
    const claim = randomUUID();
    // Claimed before any item is written: two creations of one id never mix their items. The
    // claim is a lease until the run is written, so that a creation that died frees the id; what
    // it wrote expires with it until its items are kept.
    if ((await this.client.set(claimKey, claim, 'PX', CREATE_CLAIM_LEASE_MS, 'NX')) !== 'OK') {
      throw new PayoutRunExistsError(run.runId);
    }
    // A failed renewal is seen by the next step of the creation, which checks the claim.
    const renewal = setInterval(() => {
      this.commands
        .malipoRunsRenewClaim(claimKey, claim, CREATE_CLAIM_LEASE_MS)
        .catch(() => undefined);
    }, CREATE_CLAIM_LEASE_MS / 3);
    renewal.unref();
    try {
      await this.createClaimed(run, items, claimKey, claim);
    } catch (error) {
      // Failed (Redis out of memory, a timeout): what it wrote goes now (item requests hold phone
      // numbers, and the app may create the run again under another id), and the id is free at
      // once, not after the claim's lease. What a failed removal leaves, the next creation of the
      // id removes, as a dead creation's.
      await this.removeUnfinishedCreation(run.runId, claim).catch(() => undefined);
      await this.commands.malipoRunsReleaseClaim(claimKey, claim).catch(() => undefined);
      throw error;
    } finally {
      clearInterval(renewal);
    }
  }

  /**
   * Removes what a creation of `runId` left before writing its run (its items, with their
   * requests, and their indexes), a page per script, while `claim` holds and no run was written:
   * this creation's own when it failed, or one that died, before this one writes its items.
   */
  private async removeUnfinishedCreation(runId: string, claim: string): Promise<void> {
    for (;;) {
      const ids = await this.client.zrange(this.key(runId, 'order'), '0', String(CREATE_CHUNK - 1));
      const removed = await this.commands.malipoRunsRemoveUnfinishedCreation(
        ...this.withItemKeys(runId, ids),
        claim,
        ...ids,
      );
      if (removed <= 0) return;
    }
  }

  /** {@link createRun} once its claim is taken. */
  private async createClaimed(
    run: PayoutRunRecord,
    items: readonly PayoutRunItemRecord[],
    claimKey: string,
    claim: string,
  ): Promise<void> {
    const runKey = this.key(run.runId, 'run');
    // A run there already (its claim gone some other way) keeps its items.
    if ((await this.client.hexists(runKey, 'state')) === 1) {
      throw new PayoutRunExistsError(run.runId);
    }
    await this.removeUnfinishedCreation(run.runId, claim);
    const totals = new Map<string, number>();
    for (const item of items) {
      const field = `${item.state}:${item.currency}`;
      totals.set(`${field}:count`, (totals.get(`${field}:count`) ?? 0) + 1);
      totals.set(`${field}:minor`, (totals.get(`${field}:minor`) ?? 0) + itemMinorUnits(item));
    }
    for (let start = 0; start < items.length; start += CREATE_CHUNK) {
      const last = start + CREATE_CHUNK >= items.length;
      const page = items.slice(start, start + CREATE_CHUNK);
      const chunk = page.map((item, offset) => {
        const { state, sends, updatedAt, reason, reference, request, ...fixed } = item;
        return JSON.stringify([
          item.itemId,
          start + offset,
          state,
          ...Object.entries({
            d: JSON.stringify(fixed),
            ...(request === undefined ? {} : { rq: JSON.stringify(request) }),
            id: item.itemId,
            pos: start + offset,
            currency: item.currency,
            minor: itemMinorUnits(item),
            state,
            sends,
            updatedAt,
            ...(reason === undefined ? {} : { reason }),
            ...(reference === undefined ? {} : { reference }),
          }).flatMap(([field, value]) => [field, String(value)]),
        ]);
      });
      const written = await this.commands.malipoRunsCreateItems(
        ...this.withItemKeys(
          run.runId,
          page.map((item) => item.itemId),
        ),
        claim,
        UNFINISHED_CREATION_TTL_MS,
        last ? JSON.stringify([...totals].flatMap(([field, value]) => [field, String(value)])) : '',
        ...chunk,
      );
      if (written !== 1) throw this.lapsed(run.runId);
    }
    for (let start = 0; start < items.length; start += CREATE_CHUNK) {
      const persisted = await this.commands.malipoRunsPersistItems(
        ...this.withItemKeys(
          run.runId,
          items.slice(start, start + CREATE_CHUNK).map((item) => item.itemId),
        ),
        claim,
      );
      if (persisted === -1) throw this.expired(run.runId);
      if (persisted !== 1) throw this.lapsed(run.runId);
    }
    const { state, updatedAt, finishedAt, rateLimited, ...fixed } = run;
    // Written last, and whole: until then the run does not exist for readers, whatever its items
    // say; a creation killed before this step left no run behind.
    const created = await this.replicated(
      this.commands.malipoRunsCreateRun(
        ...this.runKeys(run.runId),
        claim,
        items.length > 0 ? '1' : '0',
        JSON.stringify(fixed satisfies StaticRun),
        'state',
        state,
        'updatedAt',
        updatedAt,
        'rateLimited',
        rateLimited,
        ...(finishedAt === undefined ? [] : ['finishedAt', finishedAt]),
      ),
    );
    if (created === -1) throw this.lapsed(run.runId);
    if (created === -2) throw this.expired(run.runId);
    if (created !== 1) throw new PayoutRunExistsError(run.runId);
  }

  /** A creation slower than what it writes lives: no run is written with items missing. */
  private expired(runId: string): Error {
    return new Error(
      `The payout run ${runId} was not created: writing it took longer than ${UNFINISHED_CREATION_TTL_MS / 60_000} minutes, and its first items expired`,
    );
  }

  /** A creation that outlived its claim: what it wrote expires, and no run is written. */
  private lapsed(runId: string): Error {
    return new Error(
      `The payout run ${runId} was not created: its creation lost its claim on the id (stalled for more than ${CREATE_CLAIM_LEASE_MS / 1000} s), which another creation may hold`,
    );
  }

  async getRun(runId: string): Promise<PayoutRunRecord | undefined> {
    const fields = await this.client.hgetall(this.key(runId, 'run'));
    // A finish whose items' expiry was cut short (the process died, Redis failed) goes on here.
    if (fields.expiring !== undefined && !this.expiring.has(runId)) {
      this.expireItems(runId).catch(() => undefined);
    }
    return this.runOf(fields);
  }

  /**
   * Sets the expiry of a finished run's items, a page per script, from where its `expiring` mark
   * stands; another instance doing the same meanwhile only repeats a page.
   */
  private async expireItems(runId: string): Promise<void> {
    this.expiring.add(runId);
    try {
      const runKey = this.key(runId, 'run');
      for (let mark = await this.client.hget(runKey, 'expiring'); mark !== null;) {
        const ids = await this.client.zrange(
          this.key(runId, 'order'),
          mark,
          String(Number(mark) + EXPIRE_PAGE - 1),
        );
        const next = await this.commands.malipoRunsExpireItems(
          1 + ids.length,
          runKey,
          ...ids.map((itemId) => this.key(runId, `item:${itemId}`)),
          this.finishedRunTtlSeconds,
          mark,
          EXPIRE_PAGE,
        );
        mark = next === -1 ? null : String(next);
      }
    } finally {
      this.expiring.delete(runId);
    }
  }

  async updateRun(
    runId: string,
    change: PayoutRunChange,
    when: PayoutRunCondition = {},
  ): Promise<PayoutRunRecord | undefined> {
    if (when.states !== undefined && when.states.length === 0) return undefined;
    const reply = await this.replicated(
      this.commands.malipoRunsUpdateRun(
        ...this.runKeys(runId),
        (when.states ?? []).join(','),
        when.unfinished ? '1' : '0',
        new Date().toISOString(),
        change.state ?? '',
        change.finishedAt ?? '',
        change.rateLimited === undefined ? '' : String(change.rateLimited),
        this.finishedRunTtlSeconds === 0 ? '' : this.finishedRunTtlSeconds,
      ),
    );
    if (!reply) return undefined;
    const fields = fieldsOf(reply);
    // The run is finished whatever becomes of this: a failure here is taken up by the next read.
    if (fields.expiring !== undefined) await this.expireItems(runId).catch(() => undefined);
    return this.runOf(fields);
  }

  async getItem(runId: string, itemId: string): Promise<PayoutRunItemRecord | undefined> {
    return this.itemOf(await this.client.hgetall(this.key(runId, `item:${itemId}`)));
  }

  async updateItem(
    runId: string,
    itemId: string,
    change: PayoutRunItemChange,
    from?: readonly PayoutRunItemState[],
    runStates?: readonly PayoutRunState[],
  ): Promise<PayoutRunItemRecord | undefined> {
    // An empty list allows no state (the script reads '' as any).
    if (from !== undefined && from.length === 0) return undefined;
    if (runStates !== undefined && runStates.length === 0) return undefined;
    this.checkServer();
    // Before an item is sent, its `sending` must outlive a failover, or the new primary sends it
    // again: the wait covers every earlier write of this connection too.
    const reply = await this.replicated(
      this.commands.malipoRunsUpdateItem(
        ...this.runKeys(runId),
        this.key(runId, `item:${itemId}`),
        (from ?? []).join(','),
        new Date().toISOString(),
        change.state ?? '',
        change.reason ?? '',
        change.reason === undefined ? '0' : '1',
        change.reference ?? '',
        change.reference === undefined ? '0' : '1',
        change.sends === undefined ? '' : String(change.sends),
        (runStates ?? []).join(','),
        FINAL_ITEM_STATES.join(','),
        change.sendClaim ?? '',
        change.unsentCallIds === undefined ? '' : JSON.stringify(change.unsentCallIds),
      ),
    );
    return reply ? this.itemOf(fieldsOf(reply)) : undefined;
  }

  async listItems(
    runId: string,
    query: { states?: readonly PayoutRunItemState[]; cursor?: string; limit: number },
  ): Promise<{ items: PayoutRunItemRecord[]; nextCursor?: string }> {
    const start = cursorPosition(query.cursor);
    if (start instanceof RangeError) throw start;
    const indexes = query.states
      ? query.states.map((state) => this.key(runId, `state:${state}`))
      : [this.key(runId, 'order')];
    // One more than asked for per index: whether a next page exists.
    const found: { itemId: string; position: number }[] = [];
    for (const index of indexes) {
      const reply = await this.client.zrangebyscore(
        index,
        start,
        '+inf',
        'WITHSCORES',
        'LIMIT',
        0,
        query.limit + 1,
      );
      for (let at = 0; at + 1 < reply.length; at += 2) {
        found.push({ itemId: reply[at], position: Number(reply[at + 1]) });
      }
    }
    if (found.length === 0) {
      // Only a page that found nothing can start past the end: counted then, not per page.
      const beyond = pastTheEnd(start, await this.client.zcard(this.key(runId, 'order')));
      if (beyond) throw beyond;
    }
    found.sort((a, b) => a.position - b.position);
    const page = found.slice(0, query.limit);
    const pipeline = this.client.pipeline();
    for (const { itemId } of page) pipeline.hgetall(this.key(runId, `item:${itemId}`));
    const items: PayoutRunItemRecord[] = [];
    for (const [error, reply] of (await pipeline.exec()) ?? []) {
      if (error) throw error;
      const item = this.itemOf(reply as Record<string, string>);
      if (item) items.push(item);
    }
    return found.length > query.limit
      ? { items, nextCursor: String(page[page.length - 1].position + 1) }
      : { items };
  }

  async summary(runId: string): Promise<PayoutRunSummary> {
    const stored = await this.client.hgetall(this.key(runId, 'totals'));
    const byState = new Map<string, Map<string, MinorTotal>>();
    for (const [field, value] of Object.entries(stored)) {
      const [state, currency, measure] = field.split(':');
      const totals = byState.get(state) ?? new Map<string, MinorTotal>();
      byState.set(state, totals);
      const total = totals.get(currency) ?? { count: 0, minor: 0n };
      totals.set(currency, total);
      if (measure === 'count') total.count = Number(value);
      else total.minor = BigInt(value);
    }
    for (const totals of byState.values()) {
      for (const [currency, total] of totals) if (total.count === 0) totals.delete(currency);
    }
    return summaryOf((state) => byState.get(state) ?? new Map());
  }

  /**
   * Deletes a run and its items (their requests hold phone and account numbers): for runs you no
   * longer need. Resolves `false` when there was no such run.
   */
  async deleteRun(runId: string): Promise<boolean> {
    const run = await this.getRun(runId);
    if (!run) return false;
    const itemIds = await this.client.zrange(this.key(runId, 'order'), '0', '-1');
    const keys = [
      ...this.runKeys(runId),
      ...itemIds.map((itemId) => this.key(runId, `item:${itemId}`)),
    ];
    for (let start = 0; start < keys.length; start += CREATE_CHUNK) {
      await this.client.del(...keys.slice(start, start + CREATE_CHUNK));
    }
    return true;
  }

  /** Closes the connection if the store made it (idempotent); a given `client` stays open. */
  close(): Promise<void> {
    this.closing ??= this.ownsClient ? quit(this.client) : Promise.resolve();
    return this.closing;
  }

  /**
   * The number of keys, the run's keys and the hashes of `itemIds`: the keys of a script that
   * takes some of the run's items.
   */
  private withItemKeys(runId: string, itemIds: readonly string[]): (string | number)[] {
    const keys = [
      ...this.runKeys(runId),
      ...itemIds.map((itemId) => this.key(runId, `item:${itemId}`)),
    ];
    return [keys.length, ...keys];
  }

  /** The keys of a run apart from its items': the run hash, `order`, `claim`, `totals`, the state sets. */
  private runKeys(runId: string): string[] {
    return [
      this.key(runId, 'run'),
      this.key(runId, 'order'),
      this.key(runId, 'claim'),
      this.key(runId, 'totals'),
      ...PAYOUT_RUN_ITEM_STATES.map((state) => this.key(runId, `state:${state}`)),
    ];
  }

  private key(runId: string, name: string): string {
    return `${this.prefix}{${runId}}:${name}`;
  }

  private runOf(fields: Record<string, string>): PayoutRunRecord | undefined {
    if (fields.static === undefined || fields.state === undefined) return undefined;
    const fixed = JSON.parse(fields.static) as StaticRun;
    return {
      ...fixed,
      state: fields.state as PayoutRunState,
      updatedAt: fields.updatedAt,
      rateLimited: Number(fields.rateLimited ?? 0),
      ...(fields.finishedAt === undefined ? {} : { finishedAt: fields.finishedAt }),
    };
  }

  private itemOf(fields: Record<string, string>): PayoutRunItemRecord | undefined {
    if (fields.d === undefined) return undefined;
    const fixed = JSON.parse(fields.d) as Omit<
      PayoutRunItemRecord,
      'state' | 'sends' | 'updatedAt' | 'reason' | 'reference' | 'request'
    >;
    return {
      ...fixed,
      ...(fields.rq === undefined ? {} : { request: JSON.parse(fields.rq) as object }),
      state: fields.state as PayoutRunItemState,
      sends: Number(fields.sends),
      updatedAt: fields.updatedAt,
      ...(fields.reason === undefined ? {} : { reason: fields.reason }),
      ...(fields.reference === undefined ? {} : { reference: fields.reference }),
      ...(fields.claim === undefined ? {} : { sendClaim: fields.claim }),
      ...(fields.unsent === undefined
        ? {}
        : { unsentCallIds: JSON.parse(fields.unsent) as string[] }),
    };
  }
}

printsAsNameOnly(RedisPayoutRunStore.prototype, 'RedisPayoutRunStore');

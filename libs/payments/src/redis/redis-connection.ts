import { Logger } from '@nestjs/common';
import { type Cluster, type Command, Redis, type RedisOptions } from 'ioredis';
import { moduleOptionError } from '../known-options';

/** How a Redis-backed part of the library gets its client: one you made, or what to connect with. */
export interface RedisConnectionOptions {
  /**
   * A client you made: it is used as it is and never closed, except that the errors of its `AUTH`
   * and `HELLO` commands get their arguments (the password) redacted, for your code too. Give it a
   * `commandTimeout` (and `maxRetriesPerRequest`) so that an unreachable Redis fails fast instead
   * of holding callers.
   */
  client?: Redis;
  /** `redis://[user:password@]host:port[/db]` or `rediss://...`; the connection is made and closed here. */
  url?: string;
  /**
   * ioredis options of the client made here (with or without `url`), over the defaults:
   * `commandTimeout: 1000`, `maxRetriesPerRequest: 1`.
   */
  connection?: RedisOptions;
}

/** Defaults of a client made here: an unreachable Redis fails a command within a second. */
const CONNECTION_DEFAULTS: RedisOptions = { commandTimeout: 1000, maxRetriesPerRequest: 1 };

/** The options of {@link RedisConnectionOptions}, for a store's check of its options' names. */
export const REDIS_CONNECTION_OPTION_NAMES: Readonly<Record<keyof RedisConnectionOptions, true>> = {
  client: true,
  url: true,
  connection: true,
};

/**
 * The client of `options`, and whether it was made here (then `quit` closes it).
 * @param owner names the class in errors and logs.
 * @param whenDown what the loss of Redis means while it lasts, for the log line ("calls are refused"):
 *   "until it is back" or "until the url ... carry the right ones" follows it.
 */
export function connectRedis(
  options: RedisConnectionOptions,
  owner: string,
  whenDown: string,
): { client: Redis; ownsClient: boolean } {
  if (options.client) {
    if (options.url !== undefined || options.connection !== undefined) {
      throw moduleOptionError(
        owner,
        'client',
        'isExclusive',
        'give either client, or url/connection, not both',
      );
    }
    redactCommandErrors(options.client);
    return { client: options.client, ownsClient: false };
  }
  if (options.url === undefined && options.connection === undefined) {
    // `{ url: config.get('REDIS_URL') }` with the variable unset: ioredis would quietly take
    // 127.0.0.1:6379, whatever Redis that is.
    throw moduleOptionError(
      owner,
      'url',
      'isDefined',
      'give url (or client, or connection): without one, ioredis connects to 127.0.0.1:6379',
    );
  }
  if (options.url !== undefined) checkUrl(options.url, owner);
  // A URL given as the host would be named, password and all, by the logs of every failed
  // connection.
  const host: unknown = options.connection?.host;
  if (typeof host === 'string' && isUrlAsHost(host)) {
    throw moduleOptionError(
      owner,
      'connection',
      'isHost',
      'connection.host must be a host name or address, not a URL: give a URL as url',
    );
  }
  // So would a URL given as a socket's path, and the journal's location.
  const path: unknown = options.connection?.path;
  if (typeof path === 'string' && path.includes('://')) {
    throw moduleOptionError(
      owner,
      'connection',
      'isPath',
      "connection.path must be a socket's path, not a URL: give a URL as url",
    );
  }
  const connection = { ...CONNECTION_DEFAULTS, ...options.connection };
  const client =
    options.url === undefined ? new Redis(connection) : new Redis(options.url, connection);
  redactCommandErrors(client);
  watchConnection(client, owner, whenDown);
  return { client, ownsClient: true };
}

/**
 * Refuses a URL that is not one, without repeating it: Node's URL error carries the whole URL as
 * `input`, and a URL ioredis reads leniently is printed whole in a deprecation warning; both hold
 * the password. Also a URL that reads, but not as meant: a Redis URL has no `#`, and no path but a
 * database number, so either is a password's character left unencoded (`:Xy7@Kq9#Tr@host` reads
 * as the host `Kq9`, which the logs of a failed connection would then name).
 */
function checkUrl(url: string, owner: string): void {
  let parsed: URL | undefined;
  try {
    parsed = new URL(url);
  } catch {
    // Refused below.
  }
  if (
    parsed === undefined ||
    !['redis:', 'rediss:'].includes(parsed.protocol) ||
    url.includes('#') ||
    !/^\/?\d*$/.test(parsed.pathname)
  ) {
    throw moduleOptionError(
      owner,
      'url',
      'isUrl',
      'url is not a valid Redis URL (redis:// or rediss://, then percent-encode the characters of ' +
        'the password that a URL reserves, such as # / ? @ %)',
    );
  }
}

/** Whether `client` is an ioredis `Cluster` given where a `Redis` is asked for. */
export function isCluster(client: Redis): boolean {
  return (client as unknown as Partial<Cluster>).isCluster === true;
}

/**
 * Which Redis database `client` talks to, as its options name it (`host:port/db`, a socket's path,
 * a Sentinel group's master, or `cluster`, then ioredis's `keyPrefix`), never its credentials;
 * undefined for a `host` that is no host name. Every Cluster is `cluster`: the seed nodes of two
 * clients of one cluster may differ, so only the prefixes tell two places on Clusters apart.
 */
export function redisLocation(client: Redis): string | undefined {
  if (isCluster(client)) {
    const prefix = keyPrefixOf(client);
    return `cluster${prefix ? ` ${prefix}` : ''}`;
  }
  const { host, port, path, db, sentinels, name, keyPrefix } = client.options;
  if (host !== undefined && isUrlAsHost(host)) return undefined;
  const server =
    path !== undefined && path !== ''
      ? `unix:${path}`
      : sentinels !== undefined && sentinels !== null && sentinels.length > 0
        ? `sentinel:${name ?? ''}`
        : `${host ?? 'localhost'}:${port ?? 6379}`;
  // ioredis's own prefix sets one client's keys apart from another's, as the journal's does.
  return `${server}/${db ?? 0}${keyPrefix ? ` ${keyPrefix}` : ''}`;
}

/** The prefix ioredis puts before every key of `client` (its `keyPrefix`), or ''. */
export function keyPrefixOf(client: Redis): string {
  if (!isCluster(client)) return client.options.keyPrefix ?? '';
  const { keyPrefix, redisOptions } = (client as unknown as Cluster).options;
  return keyPrefix ?? redisOptions?.keyPrefix ?? '';
}

/** Whether `host` is a URL given as a host name (`redis://:password@h`): no host to show. */
function isUrlAsHost(host: string): boolean {
  return /[@/]/.test(host);
}

const guarded = new WeakSet<Redis>();

/**
 * ioredis puts a failed command's arguments on its error (`error.command.args`): for a refused
 * `AUTH`, the password, which would then reach every caller whose command waited for the
 * connection; for a refused write of a payout run's items (Redis out of memory), their requests
 * with phone numbers and names, which would reach any `cause` or log that shows the error's
 * fields. The error of every command of `client` has its arguments replaced before anyone sees it.
 */
function redactCommandErrors(client: Redis): void {
  if (guarded.has(client)) return;
  guarded.add(client);
  // A Cluster (given as `client`) authenticates on a connection of each node.
  const cluster = client as unknown as Partial<Cluster>;
  if (cluster.isCluster === true && cluster.nodes && cluster.on) {
    for (const node of cluster.nodes('all')) redactCommandErrors(node);
    cluster.on('+node', (node: Redis) => redactCommandErrors(node));
  }
  // Every argument passes on: a Cluster's `sendCommand` takes a third (the node of a pipeline or
  // a MULTI), without which its pipelines throw in ioredis's own code.
  const send = client.sendCommand.bind(client) as (
    command: Command,
    ...rest: unknown[]
  ) => Promise<unknown>;
  client.sendCommand = (command: Command, ...rest: unknown[]) => {
    // A command sent again with its guard (a redirection, a reconnect) is not wrapped again; one
    // whose rejection was made anew (a Cluster pipeline's retry after MOVED) is.
    if (!guardedRejects.has(command.reject)) {
      const reject = command.reject;
      command.reject = (error: Error) => reject(redactCommandArguments(error));
      guardedRejects.add(command.reject);
    }
    return send(command, ...rest);
  };
}

/** The rejections {@link redactCommandErrors} put on commands: each redacts its error. */
const guardedRejects = new WeakSet<Command['reject']>();

/**
 * `error` with the arguments ioredis put on it (`command.args`: a password, item requests)
 * replaced, in place: also for errors of clients this module did not make, such as BullMQ's own.
 */
export function redactCommandArguments<T>(error: T): T {
  const command = (error as { command?: { name?: unknown } } | null)?.command;
  if (typeof command?.name === 'string') {
    (error as { command: unknown }).command = { name: command.name, args: ['[REDACTED]'] };
  }
  return error;
}

/**
 * `QUIT`, or a hard disconnect when Redis cannot answer it (it is down: nothing to flush);
 * resolves once the connection ended, so that nothing keeps the process alive.
 */
export async function quit(client: Redis): Promise<void> {
  if (client.status === 'end') return;
  const ended = new Promise((resolve) => client.once('end', resolve));
  try {
    await client.quit();
  } catch {
    client.disconnect();
  }
  // Between two reconnection attempts there is no socket: the disconnect ends nothing to wait for.
  const status: string = client.status;
  if (status === 'end' || status === 'reconnecting') return;
  await Promise.race([ended, new Promise((resolve) => setTimeout(resolve, 1000).unref())]);
}

/**
 * Redis's answers to a connection whose user or password it does not accept (`AUTH`, `HELLO`):
 * no retry mends them, unlike an outage.
 */
const CREDENTIALS_REFUSED = /^(WRONGPASS|NOAUTH|NOPERM)\b|^ERR (invalid password|AUTH )/;

/**
 * Logs a lost connection once, and its return, instead of every reconnection attempt (and
 * instead of ioredis's "Unhandled error event" when nobody listens). Refused credentials are an
 * error of the app's configuration, so they are logged at error level, as such.
 */
function watchConnection(client: Redis, owner: string, whenDown: string): void {
  const logger = new Logger(owner);
  let down = false;
  client.on('error', (error: Error) => {
    if (down) return;
    down = true;
    // A server or proxy may quote the command it refuses (`HELLO 3 AUTH default <password>`).
    const reason = withoutPassword(error.message, client.options.password);
    if (CREDENTIALS_REFUSED.test(error.message)) {
      logger.error(
        `Redis refused the user or password of this client (${reason}), which no retry ` +
          `mends; ${whenDown} until the url or connection options carry the right ones`,
      );
      return;
    }
    logger.warn(`Redis unreachable (${reason}); ${whenDown} until it is back`);
  });
  client.on('ready', () => {
    if (!down) return;
    down = false;
    logger.log('Redis reachable again');
  });
}

/** `text` with `password`, as given and percent-encoded, redacted. */
export function withoutPassword(text: string, password: string | undefined): string {
  if (!password) return text;
  return [password, encodeURIComponent(password)].reduce(
    (redacted, form) => redacted.split(form).join('[REDACTED]'),
    text,
  );
}

/** What {@link redisServerCheck} looks at. */
export interface RedisServerChecks {
  /** What an eviction costs, for the log line (e.g. `an evicted entry's key is sent again`). */
  readonly whenEvicted: string;
  /** Whether this process's clock is compared with Redis's (times written by one instance are read by another). */
  readonly clock?: boolean;
  /**
   * What a restart of a Redis without AOF costs, for the log line, when the store must outlive one
   * (the journal); not checked without it.
   */
  readonly whenRestarted?: string;
}

/** How far this process's clock may be from Redis's before it is logged. */
export const MAX_CLOCK_OFFSET_MS = 2_000;

/**
 * A store's check of its server, to call at each write: in the background, once (and again after
 * each lost connection came back), it logs at error level a Redis that may evict keys (`maxmemory-policy` other than `noeviction`: managed Redis
 * often defaults to `volatile-lru`), with `clock` a process clock more than
 * {@link MAX_CLOCK_OFFSET_MS} from Redis's, and with `whenRestarted` a Redis without AOF at warn
 * level (docs/journal.md, "The two stores"). A server that refuses `INFO` or `TIME` (a proxy that
 * forbids them) is not judged; one that did not answer at all (down at that write) is judged at a
 * later write.
 */
export function redisServerCheck(
  client: Redis,
  owner: string,
  checks: RedisServerChecks,
): () => void {
  const logger = new Logger(owner);
  const applicable = () => SERVER_CHECKS.filter((check) => check.applies(checks));
  // Each check is asked until Redis answers or refuses it: one that got no answer (Redis down or
  // stalled at that write) is asked again at a later write, the others not.
  let pending = applicable();
  // The Redis a lost connection comes back to may not be the one judged: restarted with other
  // settings, or a replica promoted by a failover. All is judged again at the next write.
  let lost = false;
  client.on('close', () => {
    lost = true;
  });
  client.on('ready', () => {
    if (!lost) return;
    lost = false;
    pending = applicable();
  });
  let judging: Promise<void> | undefined;
  return () => {
    if (pending.length === 0) return;
    judging ??= judgeRedisServer(client, logger, checks, pending).finally(() => {
      judging = undefined;
    });
  };
}

/** One of {@link redisServerCheck}'s checks. `run` rejects when Redis did not answer or refused. */
interface ServerCheck {
  applies(checks: RedisServerChecks): boolean;
  run(client: Redis, logger: Logger, checks: RedisServerChecks): Promise<void>;
}

const SERVER_CHECKS: readonly ServerCheck[] = [
  {
    applies: () => true,
    async run(client, logger, checks) {
      const policy = /^maxmemory_policy:(\S+)/m.exec(await client.info('memory'))?.[1];
      if (policy !== undefined && policy !== 'noeviction') {
        logger.error(
          `Redis maxmemory-policy is ${policy}: Redis may evict this store's keys when memory runs ` +
            `short, and ${checks.whenEvicted}. Set maxmemory-policy to noeviction (docs/journal.md, "The two stores")`,
        );
      }
    },
  },
  {
    applies: (checks) => checks.whenRestarted !== undefined,
    async run(client, logger, checks) {
      // RDB snapshots alone keep what was written up to the last one, at best (INFO cannot say
      // whether any are configured): a warning, not an error, for a choice that may be deliberate.
      if (/^aof_enabled:0\b/m.test(await client.info('persistence'))) {
        logger.warn(
          `Redis runs without AOF (appendonly no): a restart of Redis loses what it wrote since its ` +
            `last snapshot, or everything without snapshots, and ${checks.whenRestarted ?? ''}. Set ` +
            'appendonly yes (docs/journal.md, "The two stores")',
        );
      }
    },
  },
  {
    applies: (checks) => checks.clock === true,
    async run(client, logger) {
      const before = Date.now();
      const [seconds, micros] = await client.time();
      const after = Date.now();
      const redisMs = Number(seconds) * 1000 + Math.floor(Number(micros) / 1000);
      // Redis read its clock somewhere within the round trip.
      const offset = redisMs - (before + after) / 2;
      if (Math.abs(offset) - (after - before) / 2 > MAX_CLOCK_OFFSET_MS) {
        const apart = Math.abs(offset / 1000).toFixed(1);
        logger.error(
          `This process's clock is ${apart} s ${offset < 0 ? 'ahead of' : 'behind'} Redis's: the ` +
            "instances sharing this store must keep their clocks in step (NTP), or one instance's " +
            'send in flight reads as overdue (in doubt) to another (docs/journal.md, "The two stores")',
        );
      }
    },
  },
];

/**
 * {@link redisServerCheck}'s one pass over the checks still `pending`, which it takes out of the
 * list once judged. Never rejects. Stops at the first that got no answer: Redis is down or stalled.
 */
async function judgeRedisServer(
  client: Redis,
  logger: Logger,
  checks: RedisServerChecks,
  pending: ServerCheck[],
): Promise<void> {
  // A Cluster would send INFO and TIME to any one node: each master holds some of the keys.
  const servers = isCluster(client) ? (client as unknown as Cluster).nodes('master') : [client];
  // A Cluster that has not learnt its nodes yet: judged at a later write.
  if (servers.length === 0) return;
  for (const check of [...pending]) {
    try {
      for (const server of servers) await check.run(server, logger, checks);
    } catch (error) {
      // Not judged: a server or proxy that refuses the command is not asked again.
      if (!isRefusal(error)) return;
    }
    pending.splice(pending.indexOf(check), 1);
  }
}

/** An answer of Redis (or a proxy) refusing a command, not a failure to reach it. */
function isRefusal(error: unknown): boolean {
  return error instanceof Error && error.name === 'ReplyError';
}

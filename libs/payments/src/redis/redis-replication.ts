import type { Redis } from 'ioredis';
import { moduleOptionError, wholeNumberOption } from '../known-options';
import { isCluster } from './redis-connection';

/** Options of a Redis store whose writes must outlive a failover (docs/journal.md, "Failover"). */
export interface RedisReplicationOptions {
  /**
   * Replicas that must hold each write before it counts (Redis `WAIT`): a write that fewer of
   * them acknowledged within `replicaTimeoutMs` rejects, and nothing is sent on it. Set it when
   * Redis fails over to a replica (Sentinel, a managed Redis): a failover loses the writes the
   * replica had not received yet, and with them the record that a call or an item was sent,
   * which the new primary would send again. Default 0: no wait. Not with a Cluster client.
   */
  waitForReplicas?: number;
  /**
   * How long (ms) a write waits for `waitForReplicas`. Default 500; keep it under the client's
   * `commandTimeout` (1,000 ms for a client the store makes), which would cut the wait short.
   */
  replicaTimeoutMs?: number;
}

const DEFAULT_REPLICA_TIMEOUT_MS = 500;

/** A store's write, then the wait that makes it count. */
export type ReplicatedWrite = <T>(write: Promise<T>) => Promise<T>;

/** The options of {@link RedisReplicationOptions}, for a store's check of its options' names. */
export const REDIS_REPLICATION_OPTION_NAMES: Readonly<Record<keyof RedisReplicationOptions, true>> =
  {
    waitForReplicas: true,
    replicaTimeoutMs: true,
  };

/**
 * What makes a client's writes count only once `waitForReplicas` replicas acknowledged them: the
 * write itself when none is asked for. Checks the options at once, before any connection is made.
 * @param owner names the store in errors.
 */
export function replicatedWrites(
  options: RedisReplicationOptions,
  owner: string,
): (client: Redis) => ReplicatedWrite {
  const replicas = wholeNumberOption(owner, 'waitForReplicas', options.waitForReplicas ?? 0, {
    min: 0,
  });
  const timeoutMs = wholeNumberOption(
    owner,
    'replicaTimeoutMs',
    options.replicaTimeoutMs ?? DEFAULT_REPLICA_TIMEOUT_MS,
    { min: 1, unit: ' (ms)' },
  );
  if (replicas === 0) return () => (write) => write;
  return (client) => {
    // WAIT has no key: a Cluster would ask a node that may not hold the write.
    if (isCluster(client)) {
      throw moduleOptionError(
        owner,
        'waitForReplicas',
        'isSupported',
        'waitForReplicas is not supported with a Cluster client',
      );
    }
    return waitingFor(client, replicas, timeoutMs, owner);
  };
}

function waitingFor(
  client: Redis,
  replicas: number,
  timeoutMs: number,
  owner: string,
): ReplicatedWrite {
  return async (write) => {
    const result = await write;
    // WAIT counts the writes of this connection made before it, so the one above among them.
    const acknowledged = await client.wait(replicas, timeoutMs);
    if (acknowledged < replicas) {
      throw new Error(
        `${owner}: ${acknowledged} of ${replicas} replica(s) acknowledged the write within ` +
          `${timeoutMs} ms (waitForReplicas); it does not count as written`,
      );
    }
    return result;
  };
}

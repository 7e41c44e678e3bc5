/**
 * The redis-server of (a+r), started by the bench itself with the specs' helper (a free loopback
 * port, persistence off), so that the Redis journal is measured against a real server. A bench
 * that asks for (a+r) and cannot start it fails: it never leaves the row out.
 */
import type { Redis } from 'ioredis';
import { RedisServer } from '../libs/payments/spec-support/redis-server';

/** What redis-server has used and served so far (INFO cpu, INFO stats). */
export interface RedisCounters {
  /** User + system CPU of the whole server (every thread), in µs. */
  cpuMicros: number;
  /** Commands processed so far, less this connection's own INFOs: deltas count the clients'. */
  commands: number;
}

export interface BenchRedis {
  readonly url: string;
  /** redis-server's pid: its CPU is the bench's own, not other processes'. */
  readonly pid: number;
  counters(): Promise<RedisCounters>;
  stop(): Promise<void>;
}

function infoField(info: string, name: string): number {
  const value = new RegExp(`^${name}:(.+)$`, 'm').exec(info)?.[1];
  const parsed = Number(value);
  if (value === undefined || !Number.isFinite(parsed)) {
    throw new Error(`redis-server INFO has no ${name}`);
  }
  return parsed;
}

export async function startBenchRedis(): Promise<BenchRedis> {
  let server: RedisServer;
  try {
    server = await RedisServer.start();
  } catch (error: unknown) {
    throw new Error(
      `bench: (a+r) needs a redis-server and none could be started; install Debian's redis-server (/usr/bin/redis-server), set REDIS_SERVER, or leave (a+r) out with BENCH_CLIENTS. ${error instanceof Error ? error.message : String(error)}`,
    );
  }
  let client: Redis | undefined;
  try {
    // The orchestrator's own connection: it reads counters between slices, never during one.
    const { Redis: RedisClient } = await import('ioredis');
    client = new RedisClient(server.url, { maxRetriesPerRequest: 1, commandTimeout: 5_000 });
    const connection = client;
    const pid = infoField(await connection.info('server'), 'process_id');
    // Redis counts a command once it has run: an INFO's count holds the earlier INFOs, not itself.
    let ownCommands = 1;
    return {
      url: server.url,
      pid,
      async counters() {
        const info = (await connection.call('INFO', 'cpu', 'stats')) as string;
        const commands = infoField(info, 'total_commands_processed') - ownCommands;
        ownCommands += 1;
        return {
          cpuMicros:
            (infoField(info, 'used_cpu_user') + infoField(info, 'used_cpu_sys')) * 1_000_000,
          commands,
        };
      },
      async stop() {
        connection.disconnect();
        await server.close();
      },
    };
  } catch (error: unknown) {
    client?.disconnect();
    await server.close();
    throw error;
  }
}

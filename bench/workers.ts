/** The parent's side of a worker process (worker.ts): start it, ask it, stop it. */
import type { ChildProcess } from 'node:child_process';
import type { ClientKey } from './clients';
import { forkBenchScript, nextMessage } from './fork';
import type { WorkerCommand, WorkerReply, WorkerResults } from './protocol';

/** Long enough for 100,000 calls through the slowest client on a busy machine. */
const COMMAND_TIMEOUT_MS = 10 * 60_000;

export interface Worker {
  readonly key: ClientKey | 'none';
  readonly pid: number | undefined;
  ask<T extends WorkerCommand>(command: T): Promise<WorkerResults[T['type']]>;
  /** Closes the client (its sockets) and ends the process. */
  stop(): Promise<void>;
}

async function answer(child: ChildProcess, what: string): Promise<unknown> {
  const reply = await nextMessage<WorkerReply>(child, what, COMMAND_TIMEOUT_MS);
  if (!reply.ok) throw new Error(`${what} failed: ${reply.error}`);
  return reply.value;
}

/** Worker `key`; `redisUrl` is the bench's redis-server, which (a+r) needs (bench/redis.ts). */
export async function startWorker(key: ClientKey | 'none', redisUrl?: string): Promise<Worker> {
  const args = redisUrl === undefined ? [key] : [key, redisUrl];
  const child = forkBenchScript('worker', args, { exposeGc: true, pathAliases: true });
  try {
    await answer(child, `worker ${key} start`);
  } catch (error: unknown) {
    child.kill();
    throw error;
  }
  let stopped = false;
  return {
    key,
    pid: child.pid,
    async ask<T extends WorkerCommand>(command: T) {
      const reply = answer(child, `worker ${key} ${command.type}`);
      child.send(command);
      return (await reply) as WorkerResults[T['type']];
    },
    async stop() {
      if (stopped) return;
      stopped = true;
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
      try {
        const reply = answer(child, `worker ${key} close`);
        child.send({ type: 'close' } satisfies WorkerCommand);
        await reply;
      } catch {
        // A worker that cannot close cleanly is ended: its figures are already in.
        child.kill();
      }
      await exited;
    },
  };
}

/**
 * One worker per key, started together. If any fails to start, the others are stopped before
 * the failure is passed on: a worker left running would hold the parent's IPC channel open.
 */
export async function startWorkers(
  keys: readonly (ClientKey | 'none')[],
  redisUrl?: string,
): Promise<Worker[]> {
  const outcomes = await Promise.allSettled(keys.map((key) => startWorker(key, redisUrl)));
  const started = outcomes.flatMap((outcome) =>
    outcome.status === 'fulfilled' ? [outcome.value] : [],
  );
  const failure = outcomes.find((outcome) => outcome.status === 'rejected');
  if (failure !== undefined) {
    for (const worker of started) await worker.stop();
    throw failure.reason;
  }
  return started;
}

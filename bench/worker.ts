/**
 * A worker process: one client (argv[2], or `none`) and whatever the parent asks of it, one
 * command at a time over IPC (protocol.ts). Keeping each client in a process of its own means
 * its CPU, event loop and heap hold nothing of the other clients or of the orchestration.
 */
import { createClient, isClientKey, type Client } from './clients';
import { runLoad, runLoadFor } from './load';
import { measureHeapGrowth, measureInflight } from './memory';
import type { WorkerCommand, WorkerReply } from './protocol';

const key = process.argv[2] ?? 'none';
/** The bench's redis-server, for (a+r) (bench/redis.ts). */
const redisUrl = process.argv[3];

/** One client per server port, made on first use and kept: its pool stays warm across runs. */
const clients = new Map<number, Promise<Client>>();

function clientFor(port: number): Promise<Client> {
  if (!isClientKey(key)) throw new Error(`worker ${key} has no client`);
  let client = clients.get(port);
  if (client === undefined) {
    client = createClient(key, port, redisUrl === undefined ? {} : { redisUrl });
    clients.set(port, client);
  }
  return client;
}

async function execute(command: WorkerCommand): Promise<unknown> {
  switch (command.type) {
    case 'load':
      return runLoad((await clientFor(command.port)).call, command.calls, command.concurrency);
    case 'timedLoad':
      return runLoadFor((await clientFor(command.port)).call, command.seconds, command.concurrency);
    case 'inflight':
      return measureInflight(
        await clientFor(command.port),
        command.port,
        command.calls,
        command.warmupCalls,
        command.batch,
      );
    case 'heapGrowth':
      return measureHeapGrowth(
        await clientFor(command.port),
        command.calls,
        command.concurrency,
        command.warmupCalls,
      );
    case 'micro': {
      // Loaded on demand: it imports library internals, which a client process should not hold.
      const { runDeadlineMicro, runMicro, runWholeCallMicro } = await import('./micro');
      return {
        operations: runMicro(command.iterations),
        deadline: runDeadlineMicro(command.iterations),
        wholeCall: await runWholeCallMicro(command.iterations / 5),
      };
    }
    case 'journalCap': {
      // Loaded on demand, as the micro-benchmarks are.
      const { measureJournalCap } = await import('./journal');
      return measureJournalCap(command.entries, command.creates);
    }
    case 'close':
      for (const client of clients.values()) await (await client).close();
      return null;
  }
}

function main(): void {
  // One command at a time: the parent waits for each reply before it sends the next.
  process.on('message', (command: WorkerCommand) => {
    execute(command).then(
      (value) => {
        const reply: WorkerReply = { ok: true, value };
        process.send?.(reply, () => {
          if (command.type === 'close') process.disconnect();
        });
      },
      (error: unknown) => {
        const reply: WorkerReply = {
          ok: false,
          error: error instanceof Error ? (error.stack ?? error.message) : String(error),
        };
        process.send?.(reply);
      },
    );
  });
  process.on('disconnect', () => process.exit(0));
  process.send?.({ ok: true, value: 'ready' } satisfies WorkerReply);
}

main();

/**
 * Two clients in one process, compared on real sockets at concurrency 64 (docs/performance.md,
 * "Generated steps"). Not part of `npm run bench`: `npm run bench` keeps every client in a
 * process of its own, so its paired differences also carry how differently the same code runs
 * in two processes; here both clients share the process, its heap and its JIT, and each round is
 * a new process.
 *   node -r ts-node/register/transpile-only bench/pair.ts a b0d [rounds]
 * Each round: both clients warmed with 6,000 calls, then 16 slices of 0.25 s each, in turn,
 * the order reversed every other slice. Prints per round and the medians.
 */
import { fork } from 'node:child_process';
import {
  CLIENT_KEYS,
  createClient,
  isClientKey,
  type ClientContext,
  type ClientKey,
} from './clients';
import { runLoad, runLoadFor } from './load';
import { startBenchRedis } from './redis';
import { startServer } from './server-process';
import { median } from './stats';

const CONCURRENCY = 64;
const SLICES = 16;
const SLICE_SECONDS = 0.25;

interface PairResult {
  /** Calls per second of the first client over the second's. */
  readonly ratio: number;
  /** CPU µs per call of the first client minus the second's. */
  readonly cpuDifferenceUs: number;
}

async function measurePair(
  port: number,
  first: ClientKey,
  second: ClientKey,
  context: ClientContext,
): Promise<PairResult> {
  const clients = [
    await createClient(first, port, context),
    await createClient(second, port, context),
  ] as const;
  const totals = clients.map(() => ({ calls: 0, ms: 0, cpuUs: 0 }));
  try {
    for (const client of clients) await runLoad(client.call, 6_000, CONCURRENCY);
    for (let slice = 0; slice < SLICES; slice++) {
      const order = slice % 2 === 0 ? [0, 1] : [1, 0];
      for (const index of order) {
        const cpuBefore = process.cpuUsage();
        const started = performance.now();
        const result = await runLoadFor(clients[index].call, SLICE_SECONDS, CONCURRENCY);
        const cpu = process.cpuUsage(cpuBefore);
        totals[index].calls += result.calls;
        totals[index].ms += performance.now() - started;
        totals[index].cpuUs += cpu.user + cpu.system;
      }
    }
  } finally {
    for (const client of clients) await client.close();
  }
  const [a, b] = totals;
  return {
    ratio: a.calls / a.ms / (b.calls / b.ms),
    cpuDifferenceUs: a.cpuUs / a.calls - b.cpuUs / b.calls,
  };
}

function roundInChild(
  port: number,
  first: ClientKey,
  second: ClientKey,
  redisUrl: string | undefined,
): Promise<PairResult> {
  const args = [
    '--round',
    String(port),
    first,
    second,
    ...(redisUrl === undefined ? [] : [redisUrl]),
  ];
  const child = fork(__filename, args, {
    execArgv: ['-r', 'ts-node/register/transpile-only', '-r', 'tsconfig-paths/register'],
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  return new Promise((resolve, reject) => {
    child.once('message', (message) => resolve(message as PairResult));
    child.once('exit', (code) => reject(new Error(`round process exited with ${code}`)));
  });
}

async function main(): Promise<void> {
  const args = process.argv.slice(2);
  if (args[0] === '--round') {
    const result = await measurePair(
      Number(args[1]),
      args[2] as ClientKey,
      args[3] as ClientKey,
      args[4] === undefined ? {} : { redisUrl: args[4] },
    );
    process.send?.(result, () => process.exit(0));
    return;
  }
  const [first = 'a', second = 'b0d', roundsArg = '8'] = args;
  const rounds = Number(roundsArg);
  if (!isClientKey(first) || !isClientKey(second) || !Number.isInteger(rounds) || rounds < 1) {
    throw new Error(`usage: pair.ts <${CLIENT_KEYS.join('|')}> <same> [rounds]`);
  }
  // (a+r) needs a redis-server, started here as `npm run bench` starts it.
  const redis = first === 'ar' || second === 'ar' ? await startBenchRedis() : undefined;
  const server = await startServer();
  const results: PairResult[] = [];
  try {
    for (let round = 1; round <= rounds; round++) {
      const result = await roundInChild(server.ports.standard, first, second, redis?.url);
      results.push(result);
      process.stderr.write(
        `round ${round}: ${first}/${second} ${result.ratio.toFixed(3)}, CPU ${first} − ${second} ${result.cpuDifferenceUs.toFixed(1)} µs/call\n`,
      );
    }
  } finally {
    server.stop();
    await redis?.stop();
  }
  const differences = results.map((r) => r.cpuDifferenceUs);
  console.log(
    `${first}/${second} at concurrency ${CONCURRENCY}: ${median(results.map((r) => r.ratio)).toFixed(3)}; CPU ${first} − ${second}: ${median(differences).toFixed(1)} µs/call (${Math.min(...differences).toFixed(1)} – ${Math.max(...differences).toFixed(1)}), ${rounds} rounds`,
  );
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});

/**
 * One client alone under load, in this process, for `node --cpu-prof` (see docs/performance.md).
 * The server is forked without the profiler, so the profile holds only client-side work.
 *   node --cpu-prof --cpu-prof-dir=/tmp/malipo-prof -r ts-node/register/transpile-only \
 *     -r tsconfig-paths/register bench/profile.ts a 40000
 * Clients: a|b0|b|c as in `npm run bench`, also b0d and d, and the journal's aj and ar (for ar,
 * a redis-server of its own is started, as `npm run bench` does).
 */
import { CLIENT_KEYS, createClient, isClientKey, type Client } from './clients';
import { runLoad } from './load';
import { startBenchRedis } from './redis';
import { startServer } from './server-process';

async function main(): Promise<void> {
  const [which = 'a', callsArg = '40000'] = process.argv.slice(2);
  const calls = Number(callsArg);
  if (!isClientKey(which) || !Number.isInteger(calls) || calls < 1) {
    throw new Error(`usage: profile.ts <${CLIENT_KEYS.join('|')}> [calls]`);
  }
  const redis = which === 'ar' ? await startBenchRedis() : undefined;
  const server = await startServer();
  let client: Client | undefined;
  try {
    client = await createClient(
      which,
      server.ports.standard,
      redis === undefined ? {} : { redisUrl: redis.url },
    );
    await runLoad(client.call, 2_000, 64);
    const result = await runLoad(client.call, calls, 64);
    process.stderr.write(
      `${client.label}: ${result.callsPerSecond.toFixed(0)} calls/s, ${result.cpuUsPerCall.toFixed(1)} µs CPU/call\n`,
    );
  } finally {
    await client?.close();
    server.stop();
    await redis?.stop();
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});

/**
 * One client alone under load, for `node --cpu-prof` (see docs/performance.md). The server is
 * forked without the profiler, so the profile holds only client-side work.
 *   node --cpu-prof --cpu-prof-dir=/tmp/malipo-prof -r ts-node/register/transpile-only \
 *     -r tsconfig-paths/register bench/profile.ts a 40000
 */
import {
  axiosScenario,
  configuredAxiosScenario,
  nestScenario,
  nodeHttpScenario,
  type Scenario,
} from './clients';
import { runLoad } from './load';
import { startServer } from './server-process';

async function main(): Promise<void> {
  const [which = 'a', callsArg = '40000'] = process.argv.slice(2);
  const calls = Number(callsArg);
  if (!['a', 'b0', 'b', 'c'].includes(which) || !Number.isInteger(calls) || calls < 1) {
    throw new Error('usage: profile.ts <a|b0|b|c> [calls]');
  }
  const { child, port } = await startServer();
  const baseUrl = `http://127.0.0.1:${port}`;
  let scenario: Scenario | undefined;
  try {
    scenario =
      which === 'a'
        ? await nestScenario(baseUrl)
        : which === 'b0'
          ? configuredAxiosScenario(baseUrl, false)
          : which === 'b'
            ? axiosScenario(baseUrl)
            : nodeHttpScenario(port);
    await runLoad(scenario.call, 2_000, 64);
    const result = await runLoad(scenario.call, calls, 64);
    process.stderr.write(
      `${scenario.label}: ${result.callsPerSecond.toFixed(0)} calls/s, ${result.cpuUsPerCall.toFixed(1)} µs CPU/call\n`,
    );
  } finally {
    await scenario?.close();
    child.kill();
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});

#!/usr/bin/env node
// Runs a command several times in a row while CPU-bound processes compete for the cores, as CI
// has them when its machine is shared, and prints one line per run (exit code, seconds) and a
// summary. docs/reliability.md ("Under load") records what it printed.
//
// Usage: node scripts/under-load.js [--hogs 2] [--runs 5] -- <command> [args...]
// Example: node scripts/under-load.js --hogs 2 --runs 20 -- npx jest test/reliability/load.e2e-spec.ts
const { spawn, spawnSync } = require('node:child_process');
const os = require('node:os');

const args = process.argv.slice(2);
const separator = args.indexOf('--');
if (separator < 0 || separator === args.length - 1) {
  console.error('usage: node scripts/under-load.js [--hogs N] [--runs N] -- <command> [args...]');
  process.exit(2);
}
const flags = args.slice(0, separator);
const command = args.slice(separator + 1);
const flag = (name, fallback) => {
  const at = flags.indexOf(name);
  if (at < 0) return fallback;
  const value = Number(flags[at + 1]);
  if (!Number.isInteger(value) || value < 0) {
    console.error(`${name} needs a whole number`);
    process.exit(2);
  }
  return value;
};
const hogs = flag('--hogs', 2);
const runs = flag('--runs', 5);

// Busy loops in their own processes: they take whole cores, as another job on the machine would.
const hogProcesses = Array.from({ length: hogs }, () =>
  spawn(process.execPath, ['-e', 'for (;;) {}'], { stdio: 'ignore' }),
);
const stopHogs = () => hogProcesses.forEach((hog) => hog.kill('SIGKILL'));
process.on('exit', stopHogs);
for (const signal of ['SIGINT', 'SIGTERM']) {
  process.on(signal, () => {
    stopHogs();
    process.exit(130);
  });
}

console.log(
  `under-load: ${runs} run(s) of \`${command.join(' ')}\` beside ${hogs} CPU-bound process(es), ` +
    `${os.cpus().length} cores, Node ${process.version}`,
);
const results = [];
for (let run = 1; run <= runs; run += 1) {
  const started = process.hrtime.bigint();
  const result = spawnSync(command[0], command.slice(1), {
    stdio: ['ignore', 'pipe', 'pipe'],
    encoding: 'utf8',
    maxBuffer: 256 * 1024 * 1024,
    env: process.env,
  });
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  const output = `${result.stdout ?? ''}${result.stderr ?? ''}`;
  // Jest's summary line, when the command is jest.
  const tests = output.match(/^Tests:\s+(.*)$/m)?.[1] ?? '';
  results.push({ run, status: result.status, seconds });
  console.log(
    `run ${run}: exit ${result.status}, ${seconds.toFixed(1)} s${tests ? `, tests: ${tests}` : ''}`,
  );
  if (result.status !== 0) {
    const failures = output.match(/^\s+● .*$/gm) ?? [];
    for (const line of failures.slice(0, 20)) console.log(`  ${line.trim()}`);
  }
}
const failed = results.filter((r) => r.status !== 0).length;
const times = results.map((r) => r.seconds).sort((a, b) => a - b);
console.log(
  `under-load: ${runs - failed} passed, ${failed} failed; seconds min ${times[0].toFixed(1)}, ` +
    `median ${times[Math.floor(times.length / 2)].toFixed(1)}, max ${times[times.length - 1].toFixed(1)}`,
);
stopHogs();
process.exit(failed === 0 ? 0 : 1);

#!/usr/bin/env node
// Installs the packed @malipo/nestjs and @malipo/sandbox into the consumer apps of test/consumers
// as a new user would, and runs them there: each fixture (an app as `nest new` of its Nest major
// creates it: nest11 CommonJS + jest, nest12 ESM + vitest) is copied to a fresh temp folder,
// installed with a plain `npm install <its deps> <the two tarballs>`, then `npm run build`,
// scripts/check-public-types.js (every type the public API names importable under the app's own
// module resolution, the package's declarations sound), `npm test` (a controller spec on
// PaymentsTestingModule) and `npm run test:e2e` (the built app against the sandbox: one M-Pesa
// collection, its webhook confirmed and handled).
//
// Needs dist/libs/payments (node scripts/build-lib.js) and dist/sandbox-package
// (node scripts/build-sandbox.js). Usage: node scripts/verify-consumers.js [nest11] [nest12]
// [--keep] (--keep leaves the temp folder; it is always left when a lane fails).
const { spawnSync } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');

const root = path.resolve(__dirname, '..');
const consumers = path.join(root, 'test', 'consumers');
const packages = [
  {
    name: '@malipo/nestjs',
    dir: path.join(root, 'dist', 'libs', 'payments'),
    build: 'node scripts/build-lib.js',
  },
  {
    name: '@malipo/sandbox',
    dir: path.join(root, 'dist', 'sandbox-package'),
    build: 'node scripts/build-sandbox.js',
  },
];
const STEP_TIMEOUT_MS = 10 * 60_000;
// What a fixture's copy leaves out: never installed or built state, always a fresh install.
const SKIPPED = new Set(['node_modules', 'dist', 'coverage', 'package-lock.json']);

const fail = (message) => {
  console.error(`verify-consumers: ${message}`);
  process.exit(1);
};
const seconds = (ms) => `${(ms / 1000).toFixed(1)}s`;

const args = process.argv.slice(2);
const keep = args.includes('--keep');
const wanted = args.filter((arg) => !arg.startsWith('--'));
const fixtures = fs
  .readdirSync(consumers, { withFileTypes: true })
  .filter(
    (entry) =>
      entry.isDirectory() && fs.existsSync(path.join(consumers, entry.name, 'package.json')),
  )
  .map((entry) => entry.name)
  .sort();
for (const name of wanted) if (!fixtures.includes(name)) fail(`no fixture test/consumers/${name}`);
const lanes = wanted.length > 0 ? wanted : fixtures;

// Nest 12 is ESM: a CommonJS library can only load it through require(esm), unflagged in 20.19.
const [major, minor] = process.versions.node.split('.').map(Number);
if (major < 20 || (major === 20 && minor < 19)) {
  fail(`Node ${process.versions.node}: the Nest 12 lane needs Node 20.19 or later (require(esm))`);
}
for (const pkg of packages) {
  if (!fs.existsSync(path.join(pkg.dir, 'package.json'))) {
    fail(`${path.relative(root, pkg.dir)} is missing: build ${pkg.name} first (${pkg.build})`);
  }
}

/**
 * Runs one command with its output in `log` (a file, not a pipe: a process it leaves behind
 * cannot hold the step open); returns its duration and output, or throws with the log's tail.
 */
function run(command, commandArgs, cwd, log) {
  const startedAt = Date.now();
  fs.writeFileSync(log, '');
  const fd = fs.openSync(log, 'a');
  const result = spawnSync(command, commandArgs, {
    cwd,
    stdio: ['ignore', fd, fd],
    timeout: STEP_TIMEOUT_MS,
    killSignal: 'SIGKILL',
  });
  fs.closeSync(fd);
  const output = fs.readFileSync(log, 'utf8');
  if (result.error || result.status !== 0) {
    const why = result.error ? result.error.message : `exit code ${result.status ?? result.signal}`;
    const tail = output.trimEnd().split('\n').slice(-40).join('\n');
    throw new Error(
      `\`${command} ${commandArgs.join(' ')}\` failed (${why}); full log ${log}\n${tail}`,
    );
  }
  return { ms: Date.now() - startedAt, output };
}

const work = fs.mkdtempSync(path.join(os.tmpdir(), 'malipo-consumers-'));
const tarballs = packages.map((pkg) => {
  const before = new Set(fs.readdirSync(work));
  run('npm', ['pack', pkg.dir, '--pack-destination', work], root, path.join(work, 'pack.log'));
  const filename = fs.readdirSync(work).find((file) => file.endsWith('.tgz') && !before.has(file));
  if (!filename) fail(`npm pack ${path.relative(root, pkg.dir)} made no tarball`);
  // npm names scoped tarballs malipo-nestjs-x.y.z.tgz: relative to a lane, `../<file>`.
  console.log(`packed ${pkg.name} as ${filename}`);
  return filename;
});

const results = [];
let failed = false;
for (const lane of lanes) {
  const dir = path.join(work, lane);
  fs.cpSync(path.join(consumers, lane), dir, {
    recursive: true,
    filter: (source) => !SKIPPED.has(path.basename(source)) && !source.endsWith('.tsbuildinfo'),
  });
  const steps = [
    ['install', 'npm', ['install', ...tarballs.map((file) => `../${file}`)]],
    ['build', 'npm', ['run', 'build']],
    ['types', process.execPath, [path.join(__dirname, 'check-public-types.js')]],
    ['test', 'npm', ['test']],
    ['e2e', 'npm', ['run', 'test:e2e']],
  ];
  const timings = {};
  const laneStart = Date.now();
  console.log(`\n== ${lane} (${dir})`);
  try {
    for (const [step, command, commandArgs] of steps) {
      const { ms, output } = run(command, commandArgs, dir, path.join(work, `${lane}-${step}.log`));
      timings[step] = ms;
      const summary =
        step === 'install'
          ? installedVersions(dir)
          : output
              .split('\n')
              .filter((line) => /e2e OK|Tests:|Tests +\d|passed|public types/.test(line))
              .pop();
      console.log(
        `   ${step.padEnd(8)}${seconds(ms).padStart(7)}  ${stripAnsi(summary ?? '').trim()}`,
      );
    }
    results.push({ lane, ok: true, timings, total: Date.now() - laneStart });
  } catch (error) {
    failed = true;
    results.push({ lane, ok: false, timings, total: Date.now() - laneStart });
    console.error(`   FAILED: ${error instanceof Error ? error.message : String(error)}`);
  }
}

/** The versions a lane resolved, read from its node_modules. */
function installedVersions(dir) {
  const version = (name) => {
    try {
      return JSON.parse(
        fs.readFileSync(path.join(dir, 'node_modules', name, 'package.json'), 'utf8'),
      ).version;
    } catch {
      return '-';
    }
  };
  return ['@nestjs/core', '@nestjs/axios', '@malipo/nestjs', '@malipo/sandbox', 'typescript']
    .map((name) => `${name}@${version(name)}`)
    .join(' ');
}

function stripAnsi(text) {
  // eslint-disable-next-line no-control-regex
  return text.replace(/\u001b\[[0-9;]*m/g, '');
}

console.log(`\nNode ${process.versions.node}`);
console.log('lane      install    build    types     test      e2e    total');
for (const { lane, ok, timings, total } of results) {
  const cell = (step) => (timings[step] === undefined ? '-' : seconds(timings[step])).padStart(9);
  console.log(
    `${lane.padEnd(8)}${cell('install')}${cell('build')}${cell('types')}${cell('test')}${cell('e2e')}${seconds(total).padStart(9)}  ${ok ? 'ok' : 'FAILED'}`,
  );
}
if (failed) {
  console.error(`\nverify-consumers: FAILED; the lanes' folders and logs are in ${work}`);
  process.exit(1);
}
if (keep) console.log(`\nkept ${work}`);
else fs.rmSync(work, { recursive: true, force: true });
console.log(`consumers OK: ${results.map((r) => `${r.lane} ${seconds(r.total)}`).join(', ')}`);

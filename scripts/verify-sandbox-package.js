#!/usr/bin/env node
// Packs dist/sandbox-package and uses it as a new user would, in an empty folder: `npm init -y`, a
// plain `npm install` of the tarball, `npx malipo-sandbox --port 0` (flags and SANDBOX_* variables
// together), one authenticated v2 collection and the ledger over HTTP, SIGINT and a clean exit;
// then `startSandbox()`, its typed control client and `close()` from `node -e`, and a type check of
// a TypeScript user of the package's .d.ts. Prints one OK line; exits non-zero on any failure.
const { execFileSync, spawn } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');

const root = path.resolve(__dirname, '..');
const dist = path.join(root, 'dist', 'sandbox-package');
if (!fs.existsSync(path.join(dist, 'package.json'))) {
  throw new Error('dist/sandbox-package is missing: run node scripts/build-sandbox.js first');
}
const started = Date.now();
// The tarball in a folder of its own, so that the user's folder starts empty.
const packs = fs.mkdtempSync(path.join(os.tmpdir(), 'malipo-sandbox-tgz-'));
const folder = fs.mkdtempSync(path.join(os.tmpdir(), 'malipo-sandbox-user-'));
const npm = (args) =>
  execFileSync('npm', args, {
    cwd: folder,
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'inherit'],
  });
const tarball = path.join(
  packs,
  npm(['pack', dist, '--pack-destination', packs, '--silent']).trim().split('\n').pop(),
);
npm(['init', '-y']);
// A plain install, as a user types it.
npm(['install', tarball]);

const contents = execFileSync('tar', ['-tzf', tarball], { encoding: 'utf8' }).split('\n');
for (const required of [
  'package.json',
  'index.js',
  'index.d.ts',
  'cli.js',
  'README.md',
  'LICENSE',
]) {
  if (!contents.includes(`package/${required}`)) throw new Error(`tarball lacks ${required}`);
}
if (contents.some((file) => /\.spec\.|(^|\/)main\.js$/.test(file))) {
  throw new Error(`tarball holds specs or main.js:\n${contents.join('\n')}`);
}

// A variable the flag overrides (SANDBOX_PORT), and one with no flag given (the password).
const PASSWORD = 'verify-secret';
/** The running `npx malipo-sandbox`, killed (its whole process group) if the check fails. */
let cli;
function startCli() {
  return new Promise((resolve, reject) => {
    const child = spawn('npx', ['malipo-sandbox', '--port', '0', '--webhook-delay-ms', '50'], {
      cwd: folder,
      env: { ...process.env, NO_COLOR: '1', SANDBOX_PORT: '1', SANDBOX_API_PASSWORD: PASSWORD },
      stdio: ['ignore', 'pipe', 'pipe'],
      // Its own process group, so that SIGINT reaches npx and the sandbox together, as Ctrl-C does.
      detached: true,
    });
    cli = child;
    let output = '';
    const timer = setTimeout(() => reject(new Error(`no URL printed:\n${output}`)), 30_000);
    const read = (chunk) => {
      output += chunk;
      const match = /sandbox: (http:\/\/[\d.]+:\d+)/.exec(output);
      if (match && /API credentials \S+ \/ \S+\n/.test(output)) {
        clearTimeout(timer);
        resolve({ child, url: match[1], output: () => output });
      }
    };
    child.stdout.on('data', read);
    child.stderr.on('data', read);
    child.on('exit', (code) => reject(new Error(`malipo-sandbox exited (${code}):\n${output}`)));
  });
}

async function main() {
  const help = execFileSync('npx', ['malipo-sandbox', '--help'], { cwd: folder, encoding: 'utf8' });
  if (!help.startsWith('Usage: malipo-sandbox')) throw new Error(`--help printed:\n${help}`);

  const { child, url, output } = await startCli();
  if (!output().includes(`API credentials sandbox / ${PASSWORD}`)) {
    throw new Error(`SANDBOX_API_PASSWORD not applied:\n${output()}`);
  }
  const auth = `Basic ${Buffer.from(`sandbox:${PASSWORD}`).toString('base64')}`;
  const answer = await fetch(`${url}/api/v2/payments`, {
    method: 'POST',
    headers: { authorization: auth, 'content-type': 'application/json' },
    body: JSON.stringify({
      username: 'sandbox',
      channel: 'MOBILE_MONEY_KE',
      amount: 1500,
      phone_number: '0712345678',
      narration: 'Order 42',
      currency: 'KES',
      callback_url: 'http://127.0.0.1:3000/webhooks/payments',
    }),
  });
  const accepted = await answer.json();
  if (
    answer.status !== 200 ||
    accepted.success !== true ||
    !/eR$/.test(accepted.transaction_reference)
  ) {
    throw new Error(`collection refused: ${answer.status} ${JSON.stringify(accepted)}`);
  }
  const ledger = await (await fetch(`${url}/__sandbox/transactions`)).json();
  if (!ledger.some((t) => t.reference === accepted.transaction_reference)) {
    throw new Error('the collection is not in the ledger');
  }
  const exited = new Promise((resolve) =>
    child.on('exit', (code, signal) => resolve({ code, signal })),
  );
  process.kill(-child.pid, 'SIGINT');
  const exit = await Promise.race([
    exited,
    new Promise((_, reject) => setTimeout(() => reject(new Error('no exit after SIGINT')), 10_000)),
  ]);
  // npx itself ends on the signal (npm re-raises it); the sandbox says it stopped and exits 0.
  if (!(exit.code === 0 || exit.signal === 'SIGINT') || !output().includes('Sandbox stopped.')) {
    throw new Error(
      `malipo-sandbox exited with ${exit.signal ?? exit.code} after SIGINT:\n${output()}`,
    );
  }
  if (url.endsWith(':1')) throw new Error('--port 0 did not win over SANDBOX_PORT');

  const inCode = `const { startSandbox, createSandboxControl, SandboxControlError } = require('@malipo/sandbox');
(async () => {
  const sandbox = await startSandbox({ port: 0, logger: false });
  if (!/^http:\\/\\/127\\.0\\.0\\.1:\\d+$/.test(sandbox.url)) throw new Error('bad url ' + sandbox.url);
  if (sandbox.credentials.apiUsername !== 'sandbox' || sandbox.accounts.length !== 2) throw new Error('bad credentials');
  const wallets = await sandbox.control.wallets();
  if (typeof wallets.local !== 'number') throw new Error('no wallets');
  const fault = await sandbox.control.injectFault({ status: 503 });
  if (fault.remaining !== 1) throw new Error('fault not queued');
  const refused = await sandbox.control.injectFault({}).catch((e) => e);
  if (!(refused instanceof SandboxControlError) || refused.status !== 400) throw new Error('bad fault accepted');
  await createSandboxControl(sandbox.url).reset();
  if ((await sandbox.control.faults()).queued.length !== 0) throw new Error('reset failed');
  if ((await sandbox.control.transactions()).length !== 0) throw new Error('ledger not empty');
  await sandbox.close();
})().catch((e) => { console.error(e); process.exit(1); });`;
  execFileSync(process.execPath, ['-e', inCode], {
    cwd: folder,
    stdio: 'inherit',
    timeout: 30_000,
  });

  // The .d.ts as a strict TypeScript user sees them (the repository's compiler and @types/node).
  fs.writeFileSync(
    path.join(folder, 'types-check.ts'),
    `import { createSandboxControl, SandboxControlError, startSandbox } from '@malipo/sandbox';
import type { RunningSandbox, SandboxFault, SandboxOptions, SandboxTransaction } from '@malipo/sandbox';

export async function check(): Promise<void> {
  const options: SandboxOptions = { port: 0, logger: false, webhookDelayMs: 20 };
  const sandbox: RunningSandbox = await startSandbox(options);
  const fault: SandboxFault = { status: 502, afterExecute: true, path: '/api/v2/withdrawal' };
  await sandbox.control.injectFault(fault);
  await sandbox.control.randomFaults({ rate: 0.2, seed: 7 });
  const ledger: SandboxTransaction[] = await sandbox.control.transactions();
  const keys: (string | null)[] = ledger.map((t) => t.idempotencyKey);
  const local: number = (await sandbox.control.wallets()).local;
  const raw = await sandbox.control<{ queued: unknown[] }>('faults');
  const base: string = sandbox.url;
  const { apiUsername, apiPassword } = sandbox.credentials;
  const error = new SandboxControlError(404, null, 'x');
  await createSandboxControl(base).reset();
  console.log(keys, local, raw.queued, apiUsername, apiPassword, error.status);
  await sandbox.close();
}
`,
  );
  execFileSync(
    process.execPath,
    [
      require.resolve('typescript/bin/tsc'),
      '--noEmit',
      '--strict',
      '--module',
      'commonjs',
      '--moduleResolution',
      'node',
      '--target',
      'es2022',
      '--types',
      'node',
      '--typeRoots',
      path.join(root, 'node_modules', '@types'),
      'types-check.ts',
    ],
    { cwd: folder, stdio: 'inherit' },
  );
  fs.rmSync(folder, { recursive: true, force: true });
  fs.rmSync(packs, { recursive: true, force: true });
  console.log(
    `sandbox package OK: npx malipo-sandbox served a collection and its ledger and stopped cleanly on SIGINT (npx: ${exit.signal ?? `exit ${exit.code}`}); startSandbox(), sandbox.control and close() work from node -e; its .d.ts type-check in strict TypeScript (${((Date.now() - started) / 1000).toFixed(0)} s)`,
  );
}

main().catch((error) => {
  if (cli && cli.exitCode === null && cli.signalCode === null) {
    try {
      process.kill(-cli.pid, 'SIGKILL');
    } catch {
      // already gone
    }
  }
  console.error(error);
  fs.rmSync(packs, { recursive: true, force: true });
  console.error(`verify-sandbox-package FAILED; left for inspection: ${folder}`);
  process.exit(1);
});

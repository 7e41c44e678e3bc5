#!/usr/bin/env node
// Packs dist/sandbox-package and uses it as a new user would, in an empty folder: `npm init -y`, a
// plain `npm install` of the tarball, `npx malipo-sandbox --port 0` (flags and SANDBOX_* variables
// together), one authenticated v2 collection and the ledger over HTTP, SIGINT and a clean exit;
// then `startSandbox()` and `close()` from `node -e`. Prints one OK line; exits non-zero on failure.
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
npm(['install', tarball, '--no-audit', '--no-fund']);

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
function startCli() {
  return new Promise((resolve, reject) => {
    const child = spawn('npx', ['malipo-sandbox', '--port', '0', '--webhook-delay-ms', '50'], {
      cwd: folder,
      env: { ...process.env, NO_COLOR: '1', SANDBOX_PORT: '1', SANDBOX_API_PASSWORD: PASSWORD },
      stdio: ['ignore', 'pipe', 'pipe'],
      // Its own process group, so that SIGINT reaches npx and the sandbox together, as Ctrl-C does.
      detached: true,
    });
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

  const inCode = `const { startSandbox } = require('@malipo/sandbox');
(async () => {
  const sandbox = await startSandbox({ port: 0, logger: false });
  const wallets = await sandbox.control('wallets');
  if (typeof wallets.local !== 'number') throw new Error('no wallets');
  await sandbox.close();
})().catch((e) => { console.error(e); process.exit(1); });`;
  execFileSync(process.execPath, ['-e', inCode], {
    cwd: folder,
    stdio: 'inherit',
    timeout: 30_000,
  });
  fs.rmSync(folder, { recursive: true, force: true });
  fs.rmSync(packs, { recursive: true, force: true });
  console.log(
    `sandbox package OK: npx malipo-sandbox served a collection and its ledger and stopped cleanly on SIGINT (npx: ${exit.signal ?? `exit ${exit.code}`}); startSandbox() and close() work from node -e (${((Date.now() - started) / 1000).toFixed(0)} s)`,
  );
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});

#!/usr/bin/env node
// Packs dist/sandbox-package and uses it as a new user would, in an empty folder: a plain
// `npm install` of the tarball, `npx malipo-sandbox --port 0`, one collection and the ledger over
// HTTP, Ctrl-C; then `startSandbox()` from code.
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
const folder = fs.mkdtempSync(path.join(os.tmpdir(), 'malipo-sandbox-user-'));
const npm = (args) =>
  execFileSync('npm', args, {
    cwd: folder,
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'inherit'],
  });
const tarball = path.join(
  folder,
  npm(['pack', dist, '--pack-destination', folder, '--silent']).trim().split('\n').pop(),
);
npm(['init', '-y']);
npm(['install', tarball, '--no-audit', '--no-fund']);

function startCli() {
  return new Promise((resolve, reject) => {
    const child = spawn('npx', ['malipo-sandbox', '--port', '0', '--webhook-delay-ms', '50'], {
      cwd: folder,
      env: { ...process.env, NO_COLOR: '1' },
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,
    });
    let output = '';
    const timer = setTimeout(() => reject(new Error(`no URL printed:\n${output}`)), 30_000);
    const read = (chunk) => {
      output += chunk;
      const match = /sandbox: (http:\/\/[\d.]+:\d+)/.exec(output);
      if (match) {
        clearTimeout(timer);
        resolve({ child, url: match[1] });
      }
    };
    child.stdout.on('data', read);
    child.stderr.on('data', read);
    child.on('exit', (code) => reject(new Error(`malipo-sandbox exited (${code}):\n${output}`)));
  });
}

async function main() {
  const { child, url } = await startCli();
  const auth = `Basic ${Buffer.from('sandbox:sandbox-secret').toString('base64')}`;
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
      callback_url: 'http://127.0.0.1:9/webhooks/payments',
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
  fs.writeFileSync(
    path.join(folder, 'in-code.js'),
    `const { startSandbox } = require('@malipo/sandbox');
(async () => {
  const sandbox = await startSandbox({ port: 0, logger: false });
  const wallets = await sandbox.control('wallets');
  if (typeof wallets.local !== 'number') throw new Error('no wallets');
  await sandbox.close();
})().catch((e) => { console.error(e); process.exit(1); });`,
  );
  execFileSync(process.execPath, ['in-code.js'], {
    cwd: folder,
    stdio: 'inherit',
    timeout: 30_000,
  });
  fs.rmSync(folder, { recursive: true, force: true });
  console.log(
    `sandbox package OK: npx malipo-sandbox served a collection and its ledger and stopped on SIGINT (${exit.signal ?? exit.code}); startSandbox() works from code (${((Date.now() - started) / 1000).toFixed(0)} s)`,
  );
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});

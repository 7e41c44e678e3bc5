#!/usr/bin/env node
// Packs dist/libs/payments, installs the tarball into a fresh Nest app in a temp folder, and uses it
// there through plain require(): module boot, an HTTP call on loopback, and createPaymentsClient.
const { execFileSync } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');

const root = path.resolve(__dirname, '..');
const dist = path.join(root, 'dist', 'libs', 'payments');
const rootManifest = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8'));
const app = fs.mkdtempSync(path.join(os.tmpdir(), 'malipo-consumer-'));
const npm = (args, cwd) =>
  execFileSync('npm', args, { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] });

const tarball = path.join(
  app,
  npm(['pack', dist, '--pack-destination', app, '--silent'], root).trim().split('\n').pop(),
);
const contents = execFileSync('tar', ['-tzf', tarball], { encoding: 'utf8' });
for (const required of [
  'package/package.json',
  'package/index.js',
  'package/index.d.ts',
  'package/README.md',
  'package/LICENSE',
  'package/docs/journal.md',
  'package/docs/payout-runs.md',
  'package/docs/errors.md',
]) {
  if (!contents.split('\n').includes(required)) throw new Error(`tarball lacks ${required}`);
}

const peers = [
  '@nestjs/common',
  '@nestjs/core',
  '@nestjs/axios',
  'axios',
  'class-validator',
  'class-transformer',
  'reflect-metadata',
  'rxjs',
];
const dependencies = Object.fromEntries(
  peers.map((name) => [name, rootManifest.dependencies[name]]),
);
// The optional peers of @malipo/nestjs/runs/bullmq, at the versions the repository tests with.
for (const name of ['bullmq', 'ioredis']) dependencies[name] = rootManifest.devDependencies[name];
dependencies['@malipo/nestjs'] = `file:${tarball}`;
fs.writeFileSync(
  path.join(app, 'package.json'),
  JSON.stringify({ name: 'consumer', private: true, dependencies }, null, 2),
);
npm(['install', '--prefer-offline', '--no-audit', '--no-fund', '--silent'], app);

fs.writeFileSync(
  path.join(app, 'main.js'),
  `
require('reflect-metadata');
const http = require('node:http');
const { Module } = require('@nestjs/common');
const { NestFactory } = require('@nestjs/core');
const { PaymentsModule, CollectionsService, createPaymentsClient, PaymentsValidationError } = require('@malipo/nestjs');

async function main() {
  const seen = [];
  const server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', () => {
      seen.push({ path: req.url, body: JSON.parse(body) });
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ payment_method: 'mobile', status: 'SUCCESS', transaction_reference: 'TX-PKG', success: true, message: 'Processed successfully', trackingId: '', reference: '', result: null }));
    });
  });
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  const baseUrl = 'http://127.0.0.1:' + server.address().port;

  class AppModule {}
  Module({ imports: [PaymentsModule.forRoot({ apiUsername: 'u', apiPassword: 'p', baseUrl, defaultUsername: 'acme' })] })(AppModule);
  const app = await NestFactory.createApplicationContext(AppModule, { logger: false });
  const response = await app.get(CollectionsService).mpesa({ amount: 100, phoneNumber: '0712345678', narration: 'pkg', callbackUrl: 'https://cb.example.com/h' });
  if (response.transactionReference !== 'TX-PKG' || seen[0].body.username !== 'acme') throw new Error('module call failed');
  await app.close();

  const client = createPaymentsClient({ apiUsername: 'u', apiPassword: 'p', baseUrl });
  const rejected = await client.collections.mpesa({ amount: 1, phoneNumber: '0712345678', narration: 'x', callbackUrl: 'https://cb.example.com/h', username: 'a' }).catch((e) => e);
  if (!(rejected instanceof PaymentsValidationError)) throw new Error('validation failed');

  const { PaymentsTestingModule, FakePayments } = require('@malipo/nestjs/testing');
  class TestAppModule {}
  Module({ imports: [PaymentsTestingModule.forRoot({ defaultUsername: 'acme' })] })(TestAppModule);
  const testApp = await NestFactory.createApplicationContext(TestAppModule, { logger: false });
  const faked = await testApp.get(CollectionsService).mpesa({ amount: 100, phoneNumber: '0712345678', narration: 'pkg', callbackUrl: 'https://cb.example.com/h' });
  if (!/eR$/.test(faked.transactionReference) || testApp.get(FakePayments).calls.length !== 1) throw new Error('testing entry point failed');
  await testApp.close();
  server.close();
  console.log('package OK: require("@malipo/nestjs") and require("@malipo/nestjs/testing") work in a fresh app');
}
main().catch((e) => { console.error(e); process.exit(1); });
`,
);
// The main entry must stay light: no Nest core, no HTTP platform, no webhook code until asked for.
fs.writeFileSync(
  path.join(app, 'light.js'),
  `
require('reflect-metadata');
require('@malipo/nestjs');
const heavy = Object.keys(require.cache).filter((file) =>
  /node_modules[\\\\/]@nestjs[\\\\/](core|platform-[^\\\\/]+)[\\\\/]|@malipo[\\\\/]nestjs[\\\\/](webhooks|swagger|redis|testing|runs)[\\\\/]|node_modules[\\\\/](bullmq|ioredis)[\\\\/]/.test(file),
);
if (heavy.length > 0) throw new Error('require("@malipo/nestjs") loaded ' + heavy.slice(0, 5).join(', '));
const webhooks = require('@malipo/nestjs/webhooks');
if (typeof webhooks.PaymentsWebhookModule?.forRoot !== 'function' || typeof webhooks.OnPaymentEvent !== 'function') {
  throw new Error('@malipo/nestjs/webhooks lacks its module');
}
const runs = require('@malipo/nestjs/runs');
if (typeof runs.PayoutRunsModule?.forRoot !== 'function' || typeof runs.OnPayoutRunEvent !== 'function' || typeof runs.PayoutRunsService !== 'function') {
  throw new Error('@malipo/nestjs/runs lacks its module');
}
// Runs in process need no BullMQ: only @malipo/nestjs/runs/bullmq loads it.
const bullmqLoaded = () => Object.keys(require.cache).some((file) => /node_modules[\\\\/]bullmq[\\\\/]/.test(file));
if (bullmqLoaded()) throw new Error('require("@malipo/nestjs/runs") loaded bullmq');
const onBullmq = require('@malipo/nestjs/runs/bullmq');
if (typeof onBullmq.bullmqPayoutRunEngine !== 'function' || typeof onBullmq.BullMQPayoutRunEngine !== 'function' || typeof onBullmq.RedisPayoutRunStore !== 'function') {
  throw new Error('@malipo/nestjs/runs/bullmq lacks its engine or store');
}
if (!bullmqLoaded()) throw new Error('@malipo/nestjs/runs/bullmq did not load bullmq');
console.log('main entry OK: no @nestjs/core, no platform, no webhook or runs code; @malipo/nestjs/webhooks and @malipo/nestjs/runs load (without bullmq), @malipo/nestjs/runs/bullmq loads with it');
`,
);
console.log(execFileSync(process.execPath, ['light.js'], { cwd: app, encoding: 'utf8' }).trim());
console.log(execFileSync(process.execPath, ['main.js'], { cwd: app, encoding: 'utf8' }).trim());
fs.rmSync(app, { recursive: true, force: true });

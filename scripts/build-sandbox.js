#!/usr/bin/env node
// Builds apps/sandbox into dist/sandbox-package as the npm package @malipo/sandbox: the emulator
// for a user's e2e tests (`startSandbox()`) and the `malipo-sandbox` command.
const { execFileSync } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');

const root = path.resolve(__dirname, '..');
const sandbox = path.join(root, 'apps', 'sandbox');
const out = path.join(root, 'dist', 'sandbox-package');
const rootManifest = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8'));

fs.rmSync(out, { recursive: true, force: true });
fs.mkdirSync(out, { recursive: true });
// A tsconfig of its own: the package holds only the sandbox's sources, never the library's.
const tsconfig = path.join(out, 'tsconfig.build.json');
fs.writeFileSync(
  tsconfig,
  JSON.stringify({
    extends: path.join(root, 'tsconfig.build.json'),
    compilerOptions: {
      rootDir: path.join(sandbox, 'src'),
      outDir: out,
      declaration: true,
      sourceMap: false,
      paths: {},
    },
    include: [path.join(sandbox, 'src', '**', '*.ts')],
    exclude: [path.join(sandbox, 'src', '**', '*.spec.ts')],
  }),
);
execFileSync(process.execPath, [require.resolve('typescript/bin/tsc'), '-p', tsconfig], {
  stdio: 'inherit',
});
fs.rmSync(tsconfig);

const bin = path.join(out, 'main.js');
fs.writeFileSync(bin, `#!/usr/bin/env node\n${fs.readFileSync(bin, 'utf8')}`);
fs.chmodSync(bin, 0o755);

const nest = (name) => rootManifest.dependencies[name].replace(/^[\^~]?/, '^');
const manifest = {
  name: '@malipo/sandbox',
  version: '0.1.0',
  description:
    'An offline emulator of the Payments Service (M-Pesa, card, pan-African collections and payouts, look-ups, webhooks, faults) for e2e tests.',
  license: 'MIT',
  main: 'index.js',
  types: 'index.d.ts',
  bin: { 'malipo-sandbox': 'main.js' },
  files: ['**/*.js', '**/*.d.ts', 'README.md', 'LICENSE'],
  engines: { node: '>=20.11' },
  dependencies: {
    '@nestjs/common': nest('@nestjs/common'),
    '@nestjs/core': nest('@nestjs/core'),
    '@nestjs/platform-express': nest('@nestjs/platform-express'),
    'reflect-metadata': nest('reflect-metadata'),
    rxjs: nest('rxjs'),
  },
};
fs.writeFileSync(path.join(out, 'package.json'), `${JSON.stringify(manifest, null, 2)}\n`);
fs.copyFileSync(path.join(root, 'LICENSE'), path.join(out, 'LICENSE'));
fs.copyFileSync(path.join(sandbox, 'README.md'), path.join(out, 'README.md'));
console.log(`built ${manifest.name}@${manifest.version} in ${path.relative(root, out)}`);

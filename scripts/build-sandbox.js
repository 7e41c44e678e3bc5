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
    // main.ts is the repository's `npm run sandbox` / `nest start sandbox` entry; cli.ts is the bin.
    exclude: [path.join(sandbox, 'src', '**', '*.spec.ts'), path.join(sandbox, 'src', 'main.ts')],
  }),
);
execFileSync(process.execPath, [require.resolve('typescript/bin/tsc'), '-p', tsconfig], {
  stdio: 'inherit',
});
fs.rmSync(tsconfig);

const bin = path.join(out, 'cli.js');
fs.writeFileSync(bin, `#!/usr/bin/env node\n${fs.readFileSync(bin, 'utf8')}`);
fs.chmodSync(bin, 0o755);

// Nest 11 only, although the compiled sandbox also runs on Nest 12 (12.5.1 over the packed tarball:
// routes, validation, faults, checkout, webhooks): with `^11.0.0 || ^12.0.0` a plain install picks
// Nest 12, which is ES modules only and needs Node 20.19 (require of ESM), so it would break the
// package's own `engines` (>= 20.11). In a Nest 12 app npm nests a Nest 11 for the sandbox, which
// imports nothing from the app. Other runtime dependencies: the root's pin, as a caret.
const NEST = '^11.0.0';
const caret = (name) => rootManifest.dependencies[name].replace(/^[\^~]?/, '^');
const manifest = {
  name: '@malipo/sandbox',
  version: '0.1.0',
  description:
    'An offline emulator of the Payments Service (M-Pesa, card, pan-African collections and payouts, look-ups, webhooks, faults) for e2e tests.',
  license: 'MIT',
  main: 'index.js',
  types: 'index.d.ts',
  bin: { 'malipo-sandbox': 'cli.js' },
  files: ['**/*.js', '**/*.d.ts', 'README.md', 'LICENSE'],
  engines: { node: '>=20.11' },
  dependencies: {
    '@nestjs/common': NEST,
    '@nestjs/core': NEST,
    '@nestjs/platform-express': NEST,
    'reflect-metadata': caret('reflect-metadata'),
    rxjs: caret('rxjs'),
  },
};
fs.writeFileSync(path.join(out, 'package.json'), `${JSON.stringify(manifest, null, 2)}\n`);
fs.copyFileSync(path.join(root, 'LICENSE'), path.join(out, 'LICENSE'));
// The package README: its own head (install, npx malipo-sandbox, startSandbox() in e2e tests), then
// the reference sections of apps/sandbox/README.md (from "## Accounts" on), less the paragraph
// that points into this repository's sources.
const reference = fs.readFileSync(path.join(sandbox, 'README.md'), 'utf8');
const from = reference.indexOf('\n## Accounts\n');
if (from < 0) throw new Error('apps/sandbox/README.md has no "## Accounts" section');
const sourcesParagraph = /\nThe operation table \(names[\s\S]*?\n\n/;
if (!sourcesParagraph.test(reference))
  throw new Error('apps/sandbox/README.md: sources paragraph moved');
fs.writeFileSync(
  path.join(out, 'README.md'),
  `${fs.readFileSync(path.join(sandbox, 'README.package.md'), 'utf8').trimEnd()}\n${reference
    .slice(from)
    .replace(sourcesParagraph, '\n')}`,
);
console.log(`built ${manifest.name}@${manifest.version} in ${path.relative(root, out)}`);

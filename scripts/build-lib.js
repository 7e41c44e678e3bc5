#!/usr/bin/env node
// Builds libs/payments into dist/libs/payments as a complete npm package (@malipo/nestjs).
// The Nest CLI compiles monorepo libraries into apps, not as packages, so this is done by hand.
const { execFileSync } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');

const root = path.resolve(__dirname, '..');
const lib = path.join(root, 'libs', 'payments');
const out = path.join(root, 'dist', 'libs', 'payments');

fs.rmSync(out, { recursive: true, force: true });
execFileSync(
  process.execPath,
  [require.resolve('typescript/bin/tsc'), '-p', path.join(lib, 'tsconfig.lib.json')],
  {
    stdio: 'inherit',
  },
);

const manifest = JSON.parse(fs.readFileSync(path.join(lib, 'package.json'), 'utf8'));
manifest.files = ['**/*.js', '**/*.d.ts', 'README.md', 'LICENSE', 'CHANGELOG.md', 'docs/*.md'];
manifest.sideEffects = false;
fs.writeFileSync(path.join(out, 'package.json'), `${JSON.stringify(manifest, null, 2)}\n`);
for (const file of ['README.md', 'LICENSE', 'CHANGELOG.md']) {
  const source = fs.existsSync(path.join(lib, file)) ? path.join(lib, file) : path.join(root, file);
  if (fs.existsSync(source)) fs.copyFileSync(source, path.join(out, file));
}
// The README links to docs/ (the journal's and the stores' contracts): they ship beside it.
fs.mkdirSync(path.join(out, 'docs'), { recursive: true });
for (const doc of fs.readdirSync(path.join(root, 'docs')).filter((name) => name.endsWith('.md'))) {
  fs.copyFileSync(path.join(root, 'docs', doc), path.join(out, 'docs', doc));
}
console.log(`built ${manifest.name}@${manifest.version} in ${path.relative(root, out)}`);

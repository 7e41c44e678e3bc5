import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

/**
 * scripts/check-public-types.js over a package of one declaration file: a type of ours that the
 * public API names and no entry point exports fails it, however the API wraps it.
 */
const SCRIPT = path.resolve(__dirname, '../../scripts/check-public-types.js');
const TYPESCRIPT = path.dirname(require.resolve('typescript/package.json'));

/** Runs the check from an app whose `@malipo/nestjs` declares `declarations` alone. */
function checkPackageDeclaring(declarations: string): { status: number | null; output: string } {
  const app = fs.mkdtempSync(path.join(os.tmpdir(), 'malipo-public-types-'));
  try {
    const installed = path.join(app, 'node_modules', '@malipo', 'nestjs');
    fs.mkdirSync(installed, { recursive: true });
    fs.symlinkSync(TYPESCRIPT, path.join(app, 'node_modules', 'typescript'));
    fs.writeFileSync(
      path.join(installed, 'package.json'),
      JSON.stringify({
        name: '@malipo/nestjs',
        version: '0.0.0',
        exports: {
          '.': { types: './index.d.ts', default: './index.js' },
          './package.json': './package.json',
        },
      }),
    );
    fs.writeFileSync(path.join(installed, 'index.js'), '');
    fs.writeFileSync(path.join(installed, 'index.d.ts'), declarations);
    fs.writeFileSync(
      path.join(app, 'tsconfig.json'),
      JSON.stringify({
        compilerOptions: { module: 'nodenext', strict: true, declaration: true },
      }),
    );
    const run = spawnSync(process.execPath, [SCRIPT], { cwd: app, encoding: 'utf8' });
    return { status: run.status, output: `${run.stdout}${run.stderr}` };
  } finally {
    fs.rmSync(app, { recursive: true, force: true });
  }
}

const UNEXPORTED = 'interface RunKnobs { readonly knob: number }\nexport {};\n';

describe('scripts/check-public-types.js', () => {
  it.each([
    'RunKnobs',
    'Promise<RunKnobs>',
    'RunKnobs[]',
    'Readonly<RunKnobs>',
    'Record<string, RunKnobs>',
  ])('fails on a type no entry point exports, named as %s', (spelled) => {
    const { status, output } = checkPackageDeclaring(
      `${UNEXPORTED}export declare function knobs(): ${spelled};\n`,
    );
    expect(output).toMatch(/RunKnobs is not exported by any entry point.*: .*knobs/);
    expect(status).toBe(1);
  });

  it('passes once the entry point exports it', () => {
    const { status, output } = checkPackageDeclaring(
      'export interface RunKnobs { readonly knob: number }\n' +
        'export declare function knobs(): Promise<Readonly<RunKnobs>[]>;\n',
    );
    expect(output).toMatch(/public types OK/);
    expect(status).toBe(0);
  });
});

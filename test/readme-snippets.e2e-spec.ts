import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import ts from 'typescript';

const ROOT = resolve(__dirname, '..');

/** The documents whose TypeScript snippets must compile: the READMEs and docs/. */
const DOCUMENTS = [
  'README.md',
  // The sandbox's, in this repository and in its package.
  'apps/sandbox/README.md',
  'apps/sandbox/README.package.md',
  ...readdirSync(join(ROOT, 'docs'))
    .filter((name) => name.endsWith('.md'))
    .sort()
    .map((name) => `docs/${name}`),
];

/** The TypeScript snippets of the documents, in order, each named by its document. */
function snippets(): { document: string; code: string }[] {
  return DOCUMENTS.flatMap((document) =>
    [...readFileSync(join(ROOT, document), 'utf8').matchAll(/^```ts\n([\s\S]*?)^```$/gm)].map(
      (match) => ({ document, code: match[1] }),
    ),
  );
}

/**
 * The modules of "your" app that snippets import: the app a snippet bootstraps, its orders, and the journal
 * store on your own database that docs/journal.md runs the conformance cases on.
 */
const APP_FILES: Record<string, string> = {
  'app.module.ts': 'export class AppModule {}\n',
  // The Orders of the README's "Use", as its webhook handler ("After a crash") calls it.
  'orders.ts': [
    'export class Orders {',
    '  async paymentFailed(orderId: string, attempt: number): Promise<void> {',
    '    void orderId;',
    '    void attempt;',
    '  }',
    '}',
    '',
  ].join('\n'),
  'postgres-payments-journal.ts': [
    "import { InMemoryPaymentsJournal } from '@malipo/nestjs';",
    'export class PostgresPaymentsJournal extends InMemoryPaymentsJournal {',
    '  constructor(readonly options: { url: string | undefined }) {',
    '    super();',
    '  }',
    '  async close(): Promise<void> {}',
    '}',
    '',
  ].join('\n'),
};

/** Paths that resolve the library's public entry points to its sources. */
const LIBRARY_PATHS = {
  '@malipo/nestjs': ['libs/payments/src'],
  '@malipo/nestjs/*': ['libs/payments/src/*'],
  '@malipo/sandbox': ['apps/sandbox/src/index.ts'],
};

/** The settings both kinds of app share: strict, decorators, the library's paths. */
const COMMON_OPTIONS: ts.CompilerOptions = {
  strict: true,
  noEmit: true,
  target: ts.ScriptTarget.ES2022,
  experimentalDecorators: true,
  emitDecoratorMetadata: true,
  skipLibCheck: true,
  esModuleInterop: true,
  types: ['node', 'jest'],
  baseUrl: ROOT,
  paths: LIBRARY_PATHS,
};

/**
 * The apps a snippet must compile in: a new Nest 12 project's strict ES module settings
 * (`isolatedModules`, `verbatimModuleSyntax`), with `exactOptionalPropertyTypes` as stricter teams
 * add it (an option set to `process.env.X`, which may be undefined), and a Nest 11 project's
 * CommonJS, where a top-level `await` does not compile.
 */
const APPS: ReadonlyArray<readonly [string, ts.CompilerOptions]> = [
  [
    'an ES module app',
    {
      ...COMMON_OPTIONS,
      module: ts.ModuleKind.ES2022,
      moduleResolution: ts.ModuleResolutionKind.Bundler,
      isolatedModules: true,
      verbatimModuleSyntax: true,
      exactOptionalPropertyTypes: true,
    },
  ],
  [
    'a CommonJS app',
    {
      ...COMMON_OPTIONS,
      module: ts.ModuleKind.CommonJS,
      moduleResolution: ts.ModuleResolutionKind.Node10,
    },
  ],
];

/** Each snippet's diagnostics under `options`, by its number. */
function diagnose(files: string[], options: ts.CompilerOptions): Map<number, string[]> {
  const program = ts.createProgram(files, options);
  return new Map(
    files.map((file, index) => {
      const source = program.getSourceFile(file);
      const found = source
        ? [...program.getSyntacticDiagnostics(source), ...program.getSemanticDiagnostics(source)]
        : [];
      return [index + 1, found.map((d) => ts.flattenDiagnosticMessageText(d.messageText, '\n'))];
    }),
  );
}

/**
 * Every TypeScript snippet of the README and docs/ type-checks as a module of a user's app would, in an ES
 * module app and in a CommonJS one, against the library's public entry points. A snippet that
 * drifts from the API fails here.
 */
describe('README and docs snippets', () => {
  const all = snippets();
  let directory: string;
  const diagnostics = new Map<string, Map<number, string[]>>();

  beforeAll(() => {
    // Inside the project (dist/ is ignored by git), so imports resolve to its node_modules.
    mkdirSync(join(ROOT, 'dist'), { recursive: true });
    directory = mkdtempSync(join(ROOT, 'dist', 'readme-'));
    const files = all.map(({ code }, index) => {
      const file = join(directory, `snippet-${index + 1}.ts`);
      writeFileSync(file, code);
      return file;
    });
    for (const [name, code] of Object.entries(APP_FILES)) {
      writeFileSync(join(directory, name), code);
    }
    for (const [app, options] of APPS) diagnostics.set(app, diagnose(files, options));
  });
  afterAll(() => rmSync(directory, { recursive: true, force: true }));

  it('has snippets to check, in the README and in docs/', () => {
    expect(all.filter(({ document }) => document === 'README.md').length).toBeGreaterThanOrEqual(8);
    expect(
      all.filter(({ document }) => document.startsWith('docs/')).length,
    ).toBeGreaterThanOrEqual(4);
  });

  describe.each(APPS.map(([app]) => app))('in %s', (app) => {
    it.each(
      snippets().map(
        ({ document, code }, index) => [index + 1, document, code.split('\n')[0]] as const,
      ),
    )('snippet %i (%s: %s) compiles', (number) => {
      expect(diagnostics.get(app)?.get(number)).toEqual([]);
    });
  });
});

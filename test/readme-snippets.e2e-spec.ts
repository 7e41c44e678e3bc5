import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import ts from 'typescript';

const ROOT = resolve(__dirname, '..');

/** The README's TypeScript snippets, in order. */
function readmeSnippets(): string[] {
  const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
  return [...readme.matchAll(/^```ts\n([\s\S]*?)^```$/gm)].map((match) => match[1]);
}

/**
 * Every TypeScript snippet of the README type-checks as a module of a user's app would, under the
 * strict settings of a new Nest 12 project (`isolatedModules`, `verbatimModuleSyntax`), against
 * the library's public entry points. A snippet that drifts from the API fails here.
 */
describe('README snippets', () => {
  const snippets = readmeSnippets();
  let directory: string;
  let diagnostics: Map<number, string[]>;

  beforeAll(() => {
    // Inside the project (dist/ is ignored by git), so imports resolve to its node_modules.
    mkdirSync(join(ROOT, 'dist'), { recursive: true });
    directory = mkdtempSync(join(ROOT, 'dist', 'readme-'));
    const files = snippets.map((code, index) => {
      const file = join(directory, `snippet-${index + 1}.ts`);
      writeFileSync(file, code);
      return file;
    });
    // What `./app.module` means in a snippet that bootstraps "your" app.
    writeFileSync(join(directory, 'app.module.ts'), 'export class AppModule {}\n');
    const program = ts.createProgram(files, {
      strict: true,
      noEmit: true,
      target: ts.ScriptTarget.ES2022,
      module: ts.ModuleKind.ES2022,
      moduleResolution: ts.ModuleResolutionKind.Bundler,
      experimentalDecorators: true,
      emitDecoratorMetadata: true,
      isolatedModules: true,
      verbatimModuleSyntax: true,
      skipLibCheck: true,
      esModuleInterop: true,
      types: ['node', 'jest'],
      baseUrl: ROOT,
      paths: {
        '@malipo/nestjs': ['libs/payments/src'],
        '@malipo/nestjs/*': ['libs/payments/src/*'],
        '@malipo/sandbox': ['apps/sandbox/src/index.ts'],
      },
    });
    diagnostics = new Map(
      files.map((file, index) => {
        const source = program.getSourceFile(file);
        const found = source
          ? [...program.getSyntacticDiagnostics(source), ...program.getSemanticDiagnostics(source)]
          : [];
        return [
          index + 1,
          found.map((d) => ts.flattenDiagnosticMessageText(d.messageText, '\n')),
        ] as const;
      }),
    );
  });
  afterAll(() => rmSync(directory, { recursive: true, force: true }));

  it('has snippets to check', () => {
    expect(snippets.length).toBeGreaterThanOrEqual(8);
  });

  it.each(readmeSnippets().map((code, index) => [index + 1, code.split('\n')[0]] as const))(
    'snippet %i (%s) compiles',
    (number) => {
      expect(diagnostics.get(number)).toEqual([]);
    },
  );
});

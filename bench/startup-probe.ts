/**
 * One startup measurement in a fresh process, run as plain JavaScript (startup.ts transpiles it):
 * under ts-node every `require`, even of a .js file, would go through its hooks and be timed too.
 *   node startup-probe.js <library|nest-empty|nest-payments> <compiled library dir> <repo root>
 * Prints one JSON line of timings in ms.
 */
import { createRequire } from 'node:module';
import * as path from 'node:path';
import type * as NestCommon from '@nestjs/common';
import type * as NestCore from '@nestjs/core';
import type * as Library from '@malipo/nestjs';

export type ProbeMode = 'library' | 'nest-empty' | 'nest-payments';

export interface ProbeResult {
  /** `require` of @nestjs/core and @nestjs/common, as any Nest app pays. */
  nestRequireMs?: number;
  /** `require` of the compiled library: cold, or after Nest in the `nest-payments` mode. */
  libraryRequireMs?: number;
  /** `NestFactory.createApplicationContext` until the context is ready. */
  contextMs?: number;
  /** From the first `require` to a ready context. */
  totalMs: number;
}

const elapsedMs = (from: bigint) => Number(process.hrtime.bigint() - from) / 1e6;

async function main(): Promise<void> {
  const [mode, libraryDir, root] = process.argv.slice(2) as [ProbeMode, string, string];
  // Packages resolve as from the repository, as an app next to the library would find them.
  const load = createRequire(path.join(root, 'package.json'));
  const result: ProbeResult = { totalMs: 0 };
  const start = process.hrtime.bigint();

  if (mode === 'library') {
    load(libraryDir);
    result.libraryRequireMs = elapsedMs(start);
    result.totalMs = result.libraryRequireMs;
  } else {
    const common = load('@nestjs/common') as typeof NestCommon;
    const core = load('@nestjs/core') as typeof NestCore;
    result.nestRequireMs = elapsedMs(start);
    const imports: NestCommon.DynamicModule[] = [];
    if (mode === 'nest-payments') {
      const libraryStart = process.hrtime.bigint();
      const library = load(libraryDir) as typeof Library;
      result.libraryRequireMs = elapsedMs(libraryStart);
      imports.push(
        library.PaymentsModule.forRoot({
          apiUsername: 'bench-user',
          apiPassword: 'bench-password',
          baseUrl: 'http://127.0.0.1:9',
        }),
      );
    }
    class AppModule {}
    common.Module({ imports })(AppModule);
    const contextStart = process.hrtime.bigint();
    const app = await core.NestFactory.createApplicationContext(AppModule, { logger: false });
    result.contextMs = elapsedMs(contextStart);
    result.totalMs = elapsedMs(start);
    await app.close();
  }
  process.stdout.write(`${JSON.stringify(result)}\n`);
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});

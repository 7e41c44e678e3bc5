/**
 * Startup cost of the compiled library (dist/libs/payments, as published): `require` time and time
 * to a ready Nest application context, each in fresh processes, medians of several.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import type { ProbeMode, ProbeResult } from './startup-probe';
import { paired, spread, type Spread } from './stats';

const ROOT = path.resolve(__dirname, '..');
const LIBRARY_SOURCE = path.join(ROOT, 'libs', 'payments', 'src');
export const LIBRARY_DIST = path.join(ROOT, 'dist', 'libs', 'payments');
const PROBE_OUT = path.join(ROOT, 'dist', 'bench', 'startup-probe.js');

function newestMtime(dir: string): number {
  let newest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    newest = Math.max(newest, entry.isDirectory() ? newestMtime(full) : statSync(full).mtimeMs);
  }
  return newest;
}

/**
 * Builds the library (`npm run build:lib`) when dist is missing or older than its source, so the
 * figures are of the code under test. Returns whether it built.
 */
export function ensureLibraryBuilt(): boolean {
  const entry = path.join(LIBRARY_DIST, 'index.js');
  if (existsSync(entry) && statSync(entry).mtimeMs >= newestMtime(LIBRARY_SOURCE)) return false;
  // The build's own output goes to stderr: stdout carries only the report.
  execFileSync(process.execPath, [path.join(ROOT, 'scripts', 'build-lib.js')], {
    cwd: ROOT,
    stdio: ['ignore', 2, 2],
  });
  return true;
}

/** The probe as plain JavaScript, so that no TypeScript hook is loaded in the timed process. */
async function compileProbe(): Promise<string> {
  // Loaded here only: the compiler is big, and the parent process stays small while it orchestrates.
  const ts = await import('typescript');
  const source = readFileSync(path.join(__dirname, 'startup-probe.ts'), 'utf8');
  const { outputText } = ts.transpileModule(source, {
    compilerOptions: { module: ts.ModuleKind.CommonJS, target: ts.ScriptTarget.ES2022 },
  });
  mkdirSync(path.dirname(PROBE_OUT), { recursive: true });
  writeFileSync(PROBE_OUT, outputText);
  return PROBE_OUT;
}

function probe(script: string, mode: ProbeMode): ProbeResult {
  const output = execFileSync(process.execPath, [script, mode, LIBRARY_DIST, ROOT], {
    cwd: ROOT,
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  return JSON.parse(output.trim().split('\n').pop() ?? '') as ProbeResult;
}

export interface StartupResult {
  repetitions: number;
  /** `require` of the library in a fresh process: the library and every package it loads. */
  libraryColdRequireMs: Spread;
  /** `require` of the library once @nestjs/core and @nestjs/common are loaded, as in an app. */
  libraryInNestRequireMs: Spread;
  /** First `require` to ready context: an empty Nest app, and one importing PaymentsModule. */
  emptyAppReadyMs: Spread;
  paymentsAppReadyMs: Spread;
  /** `createApplicationContext` alone. */
  emptyContextMs: Spread;
  paymentsContextMs: Spread;
  /** What the library adds to a ready context, and to createApplicationContext: paired by repetition. */
  libraryAddsMs: Spread;
  libraryAddsToContextMs: Spread;
}

/** Runs the probes interleaved (one of each mode per repetition), so drift hits all alike. */
export async function measureStartup(repetitions: number): Promise<StartupResult> {
  const script = await compileProbe();
  const runs: Record<ProbeMode, ProbeResult[]> = {
    library: [],
    'nest-empty': [],
    'nest-payments': [],
  };
  // One unmeasured round first: it brings the files into the page cache.
  for (const mode of Object.keys(runs) as ProbeMode[]) probe(script, mode);
  for (let i = 0; i < repetitions; i++) {
    for (const mode of Object.keys(runs) as ProbeMode[]) runs[mode].push(probe(script, mode));
  }
  const values = (mode: ProbeMode, pick: (r: ProbeResult) => number | undefined) =>
    runs[mode].map((r) => pick(r) ?? Number.NaN);
  const of = (mode: ProbeMode, pick: (r: ProbeResult) => number | undefined) =>
    spread(values(mode, pick));
  const minus = (x: number, y: number) => x - y;
  return {
    repetitions,
    libraryColdRequireMs: of('library', (r) => r.libraryRequireMs),
    libraryInNestRequireMs: of('nest-payments', (r) => r.libraryRequireMs),
    emptyAppReadyMs: of('nest-empty', (r) => r.totalMs),
    paymentsAppReadyMs: of('nest-payments', (r) => r.totalMs),
    emptyContextMs: of('nest-empty', (r) => r.contextMs),
    paymentsContextMs: of('nest-payments', (r) => r.contextMs),
    libraryAddsMs: paired(
      values('nest-payments', (r) => r.totalMs),
      values('nest-empty', (r) => r.totalMs),
      minus,
    ),
    libraryAddsToContextMs: paired(
      values('nest-payments', (r) => r.contextMs),
      values('nest-empty', (r) => r.contextMs),
      minus,
    ),
  };
}

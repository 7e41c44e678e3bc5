/**
 * Summarises a `node --cpu-prof` profile: self time by package and by function, and inclusive time
 * of the payments library's own functions. Pass the call count to get µs per call.
 *   ts-node --transpile-only bench/cpuprofile-summary.ts /tmp/malipo-prof/X.cpuprofile 40000
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import * as path from 'node:path';

interface CallFrame {
  functionName: string;
  url: string;
  lineNumber: number;
}

interface ProfileNode {
  id: number;
  callFrame: CallFrame;
  children?: number[];
}

interface CpuProfile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

const LIBRARY_DIR = `${path.sep}libs${path.sep}payments${path.sep}src${path.sep}`;

/** The newest .cpuprofile when given a directory. */
function resolveProfile(target: string): string {
  if (!statSync(target).isDirectory()) return target;
  const newest = readdirSync(target)
    .filter((name) => name.endsWith('.cpuprofile'))
    .map((name) => path.join(target, name))
    .sort((x, y) => statSync(y).mtimeMs - statSync(x).mtimeMs)[0];
  if (newest === undefined) throw new Error(`no .cpuprofile in ${target}`);
  return newest;
}

/** Where a frame's time is charged: a package, a library file, Node internals or V8. */
function categoryOf(frame: CallFrame): string {
  const { url, functionName } = frame;
  if (url === '') return functionName.startsWith('(') ? functionName : '(native)';
  const modules = url.lastIndexOf('node_modules/');
  if (modules >= 0) {
    const parts = url.slice(modules + 'node_modules/'.length).split('/');
    return parts[0].startsWith('@') ? `${parts[0]}/${parts[1]}` : parts[0];
  }
  const library = url.indexOf(LIBRARY_DIR);
  if (library >= 0) return `library ${url.slice(library + LIBRARY_DIR.length)}`;
  if (url.startsWith('node:')) return 'node core';
  return path.relative(process.cwd(), url.replace(/^file:\/\//, ''));
}

function frameName(frame: CallFrame): string {
  const where = frame.url === '' ? '' : ` ${categoryOf(frame)}:${frame.lineNumber + 1}`;
  return `${frame.functionName || '(anonymous)'}${where}`;
}

function printTop(
  title: string,
  totals: Map<string, number>,
  count: number,
  perCall: (us: number) => string,
): void {
  console.log(`\n${title}`);
  for (const [name, us] of [...totals].sort((x, y) => y[1] - x[1]).slice(0, count)) {
    console.log(`${perCall(us).padStart(16)}  ${name}`);
  }
}

function main(): void {
  const [target, callsArg] = process.argv.slice(2);
  if (target === undefined) throw new Error('usage: cpuprofile-summary.ts <file|dir> [calls]');
  const file = resolveProfile(target);
  const profile = JSON.parse(readFileSync(file, 'utf8')) as CpuProfile;
  const calls = callsArg === undefined ? undefined : Number(callsArg);

  const selfUs = new Map<number, number>();
  profile.samples.forEach((id, i) => selfUs.set(id, (selfUs.get(id) ?? 0) + profile.timeDeltas[i]));
  const total = [...selfUs.values()].reduce((sum, us) => sum + us, 0);
  const perCall = (us: number) =>
    calls === undefined ? `${(us / 1000).toFixed(0)} ms` : `${(us / calls).toFixed(2)} µs/call`;
  const percent = (us: number) => `${((100 * us) / total).toFixed(1)}%`.padStart(6);

  const byCategory = new Map<string, number>();
  const byFunction = new Map<string, number>();
  const libraryInclusive = new Map<string, number>();
  const nodes = new Map(profile.nodes.map((node) => [node.id, node]));
  const root = profile.nodes[0];

  // Inclusive time: each sample counts once for every distinct library function on its stack.
  const walk = (node: ProfileNode, onStack: readonly string[]): void => {
    const self = selfUs.get(node.id) ?? 0;
    const category = categoryOf(node.callFrame);
    const name = frameName(node.callFrame);
    byCategory.set(category, (byCategory.get(category) ?? 0) + self);
    byFunction.set(name, (byFunction.get(name) ?? 0) + self);
    const stack =
      category.startsWith('library ') && !onStack.includes(name) ? [...onStack, name] : onStack;
    for (const frame of stack)
      libraryInclusive.set(frame, (libraryInclusive.get(frame) ?? 0) + self);
    for (const child of node.children ?? []) {
      const next = nodes.get(child);
      if (next !== undefined) walk(next, stack);
    }
  };
  walk(root, []);

  console.log(`${file}: ${(total / 1000).toFixed(0)} ms sampled`);
  const withPercent = (totals: Map<string, number>) =>
    new Map([...totals].map(([name, us]) => [`${percent(us)}  ${name}`, us]));
  printTop('Self time by package / file', withPercent(byCategory), 25, perCall);
  printTop('Self time by function', withPercent(byFunction), 30, perCall);
  printTop('Inclusive time of library functions', withPercent(libraryInclusive), 20, perCall);
}

main();

import { fork, type ChildProcess } from 'node:child_process';
import * as path from 'node:path';

/**
 * Forks a bench script as a child process with an IPC channel. The flags are set here rather
 * than inherited, so a parent started under `--cpu-prof` or an inspector does not pass them on.
 */
export function forkBenchScript(
  name: string,
  args: string[],
  options: { exposeGc: boolean; pathAliases: boolean },
): ChildProcess {
  // Under ts-node the child needs the TypeScript hook too; compiled, it runs as plain JS.
  const extension = path.extname(__filename);
  const execArgv = [
    ...(options.exposeGc ? ['--expose-gc'] : []),
    ...(extension === '.ts' ? ['-r', 'ts-node/register/transpile-only'] : []),
    // `@malipo/nestjs` is a path alias of tsconfig.json for the library's source.
    ...(options.pathAliases ? ['-r', 'tsconfig-paths/register'] : []),
  ];
  return fork(path.join(__dirname, `${name}${extension}`), args, {
    execArgv,
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
}

/** The next message of `child`, or a rejection when it exits first or takes over `timeoutMs`. */
export function nextMessage<T>(child: ChildProcess, what: string, timeoutMs: number): Promise<T> {
  return new Promise((resolve, reject) => {
    const cleanUp = () => {
      clearTimeout(timer);
      child.off('message', onMessage);
      child.off('exit', onExit);
    };
    const onMessage = (message: unknown) => {
      cleanUp();
      resolve(message as T);
    };
    const onExit = (code: number | null, signal: NodeJS.Signals | null) => {
      cleanUp();
      reject(new Error(`${what}: process exited (${signal ?? `code ${code}`})`));
    };
    const timer = setTimeout(() => {
      cleanUp();
      reject(new Error(`${what}: no answer within ${timeoutMs / 1000} s`));
    }, timeoutMs);
    child.on('message', onMessage);
    child.on('exit', onExit);
  });
}

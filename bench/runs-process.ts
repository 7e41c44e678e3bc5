// Child processes of `bench/runs.ts`: forked bench scripts with an IPC channel.
import { fork, type ChildProcess } from 'node:child_process';
import * as path from 'node:path';
import type { RunsSandboxConfig, RunsSandboxReady, RunsSandboxStats } from './runs-protocol';

/**
 * Forks bench/<name>.ts under ts-node, with the `@malipo/nestjs` path aliases. With
 * `RUNS_CPU_PROF=<dir>`, the app (runs-app) runs under `--cpu-prof` into that directory.
 */
export function forkRunsScript(name: string, args: string[], exposeGc: boolean): ChildProcess {
  const profileDir = name === 'runs-app' ? process.env.RUNS_CPU_PROF : undefined;
  return fork(path.join(__dirname, `${name}.ts`), args, {
    execArgv: [
      ...(exposeGc ? ['--expose-gc'] : []),
      ...(profileDir ? ['--cpu-prof', '--cpu-prof-dir', profileDir] : []),
      '-r',
      'ts-node/register/transpile-only',
      '-r',
      'tsconfig-paths/register',
    ],
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
}

/** The next message of `child` whose type is `type`, or a rejection when it exits or times out. */
export function nextMessage<T>(child: ChildProcess, type: string, timeoutMs: number): Promise<T> {
  return new Promise((resolve, reject) => {
    const cleanUp = () => {
      clearTimeout(timer);
      child.off('message', onMessage);
      child.off('exit', onExit);
    };
    const onMessage = (message: { type?: string }) => {
      if (message?.type !== type) return;
      cleanUp();
      resolve(message as T);
    };
    const onExit = (code: number | null, signal: NodeJS.Signals | null) => {
      cleanUp();
      reject(new Error(`waiting for '${type}': process exited (${signal ?? `code ${code}`})`));
    };
    const timer = setTimeout(() => {
      cleanUp();
      reject(new Error(`waiting for '${type}': no answer within ${timeoutMs / 1000} s`));
    }, timeoutMs);
    child.on('message', onMessage);
    child.on('exit', onExit);
  });
}

export function exited(child: ChildProcess): Promise<void> {
  return child.exitCode !== null || child.signalCode !== null
    ? Promise.resolve()
    : new Promise((resolve) => child.once('exit', () => resolve()));
}

export interface RunsSandbox extends RunsSandboxReady {
  child: ChildProcess;
  stats(): Promise<RunsSandboxStats>;
  /** The first payout let through at or after `since` (ms since the epoch), if any yet. */
  firstPayoutSince(since: number): Promise<number | undefined>;
  /** Its CPU so far (µs); `startMeter` starts its stall meter again from now. */
  cpuMicros(startMeter?: boolean): Promise<number>;
  stop(): Promise<void>;
}

export async function startRunsSandbox(config: RunsSandboxConfig): Promise<RunsSandbox> {
  const child = forkRunsScript('runs-sandbox', [JSON.stringify(config)], false);
  const ask = async <T>(message: object, type: string): Promise<T> => {
    const reply = nextMessage<T>(child, type, 60_000);
    child.send(message);
    return reply;
  };
  try {
    const ready = await nextMessage<RunsSandboxReady>(child, 'ready', 60_000);
    return {
      ...ready,
      child,
      stats: () => ask<RunsSandboxStats>({ type: 'stats' }, 'stats'),
      firstPayoutSince: async (since) =>
        (await ask<{ at?: number }>({ type: 'firstPayoutSince', since }, 'firstPayoutSince')).at,
      cpuMicros: async (startMeter = false) =>
        (await ask<{ cpuMicros: number }>({ type: 'cpu', startMeter }, 'cpu')).cpuMicros,
      stop: async () => {
        child.kill('SIGKILL');
        await exited(child);
      },
    };
  } catch (error) {
    child.kill('SIGKILL');
    throw error;
  }
}

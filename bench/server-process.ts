import type { ChildProcess } from 'node:child_process';
import { forkBenchScript, nextMessage } from './fork';
import type { ServerCpu, ServerReady } from './server-api';

export interface BenchServer extends ServerReady {
  child: ChildProcess;
  stop(): void;
}

/** Forks bench/server and resolves once every port listens. */
export async function startServer(): Promise<BenchServer> {
  const child = forkBenchScript('server', [], { exposeGc: false, pathAliases: false });
  try {
    const ready = await nextMessage<ServerReady>(child, 'server start', 30_000);
    return { ...ready, child, stop: () => child.kill() };
  } catch (error: unknown) {
    child.kill();
    throw error;
  }
}

/** The server's own CPU time so far, in µs. */
export async function serverCpuMicros(server: BenchServer): Promise<number> {
  const reply = nextMessage<ServerCpu>(server.child, 'server CPU', 10_000);
  server.child.send('cpu');
  return (await reply).cpuMicros;
}

import { fork, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { performance } from 'node:perf_hooks';
import type { ServerCpu, ServerReady } from './server';

/** Forks bench/server and resolves with its port once it listens. */
export function startServer(): Promise<{ child: ChildProcess; port: number }> {
  // Under ts-node the child needs the TypeScript hook too; compiled, it runs as plain JS.
  const extension = path.extname(__filename);
  const child = fork(path.join(__dirname, `server${extension}`), [], {
    execArgv: extension === '.ts' ? ['-r', 'ts-node/register/transpile-only'] : [],
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('server did not start within 30 s')), 30_000);
    child.once('message', (message: ServerReady) => {
      clearTimeout(timer);
      resolve({ child, port: message.port });
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`server exited with code ${code}`));
    });
  });
}

/** The server's own CPU time so far, in µs. */
export function serverCpuMicros(child: ChildProcess): Promise<number> {
  return new Promise((resolve) => {
    child.once('message', (message: ServerCpu) => resolve(message.cpuMicros));
    child.send('cpu');
  });
}

/**
 * CPU of the whole machine in µs from /proc/stat (Linux; USER_HZ is 100 there): process time plus
 * steal (the hypervisor's). Interrupt time is left out: it is mostly this benchmark's loopback traffic.
 */
function machineBusyMicros(): number | undefined {
  try {
    const fields = readFileSync('/proc/stat', 'utf8').split('\n')[0].trim().split(/\s+/).slice(1);
    const [user, nice, system, , , , , steal] = fields.map(Number);
    return (user + nice + system + steal) * 10_000;
  } catch {
    return undefined;
  }
}

/**
 * CPU used by processes other than the benchmark's two while it runs, as a share of all cores.
 * Approximate: a quiet machine shows up to ~5% (kernel threads, tick accounting); well above that,
 * the figures are not comparable to a quiet run.
 */
export async function backgroundMeter(child: ChildProcess) {
  const machineStart = machineBusyMicros();
  const ownStart = process.cpuUsage();
  const serverStart = await serverCpuMicros(child);
  const wallStart = performance.now();
  const meter = {
    percentOfMachine: undefined as number | undefined,
    async stop(): Promise<void> {
      const machineEnd = machineBusyMicros();
      if (machineStart === undefined || machineEnd === undefined) return;
      const own = process.cpuUsage(ownStart);
      const server = (await serverCpuMicros(child)) - serverStart;
      const others = machineEnd - machineStart - own.user - own.system - server;
      const capacity = (performance.now() - wallStart) * 1000 * os.cpus().length;
      meter.percentOfMachine = Math.max(0, Math.round((100 * others) / capacity));
    },
  };
  return meter;
}

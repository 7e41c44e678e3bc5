/** What the figures were measured on: the machine, the library version, and how busy the box was. */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import * as os from 'node:os';
import { performance } from 'node:perf_hooks';

export interface LibraryRevision {
  commit: string;
  branch: string;
  /** Others edit libs/ while benchmarks run: a non-zero count means the commit is not the whole story. */
  uncommittedLibraryFiles: number;
}

export interface MachineInfo {
  cpu: string;
  cores: number;
  totalMemoryGB: number;
  os: string;
  node: string;
  date: string;
  library: LibraryRevision | undefined;
}

function libraryRevision(): LibraryRevision | undefined {
  try {
    const git = (...args: string[]) => execFileSync('git', args, { encoding: 'utf8' }).trim();
    const changed = git('status', '--porcelain', '--', 'libs/payments');
    return {
      commit: git('rev-parse', '--short', 'HEAD'),
      branch: git('rev-parse', '--abbrev-ref', 'HEAD'),
      uncommittedLibraryFiles: changed === '' ? 0 : changed.split('\n').length,
    };
  } catch {
    return undefined;
  }
}

export function machineInfo(): MachineInfo {
  return {
    cpu: os.cpus()[0]?.model ?? 'unknown',
    cores: os.cpus().length,
    totalMemoryGB: Number((os.totalmem() / 2 ** 30).toFixed(1)),
    os: `${os.type()} ${os.release()} ${os.arch()}`,
    node: process.version,
    date: new Date().toISOString(),
    library: libraryRevision(),
  };
}

/** Clock ticks per second of /proc accounting (USER_HZ), 100 on Linux. */
const TICK_MICROS = 10_000;

/**
 * CPU of the whole machine in µs from /proc/stat: process time plus steal (the hypervisor's).
 * Interrupt time is left out: it is mostly this benchmark's own loopback traffic.
 */
function machineBusyMicros(): number | undefined {
  try {
    const fields = readFileSync('/proc/stat', 'utf8').split('\n')[0].trim().split(/\s+/).slice(1);
    const [user, nice, system, , , , , steal] = fields.map(Number);
    return (user + nice + system + steal) * TICK_MICROS;
  } catch {
    return undefined;
  }
}

/** User + system CPU of process `pid` in µs, from /proc/<pid>/stat. */
function processMicros(pid: number): number | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name may hold spaces: count fields from after its closing parenthesis.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) * TICK_MICROS;
  } catch {
    return undefined;
  }
}

/**
 * CPU used by processes other than the benchmark's own (`pids`, which must live until `stop`)
 * while it runs, as a share of all cores. Approximate: a quiet machine shows up to ~5% (kernel
 * threads, tick accounting); well above that, the figures are not comparable to a quiet run.
 */
export function backgroundMeter(pids: readonly number[]): { stop(): number | undefined } {
  const own = () => pids.reduce((sum, pid) => sum + (processMicros(pid) ?? Number.NaN), 0);
  const machineStart = machineBusyMicros();
  const ownStart = own();
  const wallStart = performance.now();
  return {
    stop() {
      const machineEnd = machineBusyMicros();
      const others = (machineEnd ?? Number.NaN) - (machineStart ?? Number.NaN) - (own() - ownStart);
      const capacity = (performance.now() - wallStart) * 1000 * os.cpus().length;
      const percent = Math.max(0, Math.round((100 * others) / capacity));
      return Number.isFinite(percent) ? percent : undefined;
    },
  };
}

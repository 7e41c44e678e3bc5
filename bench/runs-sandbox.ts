// The sandbox of `bench/runs.ts`, in a process of its own so that its CPU is not counted as the
// library's. Configured by a JSON argument ({ requestsPerSecond?, webhookDelayMs }), it answers
// on its IPC channel: 'ready' once it listens, then the payouts it saw ('stats'), the first
// payout let through since a time ('firstPayoutSince'), and its own CPU ('cpu').
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { PerformanceObserver } from 'node:perf_hooks';
import { startSandbox } from '../apps/sandbox/src/sandbox';
import type {
  RunsSandboxConfig,
  RunsSandboxReady,
  RunsSandboxRequest,
  RunsSandboxStats,
} from './runs-protocol';

const RATE_LIMITED = 'rate limit 429';
/** How often the stall meter looks at the clock (ms). */
const STALL_TICK_MS = 5;

/**
 * The sandbox's own stalls: a request that arrives during one is counted by the rate limit only
 * at its end, together with the others, as a busy gateway would.
 */
function meterStalls() {
  const meter = {
    longestStallMs: 0,
    stallsOver40Ms: 0,
    longestGcPauseMs: 0,
    restart() {
      meter.longestStallMs = 0;
      meter.stallsOver40Ms = 0;
      meter.longestGcPauseMs = 0;
    },
  };
  let last = performance.now();
  setInterval(() => {
    const now = performance.now();
    const stall = now - last - STALL_TICK_MS;
    last = now;
    meter.longestStallMs = Math.max(meter.longestStallMs, stall);
    if (stall > 40) meter.stallsOver40Ms += 1;
  }, STALL_TICK_MS).unref();
  new PerformanceObserver((list) => {
    for (const entry of list.getEntries()) {
      meter.longestGcPauseMs = Math.max(meter.longestGcPauseMs, entry.duration);
    }
  }).observe({ entryTypes: ['gc'] });
  return meter;
}

async function main(): Promise<void> {
  const config = JSON.parse(process.argv[2] ?? '{}') as RunsSandboxConfig;
  const stalls = meterStalls();
  const sandbox = await startSandbox({
    port: 0,
    logger: false,
    webhookDelayMs: config.webhookDelayMs,
    webhookRetryDelaysMs: [500, 1000, 2000],
    // 10,000 payouts of 100 to 10,099 KES: about 51 million KES.
    initialBalances: { local: 1_000_000_000, USD: 10_000_000 },
    ...(config.requestsPerSecond
      ? { rateLimit: { requestsPerSecond: config.requestsPerSecond } }
      : {}),
  });
  // Where webhooks go when the app is not to receive them: answered 200 at once, in this process.
  const sink = createServer((req, res) => {
    req.resume();
    req.on('end', () => res.writeHead(200, { 'content-type': 'application/json' }).end('{}'));
  });
  await new Promise<void>((resolve) => sink.listen(0, '127.0.0.1', resolve));
  const sinkUrl = `http://127.0.0.1:${(sink.address() as AddressInfo).port}/webhooks`;

  const payouts = async () => {
    const requests = await sandbox.control.requests();
    return {
      requests,
      posts: requests.filter((r) => r.method === 'POST'),
    };
  };

  process.on('message', (message: RunsSandboxRequest) => {
    void (async () => {
      if (message.type === 'stats') {
        // Read before the work of answering, which is no part of the run.
        const { longestStallMs, stallsOver40Ms, longestGcPauseMs } = stalls;
        const heapUsedMB = process.memoryUsage().heapUsed / 1024 / 1024;
        const { requests, posts } = await payouts();
        const admitted = posts.filter((r) => r.fault !== RATE_LIMITED).map((r) => Date.parse(r.at));
        const stats: RunsSandboxStats = {
          type: 'stats',
          payoutsAdmitted: admitted.length,
          payouts429: posts.filter((r) => r.fault === RATE_LIMITED).length,
          lookups: requests.filter((r) => r.method === 'GET').length,
          lookups429: requests.filter((r) => r.method === 'GET' && r.fault === RATE_LIMITED).length,
          // The log is in arrival order.
          firstAdmittedAt: admitted[0],
          lastAdmittedAt: admitted[admitted.length - 1],
          ledger: (await sandbox.control.transactions()).length,
          heapUsedMB,
          longestStallMs,
          stallsOver40Ms,
          longestGcPauseMs,
        };
        process.send?.(stats);
      } else if (message.type === 'firstPayoutSince') {
        const { posts } = await payouts();
        const first = posts
          .filter((r) => r.fault !== RATE_LIMITED)
          .map((r) => Date.parse(r.at))
          .find((at) => at >= message.since);
        process.send?.({ type: 'firstPayoutSince', at: first });
      } else if (message.type === 'cpu') {
        if (message.startMeter === true) stalls.restart();
        const { user, system } = process.cpuUsage();
        process.send?.({ type: 'cpu', cpuMicros: user + system });
      }
    })();
  });

  const ready: RunsSandboxReady = {
    type: 'ready',
    url: sandbox.url,
    sinkUrl,
    credentials: sandbox.credentials,
  };
  process.send?.(ready);
  process.once('disconnect', () => process.exit(0));
}

void main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});

/**
 * Memory of a client, measured inside its own worker process: what one call in flight holds, and
 * what many completed calls leave behind. Both read the heap after a forced full GC, so only live
 * objects count.
 */
import * as http from 'node:http';
import { performance } from 'node:perf_hooks';
import type { Client } from './clients';
import { forceGc, runLoad } from './load';
import { HOLD_PATHS } from './server-api';

export interface InflightResult {
  calls: number;
  /** Live heap per pending call: the client's own state, the request, the socket's JS side. */
  heapBytesPerCall: number;
  /** RSS per pending call: adds the sockets' native buffers and any heap V8 grew into. */
  rssBytesPerCall: number;
  /** Off-heap memory V8 knows of (Buffers), per pending call. */
  externalBytesPerCall: number;
  /** How long all calls took to settle once released: they must all succeed. */
  settleMs: number;
}

export interface HeapGrowthResult {
  calls: number;
  heapUsedBeforeBytes: number;
  heapUsedAfterBytes: number;
  heapGrowthBytes: number;
  rssGrowthBytes: number;
}

/**
 * Memory after a forced GC, once RSS has stopped moving: V8 sweeps and unmaps freed pages on
 * background threads after a collection, so one reading right after `gc()` can still include
 * pages that are about to go (the worker's startup garbage, above all).
 */
async function settledMemory(): Promise<NodeJS.MemoryUsage> {
  let previous: NodeJS.MemoryUsage | undefined;
  for (let attempt = 0; attempt < 10; attempt++) {
    forceGc();
    await new Promise((resolve) => setTimeout(resolve, 100));
    const current = process.memoryUsage();
    if (previous !== undefined && Math.abs(current.rss - previous.rss) < 256 * 1024) return current;
    previous = current;
  }
  return previous ?? process.memoryUsage();
}

/** One control request to the hold server, on a connection of its own (the pool is busy). */
function control(port: number, method: 'GET' | 'POST', path: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port, method, path, agent: false }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (text += chunk));
      res.on('end', () => {
        const body = JSON.parse(text) as { held?: number; released?: number };
        resolve(body.held ?? body.released ?? Number.NaN);
      });
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end();
  });
}

async function waitForHeld(port: number, calls: number): Promise<void> {
  const deadline = performance.now() + 60_000;
  for (;;) {
    const held = await control(port, 'GET', HOLD_PATHS.held);
    if (held >= calls) return;
    if (performance.now() > deadline) {
      throw new Error(`only ${held} of ${calls} calls reached the server within 60 s`);
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/**
 * Opens `calls` calls against the hold server (`port`), measures heap and RSS once the server
 * holds every one of them, then releases them and checks that all succeed. The baseline is taken
 * after a warm-up through the same client, so loaded code and a few pooled sockets cancel out.
 * With `batch`, the calls are started that many at a time, the event loop turning in between.
 */
export async function measureInflight(
  client: Client,
  port: number,
  calls: number,
  warmupCalls: number,
  batch?: number,
): Promise<InflightResult> {
  await runLoad(client.call, warmupCalls, 16);
  await control(port, 'POST', HOLD_PATHS.hold);
  const before = await settledMemory();

  // Counters rather than an array of promises, so the harness holds nothing per call itself.
  let succeeded = 0;
  let failed = 0;
  let firstError: unknown;
  let onSettled = () => {};
  const allSettled = new Promise<void>((resolve) => (onSettled = resolve));
  const settle = () => {
    if (succeeded + failed === calls) onSettled();
  };
  for (let i = 0; i < calls; i++) {
    // (a+r) writes each call's entry to Redis before sending it, within ioredis's 1 s command
    // timeout: 5,000 calls started in one go took longer than that to set up, and the replies
    // waited behind them, so thousands were refused unsent (docs/performance.md).
    if (batch !== undefined && i > 0 && i % batch === 0) {
      await new Promise((resolve) => setImmediate(resolve));
    }
    client.call().then(
      () => {
        succeeded++;
        settle();
      },
      (error: unknown) => {
        failed++;
        firstError ??= error;
        settle();
      },
    );
  }
  await waitForHeld(port, calls);
  const during = await settledMemory();

  const released = performance.now();
  await control(port, 'POST', HOLD_PATHS.release);
  await allSettled;
  const settleMs = performance.now() - released;
  if (failed > 0) {
    const reason = firstError instanceof Error ? firstError.message : String(firstError);
    throw new Error(`${failed} of ${calls} held calls failed once released: ${reason}`);
  }
  return {
    calls,
    heapBytesPerCall: (during.heapUsed - before.heapUsed) / calls,
    rssBytesPerCall: (during.rss - before.rss) / calls,
    externalBytesPerCall: (during.external - before.external) / calls,
    settleMs,
  };
}

/** Live heap before and after `calls` more calls: what the client retains from finished calls. */
export async function measureHeapGrowth(
  client: Client,
  calls: number,
  concurrency: number,
  warmupCalls: number,
): Promise<HeapGrowthResult> {
  await runLoad(client.call, warmupCalls, concurrency);
  const before = await settledMemory();
  await runLoad(client.call, calls, concurrency);
  const after = await settledMemory();
  return {
    calls,
    heapUsedBeforeBytes: before.heapUsed,
    heapUsedAfterBytes: after.heapUsed,
    heapGrowthBytes: after.heapUsed - before.heapUsed,
    rssGrowthBytes: after.rss - before.rss,
  };
}

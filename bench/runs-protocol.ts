// Messages between `bench/runs.ts` and its child processes (runs-sandbox.ts, runs-app.ts).

export interface RunsSandboxConfig {
  /** The sandbox's rate limit on API requests (429 above); none when absent. */
  requestsPerSecond?: number;
  webhookDelayMs: number;
}

export interface RunsSandboxReady {
  type: 'ready';
  url: string;
  /** A route that answers 200 to anything, in the sandbox's process: webhooks nobody reads. */
  sinkUrl: string;
  credentials: { apiUsername: string; apiPassword: string };
}

export type RunsSandboxRequest =
  | { type: 'stats' }
  | { type: 'firstPayoutSince'; since: number }
  /** Its CPU so far; with `startMeter`, its stall meter starts again from now (the run's start). */
  | { type: 'cpu'; startMeter?: boolean };

export interface RunsSandboxStats {
  type: 'stats';
  /** Payout POSTs let through (executed or answered from the idempotency store). */
  payoutsAdmitted: number;
  /** Payout POSTs answered 429. */
  payouts429: number;
  /** GET requests (status look-ups of webhook confirmation, the balance check). */
  lookups: number;
  lookups429: number;
  firstAdmittedAt?: number;
  lastAdmittedAt?: number;
  /** Transactions in the sandbox's ledger. */
  ledger: number;
  /** The sandbox's heap after the run (MB, no forced collection). */
  heapUsedMB: number;
  /** Its event loop's longest stall (ms) and how many passed 40 ms: requests then arrive together. */
  longestStallMs: number;
  stallsOver40Ms: number;
  /** Its longest garbage-collection pause (ms). */
  longestGcPauseMs: number;
}

export interface RunsAppConfig {
  sandboxUrl: string;
  credentials: { apiUsername: string; apiPassword: string };
  items: number;
  ratePerSecond: number;
  concurrency: number;
  /** Where items' callbacks point: the app's own webhook route when true, else `sinkUrl`. */
  webhooksToApp: boolean;
  sinkUrl: string;
  /** After the last send, how long to wait for items to settle (webhooks). 0: do not wait. */
  settleWaitMs: number;
}

export interface RunsAppResult {
  type: 'result';
  items: number;
  /** create() of the run: validation, keys, the balance check, storing the items. */
  createMs: number;
  /** From create() called to no item queued or sending. */
  sendingPhaseMs: number;
  /** User + system CPU of the app process from create() called to the end of the sending phase. */
  cpuMicros: number;
  /** Same, until the end of the settle wait (webhooks handled), when there was one. */
  cpuMicrosWithSettling?: number;
  heapBeforeMB: number;
  heapAfterMB: number;
  /** After the settle wait, when there was one. */
  heapAfterSettlingMB?: number;
  /** Largest heapUsed seen while sampling every 250 ms (no forced GC). */
  heapPeakMB: number;
  counts: Record<string, number>;
  /** Counts at the end of the settle wait. */
  countsAfterSettling?: Record<string, number>;
  pace: { currentRatePerSecond: number; rateLimited: number };
}

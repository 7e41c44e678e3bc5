/** Messages between the orchestrating parent (run.ts) and a worker process (worker.ts). */
import type { JournalCapResult } from './journal';
import type { LoadResult } from './load';
import type { HeapGrowthResult, InflightResult } from './memory';
import type { DeadlineMicroResult, MicroResult, WholeCallMicroResult } from './micro';

export type WorkerCommand =
  /** Calls through the worker's client against the server listening on `port`. */
  | { type: 'load'; port: number; calls: number; concurrency: number }
  /** The same for a fixed time rather than a fixed number of calls. */
  | { type: 'timedLoad'; port: number; seconds: number; concurrency: number }
  | { type: 'inflight'; port: number; calls: number; warmupCalls: number; batch?: number }
  | { type: 'heapGrowth'; port: number; calls: number; concurrency: number; warmupCalls: number }
  | { type: 'micro'; iterations: number }
  /** `create` into an InMemoryPaymentsJournal that holds `entries`, its bound (journal.ts). */
  | { type: 'journalCap'; entries: number; creates: number }
  | { type: 'close' };

/** What each command answers with. */
export interface WorkerResults {
  load: LoadResult;
  timedLoad: LoadResult;
  inflight: InflightResult;
  heapGrowth: HeapGrowthResult;
  micro: {
    operations: MicroResult[];
    deadline: DeadlineMicroResult;
    wholeCall: WholeCallMicroResult;
  };
  journalCap: JournalCapResult;
  close: null;
}

export type WorkerReply = { ok: true; value: unknown } | { ok: false; error: string };

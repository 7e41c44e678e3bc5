import type { Worker } from 'bullmq';

/** The first rest after Redis refused a worker's command (ms); it doubles while refusals go on. */
const FIRST_REST_MS = 500;
/** The longest rest (ms), and so the longest a run waits once Redis takes writes again. */
const LONGEST_REST_MS = 5000;

/**
 * Rests `worker` while Redis refuses its commands. BullMQ waits after a lost connection, but takes
 * the next job again at once after a command Redis answered with an error (`OOM` when it is out
 * of memory, `MISCONF` when it cannot write its snapshot, `READONLY` on a replica after a
 * failover): a run's worker then takes a core for as long as Redis refuses writes. On such an
 * error the worker is paused (its active jobs go on) and resumed after a rest, which doubles
 * while refusals go on and starts again from the first after a job completed.
 * @param stopped whether the worker is being closed: it is then never resumed.
 * @internal
 */
export function restOnRedisRefusals(worker: Worker, stopped: () => boolean): void {
  let rest = FIRST_REST_MS;
  let resting = false;
  worker.on('completed', () => {
    rest = FIRST_REST_MS;
  });
  worker.on('error', (error: Error) => {
    if (resting || stopped() || !isRedisReply(error)) return;
    resting = true;
    const wait = rest;
    rest = Math.min(rest * 2, LONGEST_REST_MS);
    void worker
      .pause(true)
      .then(() => new Promise((resolve) => setTimeout(resolve, wait).unref()))
      .then(() => (stopped() ? undefined : worker.resume()))
      .catch(() => undefined)
      .finally(() => {
        resting = false;
      });
  });
}

/** An error Redis answered (ioredis's `ReplyError`), as opposed to a lost or refused connection. */
function isRedisReply(error: unknown): boolean {
  return error instanceof Error && error.name === 'ReplyError';
}

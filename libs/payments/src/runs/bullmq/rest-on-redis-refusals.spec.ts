import { EventEmitter } from 'node:events';
import type { Worker } from 'bullmq';
import { restOnRedisRefusals } from './rest-on-redis-refusals';

/** What the rests touch of a BullMQ worker: its events, `pause(true)` and `resume()`. */
class RecordedWorker extends EventEmitter {
  readonly calls: string[] = [];
  pause(doNotWaitActive?: boolean): Promise<void> {
    this.calls.push(`pause(${doNotWaitActive})`);
    return Promise.resolve();
  }
  resume(): Promise<void> {
    this.calls.push('resume');
    return Promise.resolve();
  }
}

function replyError(message: string): Error {
  const error = new Error(message);
  error.name = 'ReplyError';
  return error;
}

describe('restOnRedisRefusals', () => {
  beforeEach(() => jest.useFakeTimers());
  afterEach(() => jest.useRealTimers());

  function setUp(stopped = () => false): RecordedWorker {
    const worker = new RecordedWorker();
    restOnRedisRefusals(worker as unknown as Worker, stopped);
    return worker;
  }

  it('pauses on a refusal, once however many follow, and resumes after a rest that doubles', async () => {
    const worker = setUp();
    worker.emit('error', replyError('OOM command not allowed'));
    worker.emit('error', replyError('OOM command not allowed'));
    await jest.advanceTimersByTimeAsync(499);
    expect(worker.calls).toEqual(['pause(true)']);
    await jest.advanceTimersByTimeAsync(1);
    expect(worker.calls).toEqual(['pause(true)', 'resume']);

    worker.emit('error', replyError('MISCONF Redis is configured to save RDB snapshots'));
    await jest.advanceTimersByTimeAsync(999);
    expect(worker.calls).toHaveLength(3);
    await jest.advanceTimersByTimeAsync(1);
    expect(worker.calls).toEqual(['pause(true)', 'resume', 'pause(true)', 'resume']);

    // A completed job: Redis takes writes again, the next rest is the first one.
    worker.emit('completed');
    worker.emit('error', replyError("READONLY You can't write against a read only replica."));
    await jest.advanceTimersByTimeAsync(500);
    expect(worker.calls.slice(4)).toEqual(['pause(true)', 'resume']);
  });

  it('rests at most 5 s', async () => {
    const worker = setUp();
    for (let refusal = 0; refusal < 6; refusal += 1) {
      worker.emit('error', replyError('OOM command not allowed'));
      await jest.advanceTimersByTimeAsync(60_000);
    }
    worker.emit('error', replyError('OOM command not allowed'));
    await jest.advanceTimersByTimeAsync(4999);
    expect(worker.calls.at(-1)).toBe('pause(true)');
    await jest.advanceTimersByTimeAsync(1);
    expect(worker.calls.at(-1)).toBe('resume');
  });

  it('leaves a lost connection to BullMQ, which waits by itself', async () => {
    const worker = setUp();
    worker.emit('error', new Error('connect ECONNREFUSED 127.0.0.1:6379'));
    worker.emit('error', new Error('Connection is closed.'));
    await jest.advanceTimersByTimeAsync(60_000);
    expect(worker.calls).toEqual([]);
  });

  it('never resumes a worker being closed', async () => {
    let stopped = false;
    const worker = setUp(() => stopped);
    worker.emit('error', replyError('OOM command not allowed'));
    stopped = true;
    await jest.advanceTimersByTimeAsync(60_000);
    expect(worker.calls).toEqual(['pause(true)']);
    worker.emit('error', replyError('OOM command not allowed'));
    expect(worker.calls).toEqual(['pause(true)']);
  });
});

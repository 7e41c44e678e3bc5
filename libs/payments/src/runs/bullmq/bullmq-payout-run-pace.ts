import type { Redis } from 'ioredis';
import {
  DECREASE_FACTOR,
  DEFAULT_PAUSE_MS,
  MAX_PAUSE_MS,
  MIN_RATE_PER_SECOND,
  BLIND_PACE_MARGIN,
  RECOVERY_SHARE_PER_SECOND,
} from '../payout-run-pacer';
import { printsAsNameOnly } from '../../secret-holders';

/**
 * KEYS: the run's pace hash. ARGV: ceiling (the run's ratePerSecond), now (ms), pause (ms, or ''
 * for a send that was not refused). The same AIMD as the embedded pacer (docs/payout-runs.md,
 * "Pace"), kept in Redis because every instance sends for the run: a 429 takes a quarter off the rate once per
 * pause, each other send adds back a tenth of the ceiling per second of sends. Returns the rate
 * (as text) and the 429s counted so far.
 */
const PACE_SCRIPT = `
local ceiling = tonumber(ARGV[1])
local rate = tonumber(redis.call('HGET', KEYS[1], 'rate') or ARGV[1])
if ARGV[3] ~= '' then
  local now = tonumber(ARGV[2])
  local pausedUntil = tonumber(redis.call('HGET', KEYS[1], 'pausedUntil') or '0')
  if now >= pausedUntil then rate = math.max(${MIN_RATE_PER_SECOND}, rate * ${DECREASE_FACTOR}) end
  redis.call('HSET', KEYS[1], 'rate', tostring(rate), 'pausedUntil', tostring(math.max(pausedUntil, now + tonumber(ARGV[3]))))
  local limited = redis.call('HINCRBY', KEYS[1], 'rateLimited', 1)
  return {tostring(rate), limited}
end
if rate < ceiling then
  rate = math.min(ceiling, rate + ceiling * ${RECOVERY_SHARE_PER_SECOND} / rate)
  redis.call('HSET', KEYS[1], 'rate', tostring(rate))
end
return {tostring(rate), tonumber(redis.call('HGET', KEYS[1], 'rateLimited') or '0')}
`;

interface PaceCommands {
  malipoRunsPace(...args: (string | number)[]): Promise<[string, number]>;
}

/** BullMQ's limiter takes whole milliseconds; shorter windows than this round too coarsely. */
const MIN_LIMITER_WINDOW_MS = 10;
/** How close to the paced rate the limiter's whole numbers must come. */
const LIMITER_FIT = 0.99;

/**
 * BullMQ's rate limit for `rate` sends per second, paced at {@link BLIND_PACE_MARGIN} of it: the
 * fewest jobs per window (so sends stay spaced) whose whole-millisecond
 * window comes within 1% of that pace, never above it.
 */
export function limiterOf(rate: number): { max: number; duration: number } {
  const paced = rate * BLIND_PACE_MARGIN;
  for (let max = 1; ; max += 1) {
    const duration = Math.ceil((max * 1000) / paced);
    if (duration < MIN_LIMITER_WINDOW_MS) continue;
    if ((max * 1000) / duration >= paced * LIMITER_FIT || max >= paced) return { max, duration };
  }
}

/** The pace of the runs one engine works on, shared through Redis by every instance. */
export class BullMQPayoutRunPace {
  private readonly commands: PaceCommands;

  constructor(
    private readonly client: Redis,
    private readonly keyOf: (runId: string) => string,
  ) {
    client.defineCommand('malipoRunsPace', { numberOfKeys: 1, lua: PACE_SCRIPT });
    this.commands = client as unknown as PaceCommands;
  }

  /** A 429 met: the rate now, the pause every worker waits out, and the 429s of the run. */
  async rateLimited(
    runId: string,
    ceiling: number,
    retryAfterMs: number | undefined,
  ): Promise<{ rate: number; pauseMs: number; rateLimited: number }> {
    const pauseMs = Math.min(MAX_PAUSE_MS, retryAfterMs ?? DEFAULT_PAUSE_MS);
    const [rate, rateLimited] = await this.commands.malipoRunsPace(
      this.keyOf(runId),
      ceiling,
      Date.now(),
      pauseMs,
    );
    return { rate: Number(rate), pauseMs, rateLimited };
  }

  /** A send not refused for its pace: the rate now, a little higher when below the ceiling. */
  async recovered(runId: string, ceiling: number): Promise<number> {
    const [rate] = await this.commands.malipoRunsPace(this.keyOf(runId), ceiling, Date.now(), '');
    return Number(rate);
  }

  /** The rate now, `undefined` before the run met a 429. */
  async current(runId: string): Promise<number | undefined> {
    const rate = await this.client.hget(this.keyOf(runId), 'rate');
    return rate === null ? undefined : Number(rate);
  }

  async forget(runId: string): Promise<void> {
    await this.client.del(this.keyOf(runId));
  }
}

printsAsNameOnly(BullMQPayoutRunPace.prototype, 'BullMQPayoutRunPace');

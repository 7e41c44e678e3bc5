import { isJsonObject } from './http-io';

/** A limit on API requests per second (option `rateLimit`, `--rate-limit`, the control API). */
export interface RateLimitSettings {
  /** API requests let through in any one second (sliding window); the next ones get 429. */
  requestsPerSecond: number;
  /**
   * The `Retry-After` (whole seconds) of a 429. Default: the seconds until the oldest request of
   * the window leaves it, at least 1.
   */
  retryAfterSeconds?: number;
}

/** A limit above this is no limit a test could reach, and would hold that many timestamps. */
const MAX_REQUESTS_PER_SECOND = 100_000;
const MAX_RETRY_AFTER_SECONDS = 3600;

/**
 * Checks a rate limit given to `startSandbox` or posted to the control API (the controller answers
 * its error 400, the config throws it at start).
 * @throws Error naming the field.
 */
export function parseRateLimit(input: unknown): RateLimitSettings {
  if (!isJsonObject(input)) throw new Error('rateLimit must be a JSON object');
  const { requestsPerSecond, retryAfterSeconds } = input;
  if (!isWholeNumber(requestsPerSecond, 1, MAX_REQUESTS_PER_SECOND)) {
    throw new Error(
      `requestsPerSecond must be a whole number from 1 to ${MAX_REQUESTS_PER_SECOND}`,
    );
  }
  if (
    retryAfterSeconds !== undefined &&
    !isWholeNumber(retryAfterSeconds, 0, MAX_RETRY_AFTER_SECONDS)
  ) {
    throw new Error(
      `retryAfterSeconds must be a whole number from 0 to ${MAX_RETRY_AFTER_SECONDS}`,
    );
  }
  return {
    requestsPerSecond,
    ...(retryAfterSeconds === undefined ? {} : { retryAfterSeconds }),
  };
}

function isWholeNumber(value: unknown, min: number, max: number): value is number {
  return typeof value === 'number' && Number.isInteger(value) && value >= min && value <= max;
}

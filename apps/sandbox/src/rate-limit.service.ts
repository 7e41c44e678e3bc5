import { Injectable } from '@nestjs/common';
import { SandboxHttpError } from './http-io';
import { parseRateLimit } from './rate-limit';
import type { RateLimitSettings } from './rate-limit';
import { SandboxConfig } from './sandbox.config';

/** Why one request was turned away: the seconds its `Retry-After` asks for. */
export interface RateLimited {
  retryAfterSeconds: number;
}

const WINDOW_MS = 1000;

/**
 * The gateway's rate limit the real service has without publishing it: over a sliding window of
 * one second, at most `requestsPerSecond` API requests are let through; the others are answered
 * 429 with `Retry-After` before anything runs. Only requests let through count, so a client that
 * waits as asked gets in again.
 */
@Injectable()
export class RateLimitService {
  private settings?: RateLimitSettings;
  /** Arrival times (ms) of the requests let through in the last second, oldest first. */
  private admitted: number[] = [];

  constructor(private readonly config: SandboxConfig) {
    this.settings = config.rateLimit && { ...config.rateLimit };
  }

  /** Lets one API request through (recording it), or answers how long it must wait. */
  take(): RateLimited | undefined {
    const settings = this.settings;
    if (!settings) return undefined;
    const now = Date.now();
    let expired = 0;
    while (expired < this.admitted.length && this.admitted[expired] <= now - WINDOW_MS) {
      expired += 1;
    }
    if (expired > 0) this.admitted.splice(0, expired);
    if (this.admitted.length < settings.requestsPerSecond) {
      this.admitted.push(now);
      return undefined;
    }
    const untilFree = this.admitted[0] + WINDOW_MS - now;
    return {
      retryAfterSeconds: settings.retryAfterSeconds ?? Math.max(1, Math.ceil(untilFree / 1000)),
    };
  }

  /**
   * Sets the limit from a control request's body and starts a fresh window.
   * @throws SandboxHttpError 400 for an invalid limit.
   */
  set(input: unknown): RateLimitSettings {
    try {
      this.settings = parseRateLimit(input);
    } catch (error) {
      throw new SandboxHttpError(400, (error as Error).message);
    }
    this.admitted = [];
    return { ...this.settings };
  }

  /** Back to the limit `startSandbox` was given (none unless its `rateLimit` option was set). */
  restore(): void {
    this.settings = this.config.rateLimit && { ...this.config.rateLimit };
    this.admitted = [];
  }

  clear(): void {
    this.settings = undefined;
    this.admitted = [];
  }

  snapshot(): RateLimitSettings | null {
    return this.settings ? { ...this.settings } : null;
  }
}

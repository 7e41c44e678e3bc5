import { Injectable } from '@nestjs/common';
import { errorBody, isJsonObject, SandboxHttpError } from './http-io';
import { API_ROUTES, apiRouteOf } from './sandbox-operations';

/** What to do instead of (or on top of) the real answer. */
export type FaultAction =
  { kind: 'reset' } | { kind: 'status'; status: number; body: unknown; contentType?: string };

/** The fault one API request gets. */
export interface AppliedFault {
  delayMs: number;
  action?: FaultAction;
  /** Run the operation first, then answer with `action` (a lost response). */
  afterExecute: boolean;
  /** For the request log. */
  description: string;
}

/** A queued fault as posted to `POST /__sandbox/faults`, after validation. */
export interface QueuedFault {
  remaining: number;
  status?: number;
  body?: unknown;
  contentType?: string;
  reset: boolean;
  delayMs: number;
  afterExecute: boolean;
  path?: string;
}

export interface RandomFaults {
  rate: number;
  statuses: number[];
  reset: boolean;
  seed?: number;
}

/** The real error body, with the injected status. */
const defaultFaultBody = (status: number) => errorBody(status, 'Injected fault');
const DEFAULT_RANDOM_STATUSES = [500, 502, 503, 504];
const MAX_DELAY_MS = 120_000;

/**
 * Faults for the next API requests: a queue consumed in order (each entry for `count` requests,
 * optionally only on one path), then a random failure rate. Faults hit before authentication,
 * as a broken network or gateway would.
 */
@Injectable()
export class FaultsService {
  private queue: QueuedFault[] = [];
  private random?: RandomFaults & { next: () => number };

  /** Takes the fault for one request on API route `route` (see `apiRouteOf`), if any. */
  take(route: string): AppliedFault | undefined {
    const index = this.queue.findIndex((fault) => fault.path === undefined || fault.path === route);
    if (index >= 0) {
      const fault = this.queue[index];
      fault.remaining -= 1;
      if (fault.remaining === 0) this.queue.splice(index, 1);
      return toApplied(fault);
    }
    if (this.random && this.random.next() < this.random.rate) {
      const { statuses, reset } = this.random;
      const choices = reset ? statuses.length + 1 : statuses.length;
      const pick = Math.floor(this.random.next() * choices);
      const action: FaultAction =
        pick === statuses.length
          ? { kind: 'reset' }
          : { kind: 'status', status: statuses[pick], body: defaultFaultBody(statuses[pick]) };
      return {
        delayMs: 0,
        action,
        afterExecute: false,
        description: `random ${action.kind === 'reset' ? 'reset' : `status ${action.status}`}`,
      };
    }
    return undefined;
  }

  enqueue(input: unknown): QueuedFault {
    const fault = parseFault(input);
    this.queue.push(fault);
    return { ...fault };
  }

  enableRandom(input: unknown): RandomFaults {
    const settings = parseRandom(input);
    this.random = {
      ...settings,
      next: settings.seed === undefined ? Math.random : mulberry32(settings.seed),
    };
    return settings;
  }

  clear(): void {
    this.queue = [];
    this.random = undefined;
  }

  snapshot(): { queued: QueuedFault[]; random: RandomFaults | null } {
    const random = this.random && {
      rate: this.random.rate,
      statuses: this.random.statuses,
      reset: this.random.reset,
      ...(this.random.seed === undefined ? {} : { seed: this.random.seed }),
    };
    return { queued: this.queue.map((fault) => ({ ...fault })), random: random ?? null };
  }
}

function toApplied(fault: QueuedFault): AppliedFault {
  let action: FaultAction | undefined;
  if (fault.reset) action = { kind: 'reset' };
  else if (fault.status !== undefined) {
    action = {
      kind: 'status',
      status: fault.status,
      body: fault.body === undefined ? defaultFaultBody(fault.status) : fault.body,
      contentType: fault.contentType,
    };
  }
  const parts = [
    fault.delayMs > 0 ? `delay ${fault.delayMs}ms` : undefined,
    action?.kind === 'reset' ? 'reset' : undefined,
    action?.kind === 'status' ? `status ${action.status}` : undefined,
    action && fault.afterExecute ? 'after execute' : undefined,
  ];
  return {
    delayMs: fault.delayMs,
    action,
    afterExecute: fault.afterExecute,
    description: parts.filter(Boolean).join(' + '),
  };
}

function invalid(message: string): SandboxHttpError {
  return new SandboxHttpError(400, message);
}

function optionalInteger(
  body: Record<string, unknown>,
  key: string,
  min: number,
  max: number,
): number | undefined {
  const value = body[key];
  if (value === undefined) return undefined;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max) {
    throw invalid(`${key} must be a whole number from ${min} to ${max}`);
  }
  return value;
}

function optionalBoolean(body: Record<string, unknown>, key: string): boolean {
  const value = body[key];
  if (value === undefined) return false;
  if (typeof value !== 'boolean') throw invalid(`${key} must be true or false`);
  return value;
}

function parseFault(input: unknown): QueuedFault {
  const body = input ?? {};
  if (!isJsonObject(body)) throw invalid('body must be a JSON object');
  const count = optionalInteger(body, 'count', 1, 1_000_000) ?? 1;
  const status = optionalInteger(body, 'status', 200, 599);
  const delayMs = optionalInteger(body, 'delayMs', 0, MAX_DELAY_MS) ?? 0;
  const reset = optionalBoolean(body, 'reset');
  const afterExecute = optionalBoolean(body, 'afterExecute');
  if (reset && status !== undefined) throw invalid('give either status or reset, not both');
  if (!reset && status === undefined && delayMs === 0) {
    throw invalid('a fault needs status, reset or delayMs');
  }
  if (afterExecute && !reset && status === undefined) {
    throw invalid('afterExecute needs status or reset');
  }
  if (body.contentType !== undefined && typeof body.contentType !== 'string') {
    throw invalid('contentType must be a string');
  }
  let path: string | undefined;
  if (body.path !== undefined) {
    // A route (`/api/v1/status/{reference}`) or any concrete path of it.
    path = typeof body.path === 'string' ? apiRouteOf(body.path) : undefined;
    if (path === undefined) throw invalid(`path must be one of ${API_ROUTES.join(', ')}`);
  }
  return {
    remaining: count,
    ...(status === undefined ? {} : { status }),
    ...(body.body === undefined ? {} : { body: body.body }),
    ...(body.contentType === undefined ? {} : { contentType: body.contentType }),
    reset,
    delayMs,
    afterExecute,
    ...(path === undefined ? {} : { path }),
  };
}

function parseRandom(input: unknown): RandomFaults {
  const body = input ?? {};
  if (!isJsonObject(body)) throw invalid('body must be a JSON object');
  const { rate } = body;
  if (typeof rate !== 'number' || !(rate >= 0 && rate <= 1)) {
    throw invalid('rate must be a number from 0 to 1');
  }
  let statuses = DEFAULT_RANDOM_STATUSES;
  if (body.statuses !== undefined) {
    const list = body.statuses;
    const valid =
      Array.isArray(list) &&
      list.length > 0 &&
      list.every((s) => typeof s === 'number' && Number.isInteger(s) && s >= 200 && s <= 599);
    if (!valid) throw invalid('statuses must be a non-empty list of HTTP statuses');
    statuses = list as number[];
  }
  const seed = optionalInteger(body, 'seed', 0, 2 ** 32 - 1);
  return {
    rate,
    statuses: [...statuses],
    reset: optionalBoolean(body, 'reset'),
    ...(seed === undefined ? {} : { seed }),
  };
}

/** A tiny seeded PRNG, so a failing random-fault run can be replayed exactly. */
function mulberry32(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

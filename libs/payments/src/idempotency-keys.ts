import { createHash } from 'node:crypto';
import { PaymentsValidationError } from './errors';
import type { EncodedRequest } from './wire';

/** How long and how many caller-supplied keys a client remembers. */
export const IDEMPOTENCY_KEY_MEMORY = {
  maxKeys: 10_000,
  maxAgeMs: 24 * 60 * 60 * 1000,
} as const;

/**
 * JSON with object keys sorted at every level, so the same body always reads the same.
 * @internal
 */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (typeof value === 'object' && value !== null) {
    return flatCanonicalJson(value) ?? nestedCanonicalJson(value);
  }
  return JSON.stringify(value) ?? 'null';
}

/** {@link canonicalJson} of an object, written field by field. */
function nestedCanonicalJson(value: object): string {
  const entries = Object.keys(value)
    .sort()
    .filter((key) => (value as Record<string, unknown>)[key] !== undefined)
    .map(
      (key) => `${JSON.stringify(key)}:${canonicalJson((value as Record<string, unknown>)[key])}`,
    );
  return `{${entries.join(',')}}`;
}

const FLAT_FIELD_TYPES: ReadonlySet<string> = new Set(['string', 'number', 'boolean', 'undefined']);
const DIGIT_ZERO = 0x30;
const DIGIT_NINE = 0x39;

/**
 * {@link canonicalJson} of an object whose fields are all strings, numbers, booleans, null or
 * undefined, as every request body of the wire contract is: one native `JSON.stringify` of a copy
 * with its keys inserted in sorted order, the same text for less than half the work of a call's
 * fingerprint (docs/performance.md, "The journal's cost"). `undefined` for any other object, for
 * a key that starts with a digit (an object lists index-like keys first, whatever order they were
 * inserted in) and for `__proto__` (set on a plain object, it is not a field).
 */
function flatCanonicalJson(value: object): string | undefined {
  const keys = Object.keys(value).sort();
  const sorted: Record<string, unknown> = {};
  for (const key of keys) {
    const field: unknown = (value as Record<string, unknown>)[key];
    if (field !== null && !FLAT_FIELD_TYPES.has(typeof field)) return undefined;
    const first = key.charCodeAt(0);
    if ((first >= DIGIT_ZERO && first <= DIGIT_NINE) || key === '__proto__') return undefined;
    sorted[key] = field;
  }
  return JSON.stringify(sorted);
}

/**
 * The fingerprint of one request as it goes on the wire (operation, method, path and query, body
 * after defaults): a base64 SHA-256, so two calls compare without their bodies being kept, since
 * bodies carry phone numbers and names.
 * @internal
 */
export function requestFingerprint(operationName: string, encoded: EncodedRequest): string {
  return createHash('sha256')
    .update(canonicalJson([operationName, encoded.method, encoded.url, encoded.body ?? null]))
    .digest('base64');
}

/** What {@link IdempotencyKeyRegistry} is built with; tests shorten the bounds and set the clock. */
export interface IdempotencyKeyRegistryOptions {
  readonly maxKeys?: number;
  readonly maxAgeMs?: number;
  /** Milliseconds since the epoch. Default `Date.now`. */
  readonly now?: () => number;
}

/**
 * The caller-supplied idempotency keys a client has sent, each with the fingerprint of its
 * request: one key names one request, so a second, different request under a key already used
 * is refused before it is sent: the service may take it for a retry of the first.
 * Bounded: the last `maxKeys` keys used, none older than `maxAgeMs`.
 *
 * Not exported, yet not marked internal: the build strips what is (`stripInternal`), and
 * `FakePayments`'s constructor names this class in its declaration.
 */
export class IdempotencyKeyRegistry {
  /** Key → fingerprint and time of last use; the Map's order is the order of last use. */
  private readonly entries = new Map<
    string,
    { readonly fingerprint: string; readonly at: number }
  >();
  private readonly maxKeys: number;
  private readonly maxAgeMs: number;
  private readonly now: () => number;

  constructor(options: IdempotencyKeyRegistryOptions = {}) {
    this.maxKeys = options.maxKeys ?? IDEMPOTENCY_KEY_MEMORY.maxKeys;
    this.maxAgeMs = options.maxAgeMs ?? IDEMPOTENCY_KEY_MEMORY.maxAgeMs;
    this.now = options.now ?? Date.now;
  }

  /** Keys remembered now. */
  get size(): number {
    return this.entries.size;
  }

  /**
   * Records that `key` names the request of `fingerprint`. The same key with the same fingerprint
   * is a retry and is allowed.
   * @param target what the error names, as validation errors do: the request class.
   * @throws PaymentsValidationError (`idempotencyKey`, rule `reused`) when `key` was used for a
   * request of another fingerprint.
   */
  remember(key: string, fingerprint: string, target: string): void {
    const now = this.now();
    this.forgetOlderThan(now - this.maxAgeMs);
    const known = this.entries.get(key);
    if (known !== undefined && known.fingerprint !== fingerprint) {
      throw new PaymentsValidationError(target, [
        {
          field: 'idempotencyKey',
          rule: 'reused',
          message:
            "idempotencyKey was already used for a different request: a new request needs a new idempotencyKey (reuse a key only to retry the same request). Requests are compared as sent: the client's defaults count (defaultCallbackUrl, defaultUsername, walletType)",
        },
      ]);
    }
    // Deleted and set again, so a retried key moves to the end: the oldest entry stays first.
    if (known !== undefined) this.entries.delete(key);
    else if (this.entries.size >= this.maxKeys) this.forgetOldest();
    this.entries.set(key, { fingerprint, at: now });
  }

  /** Forgets every key. */
  clear(): void {
    this.entries.clear();
  }

  private forgetOlderThan(limit: number): void {
    for (const [key, { at }] of this.entries) {
      if (at >= limit) return;
      this.entries.delete(key);
    }
  }

  private forgetOldest(): void {
    for (const key of this.entries.keys()) {
      this.entries.delete(key);
      return;
    }
  }
}

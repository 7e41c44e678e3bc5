import { wholeNumberOption } from '../known-options';
/**
 * What {@link PaymentsWebhookStore.claim} found:
 * - `claimed`: nobody holds the event and it was not processed: this delivery runs the handlers,
 *   then calls `complete` (success) or `release` (a handler failed);
 * - `done`: the event was processed already: the delivery is a duplicate (200, no handler);
 * - `busy`: another delivery holds an unexpired lease on it, in this instance or another: this
 *   one is answered 503 so that the service delivers it again later.
 */
export type PaymentsWebhookClaim = 'claimed' | 'done' | 'busy';

/**
 * What the webhook module remembers between deliveries: which events are being processed or were
 * processed (so that a repeated or concurrent delivery, to any instance, does not run the handlers
 * again), and which references each idempotency key was seen with (so that a call executed twice
 * is noticed). The default {@link InMemoryPaymentsWebhookStore} serves one process;
 * `RedisPaymentsWebhookStore` (`@malipo/nestjs/redis`) serves several instances.
 *
 * Every method may throw (or reject) when the store is unreachable: the delivery is then answered
 * 503 and the service delivers it again. Fail fast (a command timeout of a second or so) rather
 * than hang: the service waits for the answer.
 */
export interface PaymentsWebhookStore {
  /**
   * Atomically takes the event `key` for `leaseMs` milliseconds, unless it was processed
   * (`done`) or another delivery holds it (`busy`). The lease ends by itself, so the claim of an
   * instance that crashed mid-handler is taken over by the next delivery after `leaseMs`.
   *
   * A store instance holds at most one claim per key at a time (the dispatcher waits for a copy
   * in flight in its own process before claiming), so `complete` and `release` name the key only.
   */
  claim(key: string, leaseMs: number): PaymentsWebhookClaim | Promise<PaymentsWebhookClaim>;
  /** Marks the event `key` processed (called after every handler succeeded): later claims are `done`. */
  complete(key: string): void | Promise<void>;
  /**
   * Gives up this store's claim of `key` (a handler failed): the next delivery claims it. A claim
   * that expired and was taken by another delivery meanwhile is left alone.
   */
  release(key: string): void | Promise<void>;
  /**
   * Adds `reference` to the references seen with `idempotencyKey` (once) and returns them all,
   * oldest first, this one included. Called for confirmed, claimed events only. Atomic over
   * instances (Redis: one `MULTI`), so that of two references recorded at once, one sees both.
   */
  recordReference(
    idempotencyKey: string,
    reference: string,
  ): readonly string[] | Promise<readonly string[]>;
  /**
   * Optional: takes one token of the status look-up budget `bucket`, a token bucket that refills
   * at `perSecond` and holds at most `burst`, shared by every instance on this store; false when
   * it is empty. A store without it leaves each instance its own budget (docs/errors.md, "What a
   * flood of webhooks costs").
   */
  takeLookupToken?(bucket: string, perSecond: number, burst: number): boolean | Promise<boolean>;
}

/**
 * References kept per idempotency key: two already prove a duplicate; a few more tell its size.
 * Shared by the stores of the library, so that they answer alike.
 */
export const MAX_REFERENCES_PER_KEY = 8;

/**
 * Process-local store (the default): the last `capacity` processed events, at most `capacity`
 * leases of events being processed (expired ones are swept; when all are live a new claim is
 * `busy`), and the last `capacity` idempotency keys, so junk deliveries cannot grow memory without
 * bound. It does not protect several instances from each
 * other: use a shared store (`RedisPaymentsWebhookStore`) for that.
 */
export class InMemoryPaymentsWebhookStore implements PaymentsWebhookStore {
  private readonly done = new Set<string>();
  /** Event key → end of its lease (epoch ms). */
  private readonly leases = new Map<string, number>();
  private readonly journal = new Map<string, string[]>();

  private readonly capacity: number;

  /** @throws PaymentsValidationError for a `capacity` below 1. */
  constructor(capacity = 10_000) {
    this.capacity = wholeNumberOption('InMemoryPaymentsWebhookStore', 'capacity', capacity, {
      min: 1,
    });
  }

  claim(key: string, leaseMs: number): PaymentsWebhookClaim {
    if (this.done.has(key)) return 'done';
    const now = Date.now();
    const until = this.leases.get(key);
    if (until !== undefined && until > now) return 'busy';
    this.leases.delete(key);
    if (this.leases.size >= this.capacity) {
      for (const [held, end] of this.leases) if (end <= now) this.leases.delete(held);
      // `capacity` live leases: refuse rather than forget one (this delivery is answered later).
      if (this.leases.size >= this.capacity) return 'busy';
    }
    this.leases.set(key, now + leaseMs);
    return 'claimed';
  }

  complete(key: string): void {
    this.leases.delete(key);
    this.done.delete(key);
    this.done.add(key);
    // A Set iterates in insertion order: the first key is the oldest.
    if (this.done.size > this.capacity) this.done.delete(this.done.values().next().value as string);
  }

  release(key: string): void {
    this.leases.delete(key);
  }

  recordReference(idempotencyKey: string, reference: string): readonly string[] {
    const references = this.journal.get(idempotencyKey) ?? [];
    if (!references.includes(reference)) {
      references.push(reference);
      // Keep the first reference (the original execution) and the latest ones.
      if (references.length > MAX_REFERENCES_PER_KEY) references.splice(1, 1);
    }
    // Re-inserted so that the Map's order is least recently used first.
    this.journal.delete(idempotencyKey);
    this.journal.set(idempotencyKey, references);
    if (this.journal.size > this.capacity) {
      this.journal.delete(this.journal.keys().next().value as string);
    }
    return [...references];
  }
}

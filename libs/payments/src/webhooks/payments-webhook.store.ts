/**
 * What the webhook module remembers between deliveries: which events were processed (so a
 * repeated delivery does not run the handlers again) and which references each idempotency key
 * was seen with (so a call executed twice is noticed). Implement it over your database or Redis to
 * keep both across restarts and instances.
 */
export interface PaymentsWebhookStore {
  /** Whether the event `key` was processed already. */
  has(key: string): boolean | Promise<boolean>;
  /** Records that the event `key` was processed (called after every handler succeeded). */
  add(key: string): void | Promise<void>;
  /**
   * Adds `reference` to the references seen with `idempotencyKey` (once) and returns them all,
   * oldest first, this one included. Called for confirmed events only. Make it atomic (e.g. Redis
   * `SADD` + `SMEMBERS` in one `MULTI`) if several instances receive webhooks.
   */
  recordReference(
    idempotencyKey: string,
    reference: string,
  ): readonly string[] | Promise<readonly string[]>;
}

/** References kept per idempotency key: two already prove a duplicate; a few more tell its size. */
const MAX_REFERENCES_PER_KEY = 8;

/**
 * Process-local store (the default): the last `capacity` processed events and the last `capacity`
 * idempotency keys, so junk deliveries cannot grow memory without bound.
 */
export class InMemoryPaymentsWebhookStore implements PaymentsWebhookStore {
  private readonly keys = new Set<string>();
  private readonly journal = new Map<string, string[]>();

  constructor(private readonly capacity = 10_000) {}

  has(key: string): boolean {
    return this.keys.has(key);
  }

  add(key: string): void {
    this.keys.add(key);
    // A Set iterates in insertion order: the first key is the oldest.
    if (this.keys.size > this.capacity) this.keys.delete(this.keys.values().next().value as string);
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

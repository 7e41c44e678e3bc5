/**
 * Remembers which webhook deliveries were processed, so a repeated delivery is acknowledged
 * without running the handlers again. Implement it over your database or Redis to deduplicate
 * across restarts and instances.
 */
export interface PaymentsWebhookStore {
  /** Whether the delivery `key` was processed already. */
  has(key: string): boolean | Promise<boolean>;
  /** Records that the delivery `key` was processed (called after every handler succeeded). */
  add(key: string): void | Promise<void>;
}

/** Process-local store of the last `capacity` delivery keys (the default). */
export class InMemoryPaymentsWebhookStore implements PaymentsWebhookStore {
  private readonly keys = new Set<string>();

  constructor(private readonly capacity = 10_000) {}

  has(key: string): boolean {
    return this.keys.has(key);
  }

  add(key: string): void {
    this.keys.add(key);
    // A Set iterates in insertion order: the first key is the oldest.
    if (this.keys.size > this.capacity) this.keys.delete(this.keys.values().next().value as string);
  }
}

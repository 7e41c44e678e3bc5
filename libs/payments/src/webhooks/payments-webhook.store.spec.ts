import { InMemoryPaymentsWebhookStore } from './payments-webhook.store';

describe('InMemoryPaymentsWebhookStore', () => {
  it('remembers the last `capacity` processed events', () => {
    const store = new InMemoryPaymentsWebhookStore(2);
    store.add('a:succeeded');
    store.add('b:succeeded');
    store.add('c:failed');

    expect([store.has('a:succeeded'), store.has('b:succeeded'), store.has('c:failed')]).toEqual([
      false,
      true,
      true,
    ]);
  });

  it('journals each reference of an idempotency key once, oldest first', () => {
    const store = new InMemoryPaymentsWebhookStore();

    expect(store.recordReference('key-1', 'R1')).toEqual(['R1']);
    expect(store.recordReference('key-1', 'R1')).toEqual(['R1']);
    expect(store.recordReference('key-1', 'R2')).toEqual(['R1', 'R2']);
    expect(store.recordReference('key-2', 'R3')).toEqual(['R3']);
  });

  it('bounds the references of a key, keeping the first one', () => {
    const store = new InMemoryPaymentsWebhookStore();
    let references: readonly string[] = [];
    for (let i = 1; i <= 20; i += 1) references = store.recordReference('key', `R${i}`);

    expect(references).toHaveLength(8);
    expect(references[0]).toBe('R1');
    expect(references[7]).toBe('R20');
  });

  it('bounds the journal to the `capacity` most recently used keys', () => {
    const store = new InMemoryPaymentsWebhookStore(2);
    store.recordReference('old', 'R1');
    store.recordReference('used', 'R2');
    store.recordReference('used', 'R2');
    store.recordReference('old', 'R1');
    store.recordReference('new', 'R3');

    // `used` was the least recently used key: forgotten, so its next reference starts afresh.
    expect(store.recordReference('used', 'R4')).toEqual(['R4']);
    expect(store.recordReference('new', 'R5')).toEqual(['R3', 'R5']);
  });
});

import { InMemoryPaymentsWebhookStore } from './payments-webhook.store';

describe('InMemoryPaymentsWebhookStore', () => {
  afterEach(() => jest.useRealTimers());

  it('claims an event once: busy while leased, done once completed', () => {
    const store = new InMemoryPaymentsWebhookStore();

    expect(store.claim('a:succeeded', 1000)).toBe('claimed');
    expect(store.claim('a:succeeded', 1000)).toBe('busy');
    store.complete('a:succeeded');
    expect(store.claim('a:succeeded', 1000)).toBe('done');
    expect(store.claim('b:succeeded', 1000)).toBe('claimed');
  });

  it('lets the next delivery claim a released event', () => {
    const store = new InMemoryPaymentsWebhookStore();
    store.claim('a:succeeded', 1000);

    store.release('a:succeeded');

    expect(store.claim('a:succeeded', 1000)).toBe('claimed');
  });

  it('lets the next delivery take an expired lease over', () => {
    jest.useFakeTimers({ now: 1_000_000 });
    const store = new InMemoryPaymentsWebhookStore();
    store.claim('a:succeeded', 1000);

    jest.setSystemTime(1_000_999);
    expect(store.claim('a:succeeded', 1000)).toBe('busy');
    jest.setSystemTime(1_001_000);
    expect(store.claim('a:succeeded', 1000)).toBe('claimed');
  });

  it('remembers the last `capacity` processed events', () => {
    const store = new InMemoryPaymentsWebhookStore(2);
    for (const key of ['a:succeeded', 'b:succeeded', 'c:failed']) {
      store.claim(key, 1000);
      store.complete(key);
    }

    expect(['a:succeeded', 'b:succeeded', 'c:failed'].map((k) => store.claim(k, 1000))).toEqual([
      'claimed',
      'done',
      'done',
    ]);
  });

  it('holds at most `capacity` leases: expired ones are swept, live ones refuse a new claim', () => {
    jest.useFakeTimers({ now: 1_000_000 });
    const store = new InMemoryPaymentsWebhookStore(2);
    store.claim('a', 1000);
    store.claim('b', 5000);

    expect(store.claim('c', 1000)).toBe('busy');
    jest.setSystemTime(1_001_000);
    expect(store.claim('c', 1000)).toBe('claimed');
    // `b` was live throughout: never forgotten, so never claimed twice.
    expect(store.claim('b', 1000)).toBe('busy');
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

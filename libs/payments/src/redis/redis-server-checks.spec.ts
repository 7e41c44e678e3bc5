import { Logger } from '@nestjs/common';
import { Redis } from 'ioredis';
import { journalEntry } from '../../spec-support/journal-entries';
import { RedisServer } from '../../spec-support/redis-server';
import { waitFor } from '../../spec-support/wait-for';
import { RedisPaymentsJournal } from './redis-payments-journal';
import { RedisPaymentsWebhookStore } from './redis-payments-webhook.store';

/**
 * A Redis that may evict keys, or a clock out of step with Redis's, loses journal entries or
 * reads live sends as overdue: said at error level on a store's first write (redis-server).
 */
describe("Redis stores judge the server's eviction policy and clock on their first write", () => {
  let server: RedisServer;
  let admin: Redis;
  let errors: jest.SpyInstance;
  const stores: { close(): Promise<void> }[] = [];

  const logged = () => errors.mock.calls.map(([message]) => String(message)).join('\n');

  beforeAll(async () => {
    server = await RedisServer.start();
    admin = new Redis(server.url);
  });
  beforeEach(async () => {
    errors = jest.spyOn(Logger.prototype, 'error').mockImplementation(() => undefined);
    await admin.config('SET', 'maxmemory-policy', 'noeviction');
  });
  afterEach(async () => {
    await Promise.all(stores.splice(0).map((store) => store.close()));
    jest.restoreAllMocks();
  });
  afterAll(async () => {
    await admin.quit();
    await server.stop();
  });

  it('says nothing of a Redis that never evicts, its clock in step', async () => {
    const journal = new RedisPaymentsJournal({ url: server.url });
    stores.push(journal);
    await journal.create(journalEntry('quiet-1'));
    // The check's commands were queued behind the write: answered once this one is.
    await journal.client.ping();
    await journal.client.ping();
    expect(logged()).toBe('');
  });

  it.each(['volatile-lru', 'allkeys-lru'])(
    'logs a Redis whose maxmemory-policy is %s, for the journal and the webhook store',
    async (policy) => {
      await admin.config('SET', 'maxmemory-policy', policy);
      const journal = new RedisPaymentsJournal({ url: server.url });
      const webhooks = new RedisPaymentsWebhookStore({ url: server.url });
      stores.push(journal, webhooks);
      await journal.create(journalEntry(`evicting-${policy}`));
      await webhooks.claim(`evicting-${policy}`, 1000);
      await waitFor(
        () => (logged().split(`maxmemory-policy is ${policy}`).length === 3 ? true : undefined),
        'both stores logged the policy',
      );
      expect(logged()).toContain("an evicted entry's key is sent again");
      expect(logged()).toContain('handlers run again');
      expect(logged()).toContain('Set maxmemory-policy to noeviction');
      // Once per store, not per write.
      await journal.create(journalEntry(`evicting-${policy}-2`));
      await journal.client.ping();
      expect(logged().split(`maxmemory-policy is ${policy}`)).toHaveLength(3);
    },
  );

  it.each([
    [3 * 60_000, 'ahead of'],
    [-3 * 60_000, 'behind'],
  ])('logs a process clock %d ms off Redis, as %s', async (offsetMs, word) => {
    const now = Date.now.bind(Date);
    jest.spyOn(Date, 'now').mockImplementation(() => now() + offsetMs);
    const journal = new RedisPaymentsJournal({ url: server.url });
    stores.push(journal);
    await journal.create(journalEntry(`skewed-${offsetMs}`));
    await waitFor(
      () => (logged().includes(`s ${word} Redis's`) ? true : undefined),
      'the clock was logged',
    );
    expect(logged()).toMatch(new RegExp(`clock is 1[78]\\d\\.\\d s ${word} Redis's`));
    expect(logged()).toContain('keep their clocks in step');
  });
});

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

  it('warns of a journal and a webhook store on a Redis without AOF, once each, and says nothing once AOF is on', async () => {
    const warnings = jest.spyOn(Logger.prototype, 'warn').mockImplementation(() => undefined);
    const warned = () => warnings.mock.calls.map(([message]) => String(message)).join('\n');
    // The test's Redis runs with appendonly no, as many do by default.
    const journal = new RedisPaymentsJournal({ url: server.url });
    const webhooks = new RedisPaymentsWebhookStore({ url: server.url });
    stores.push(journal, webhooks);
    await journal.create(journalEntry('no-aof-1'));
    await journal.create(journalEntry('no-aof-2'));
    await webhooks.claim('no-aof', 1000);
    await waitFor(
      () => (warned().split('without AOF').length === 3 ? true : undefined),
      'both warnings',
    );
    await journal.client.ping();
    await webhooks.client.ping();
    // Once per store, not per write.
    expect(warned().split('without AOF')).toHaveLength(3);
    expect(warned()).toContain('the journal forgets calls that may have executed');
    expect(warned()).toContain('the handlers of deliveries it forgot run again');

    await admin.config('SET', 'appendonly', 'yes');
    try {
      warnings.mockClear();
      const durable = new RedisPaymentsJournal({ url: server.url });
      stores.push(durable);
      await durable.create(journalEntry('aof-1'));
      await durable.client.ping();
      await durable.client.ping();
      expect(warned()).not.toContain('without AOF');
    } finally {
      await admin.config('SET', 'appendonly', 'no');
    }
  });

  it('judges the server at a later write when its first INFO got no answer', async () => {
    const warnings = jest.spyOn(Logger.prototype, 'warn').mockImplementation(() => undefined);
    const warned = () => warnings.mock.calls.map(([message]) => String(message)).join('\n');
    const journal = new RedisPaymentsJournal({ url: server.url });
    stores.push(journal);
    // Connected first: ioredis's own ready check asks INFO too.
    await journal.client.ping();
    // The connection dropped as the first check asked (ioredis rejects what it had sent).
    const info = jest
      .spyOn(journal.client, 'info')
      .mockRejectedValueOnce(new Error('Connection is closed.'));
    await journal.create(journalEntry('unjudged-1'));
    await journal.client.ping();
    expect(warned()).not.toContain('without AOF');

    await journal.create(journalEntry('unjudged-2'));
    await waitFor(() => (warned().includes('without AOF') ? true : undefined), 'the warning');
    expect(info.mock.calls.length).toBeGreaterThanOrEqual(2);
  });

  it('asks again at a later write only what got no answer: persistence and the clock, not memory', async () => {
    const warnings = jest.spyOn(Logger.prototype, 'warn').mockImplementation(() => undefined);
    const warned = () => warnings.mock.calls.map(([message]) => String(message)).join('\n');
    const journal = new RedisPaymentsJournal({ url: server.url });
    stores.push(journal);
    await journal.client.ping();
    // INFO memory answered, then Redis stalled before INFO persistence and TIME.
    const info = jest.spyOn(journal.client, 'info');
    info.mockImplementation(((section: string) =>
      section === 'memory'
        ? Promise.resolve('maxmemory_policy:noeviction\r\n')
        : Promise.reject(new Error('Command timed out'))) as typeof journal.client.info);
    const time = jest
      .spyOn(journal.client, 'time')
      .mockRejectedValue(new Error('Command timed out'));
    await journal.create(journalEntry('stalled-1'));
    await journal.client.ping();
    expect(warned()).not.toContain('without AOF');

    info.mockRestore();
    time.mockRestore();
    const askedAgain = jest.spyOn(journal.client, 'info');
    const timeAgain = jest.spyOn(journal.client, 'time');
    await journal.create(journalEntry('stalled-2'));
    await waitFor(() => (warned().includes('without AOF') ? true : undefined), 'the warning');
    await waitFor(() => (timeAgain.mock.calls.length > 0 ? true : undefined), 'TIME asked');
    expect(askedAgain.mock.calls.map(([section]) => section)).toEqual(['persistence']);
  });

  it('judges the server again after the connection came back: a Redis restarted with other settings, a failover', async () => {
    const journal = new RedisPaymentsJournal({ url: server.url });
    const webhooks = new RedisPaymentsWebhookStore({ url: server.url });
    stores.push(journal, webhooks);
    await journal.create(journalEntry('before-failover'));
    await webhooks.claim('before-failover', 1000);
    await journal.client.ping();
    await webhooks.client.ping();
    expect(logged()).toBe('');

    // The server the stores reconnect to evicts keys, as a replica promoted with other settings.
    await admin.config('SET', 'maxmemory-policy', 'allkeys-lru');
    const reconnected = (client: Redis) => new Promise((resolve) => client.once('ready', resolve));
    const back = [reconnected(journal.client), reconnected(webhooks.client)];
    await admin.call('CLIENT', 'KILL', 'TYPE', 'normal', 'SKIPME', 'yes');
    await Promise.all(back);
    await journal.create(journalEntry('after-failover'));
    await webhooks.claim('after-failover', 1000);
    await waitFor(
      () => (logged().split('maxmemory-policy is allkeys-lru').length === 3 ? true : undefined),
      'both stores judged the server again',
    );
  });

  it('does not ask again a server that refused INFO (a proxy that forbids it)', async () => {
    const journal = new RedisPaymentsJournal({ url: server.url });
    stores.push(journal);
    await journal.client.ping();
    const refusal = Object.assign(new Error('ERR unknown command'), { name: 'ReplyError' });
    const info = jest.spyOn(journal.client, 'info').mockRejectedValue(refusal);
    await journal.create(journalEntry('refused-1'));
    await journal.client.ping();
    const asked = info.mock.calls.length;
    expect(asked).toBeGreaterThan(0);
    await journal.create(journalEntry('refused-2'));
    await journal.client.ping();
    expect(info).toHaveBeenCalledTimes(asked);
  });

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

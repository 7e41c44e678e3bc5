import { Logger } from '@nestjs/common';
import { type Cluster, Redis } from 'ioredis';
import { journalEntry } from '../../spec-support/journal-entries';
import { RedisCluster } from '../../spec-support/redis-cluster';
import { waitFor } from '../../spec-support/wait-for';
import { PaymentsValidationError } from '../errors';
import { paymentsJournalStoreConformance } from '../testing/payments-journal-store.conformance';
import { RedisPaymentsJournal } from './redis-payments-journal';
import { RedisPaymentsWebhookStore } from './redis-payments-webhook.store';

/** What a store is given: an ioredis `Cluster` passes where a `Redis` is asked for (docs/journal.md). */
const given = (cluster: Cluster) => cluster as unknown as Redis;

describe('the Redis stores on a real Redis Cluster (three redis-server nodes)', () => {
  let cluster: RedisCluster;
  /** The app's own client, given to the stores. */
  let client: Cluster;
  let journal: RedisPaymentsJournal;
  let webhooks: RedisPaymentsWebhookStore;

  beforeAll(async () => {
    cluster = await RedisCluster.start();
    client = cluster.client();
    journal = new RedisPaymentsJournal({ client: given(client), keyPrefix: '{malipo-journal}:' });
    webhooks = new RedisPaymentsWebhookStore({ client: given(client) });
  });
  afterAll(async () => {
    await Promise.all([journal?.close(), webhooks?.close()]);
    await client?.quit();
    await cluster?.close();
  });

  describe('RedisPaymentsJournal with a hash-tagged prefix passes the store conformance cases', () => {
    for (const check of paymentsJournalStoreConformance()) {
      it(check.name, () => check.run(journal));
    }
  });

  it("RedisPaymentsWebhookStore claims, completes and records an idempotency key's references", async () => {
    expect(await webhooks.claim('9BD1eR:succeeded', 5000)).toBe('claimed');
    await webhooks.complete('9BD1eR:succeeded');
    expect(await webhooks.claim('9BD1eR:succeeded', 5000)).toBe('done');
    expect(await webhooks.recordReference('key-1', 'TX-1')).toEqual(['TX-1']);
    expect(await webhooks.recordReference('key-1', 'TX-2')).toEqual(['TX-1', 'TX-2']);
  });

  it("leaves the app's own pipelines and transactions on the client it gave working", async () => {
    // The stores guard every command of the client they are given (its errors lose their
    // arguments): a Cluster's pipelines and MULTIs must pass through that guard whole.
    expect(await client.pipeline().set('{app}:a', '1').get('{app}:a').exec()).toEqual([
      [null, 'OK'],
      [null, '1'],
    ]);
    expect(await client.multi().incr('{app}:n').incr('{app}:n').exec()).toEqual([
      [null, 1],
      [null, 2],
    ]);
  });

  it("keeps a pipeline command's arguments out of its error after a redirection (MOVED)", async () => {
    const secret = 'payee 0712345678';
    await client.set('{moved}:k', 'a string');
    const admin = new Redis(cluster.nodes[0].url);
    try {
      // The client's map of the slot gone stale, as in a reshard: its first send is MOVED.
      const slot = Number(await admin.call('CLUSTER', 'KEYSLOT', '{moved}:k'));
      const slots = (client as unknown as { slots: string[][] }).slots;
      const owner = slots[slot][0];
      slots[slot] = [
        cluster.startupNodes
          .map(({ port }) => `127.0.0.1:${port}`)
          .find((node) => node !== owner) ?? owner,
      ];
      const [[error]] = (await client.pipeline().hset('{moved}:k', 'f', secret).exec()) ?? [[]];
      expect(String(error)).toMatch(/WRONGTYPE/);
      expect(JSON.stringify((error as { command?: unknown }).command)).not.toContain(secret);
    } finally {
      admin.disconnect();
    }
  });

  it('refuses a journal prefix without a hash tag on a Cluster client, naming the option and the rule', () => {
    for (const keyPrefix of [undefined, 'malipo:journal:', '{}:journal:', 'malipo}{journal:']) {
      const refused = (() => {
        try {
          return new RedisPaymentsJournal({ client: given(client), keyPrefix });
        } catch (error) {
          return error;
        }
      })();
      expect(refused).toBeInstanceOf(PaymentsValidationError);
      expect((refused as PaymentsValidationError).errors).toEqual([
        expect.objectContaining({ field: 'keyPrefix', rule: 'hasHashTag' }),
      ]);
    }
  });

  it("accepts a journal's default prefix on a Cluster client whose own keyPrefix holds the hash tag", async () => {
    const tagged = cluster.client();
    tagged.options.keyPrefix = '{app}:';
    const accepted = new RedisPaymentsJournal({ client: given(tagged) });
    try {
      await accepted.create(journalEntry('tagged-by-the-client'));
      expect(await accepted.get('tagged-by-the-client')).toBeDefined();
    } finally {
      await accepted.close();
      tagged.disconnect();
    }
  });

  it('names every Cluster journal by its prefixes, so two prefixes are two places', async () => {
    const other = new RedisPaymentsJournal({ client: given(client), keyPrefix: '{tenant-b}:' });
    const prefixed = cluster.client();
    prefixed.options.keyPrefix = 'app:';
    const underPrefix = new RedisPaymentsJournal({
      client: given(prefixed),
      keyPrefix: '{malipo-journal}:',
    });
    try {
      expect([journal.location, other.location, underPrefix.location]).toEqual([
        'cluster {malipo-journal}:',
        'cluster {tenant-b}:',
        'cluster app: {malipo-journal}:',
      ]);
    } finally {
      await Promise.all([other.close(), underPrefix.close()]);
      prefixed.disconnect();
    }
  });

  it('judges the eviction policy of every master, not of one node the client picks', async () => {
    const errors = jest.spyOn(Logger.prototype, 'error').mockImplementation(() => undefined);
    const admins = cluster.nodes.map((node) => new Redis(node.url));
    const policies = ['noeviction', 'volatile-lru', 'allkeys-lru'];
    const own = new RedisPaymentsJournal({ client: given(client), keyPrefix: '{judged}:' });
    try {
      await Promise.all(
        admins.map((admin, index) => admin.config('SET', 'maxmemory-policy', policies[index])),
      );
      await own.create(journalEntry('judged-1'));
      const logged = () => errors.mock.calls.map(([message]) => String(message)).join('\n');
      await waitFor(
        () =>
          logged().includes('maxmemory-policy is volatile-lru') &&
          logged().includes('maxmemory-policy is allkeys-lru')
            ? true
            : undefined,
        "both evicting masters' policies logged",
      );
      expect(logged()).not.toContain('maxmemory-policy is noeviction');
    } finally {
      await Promise.all(
        admins.map((admin) => admin.config('SET', 'maxmemory-policy', 'noeviction')),
      );
      await own.close();
      admins.forEach((admin) => admin.disconnect());
      errors.mockRestore();
    }
  });
});

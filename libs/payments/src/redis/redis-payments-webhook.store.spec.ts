import { Redis } from 'ioredis';
import { RedisServer } from '../../spec-support/redis-server';
import { RedisPaymentsWebhookStore } from './redis-payments-webhook.store';

const DAY_MS = 24 * 60 * 60 * 1000;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('RedisPaymentsWebhookStore (on a real redis-server)', () => {
  let server: RedisServer;
  /** A client of the test's own, to look at the keys. */
  let redis: Redis;
  const stores: RedisPaymentsWebhookStore[] = [];
  const store = (options: ConstructorParameters<typeof RedisPaymentsWebhookStore>[0] = {}) => {
    const made = new RedisPaymentsWebhookStore({ url: server.url, ...options });
    stores.push(made);
    return made;
  };

  beforeAll(async () => {
    server = await RedisServer.start();
    redis = new Redis(server.url);
  });
  beforeEach(() => redis.flushall());
  afterEach(async () => {
    await Promise.all(stores.splice(0).map((made) => made.close()));
  });
  afterAll(async () => {
    await redis.quit();
    await server.close();
  });

  describe('claim', () => {
    it('claims once with a random token and the lease, then is busy, then done once completed', async () => {
      const one = store();

      expect(await one.claim('9BD1eR:succeeded', 5000)).toBe('claimed');
      const token = await redis.get('malipo:webhook:event:9BD1eR:succeeded');
      expect(token).toMatch(/^[0-9a-f-]{36}$/);
      expect(await redis.pttl('malipo:webhook:event:9BD1eR:succeeded')).toBeGreaterThan(4000);
      expect(await one.claim('9BD1eR:succeeded', 5000)).toBe('busy');

      await one.complete('9BD1eR:succeeded');

      expect(await redis.get('malipo:webhook:event:9BD1eR:succeeded')).toBe('done');
      const ttl = await redis.pttl('malipo:webhook:event:9BD1eR:succeeded');
      expect(ttl).toBeGreaterThan(30 * DAY_MS - 60_000);
      expect(ttl).toBeLessThanOrEqual(30 * DAY_MS);
      expect(await store().claim('9BD1eR:succeeded', 5000)).toBe('done');
    });

    it('gives one claim to 50 concurrent deliveries over 5 connections', async () => {
      const five = [store(), store(), store(), store(), store()];

      const claims = await Promise.all(
        Array.from({ length: 50 }, (_, i) => five[i % 5].claim('9BD2eR:succeeded', 5000)),
      );

      expect(claims.filter((claim) => claim === 'claimed')).toHaveLength(1);
      expect(claims.filter((claim) => claim === 'busy')).toHaveLength(49);
    });

    it('lets the next delivery take over a claim whose lease ended (a crashed instance)', async () => {
      const crashed = store();
      const next = store();
      expect(await crashed.claim('9BD3eR:succeeded', 100)).toBe('claimed');
      expect(await next.claim('9BD3eR:succeeded', 100)).toBe('busy');

      await sleep(150);

      expect(await next.claim('9BD3eR:succeeded', 5000)).toBe('claimed');
    });

    it('release deletes only its own claim: a claim taken over after the lease stays', async () => {
      const slow = store();
      const next = store();
      await slow.claim('9BD4eR:succeeded', 100);
      await sleep(150);
      await next.claim('9BD4eR:succeeded', 5000);

      await slow.release('9BD4eR:succeeded');

      expect(await store().claim('9BD4eR:succeeded', 5000)).toBe('busy');
      await next.release('9BD4eR:succeeded');
      expect(await redis.exists('malipo:webhook:event:9BD4eR:succeeded')).toBe(0);
      expect(await store().claim('9BD4eR:succeeded', 5000)).toBe('claimed');
    });

    it('release leaves a completed event done', async () => {
      const one = store();
      await one.claim('9BD5eR:succeeded', 5000);
      await store().complete('9BD5eR:succeeded');

      await one.release('9BD5eR:succeeded');

      expect(await one.claim('9BD5eR:succeeded', 5000)).toBe('done');
    });

    it('writes under keyPrefix and keeps processed events doneTtlMs', async () => {
      const prefixed = store({ keyPrefix: 'shop:hooks:', doneTtlMs: 60_000 });
      await prefixed.claim('9BD6eR:failed', 5000);
      await prefixed.complete('9BD6eR:failed');

      expect(await redis.keys('*')).toEqual(['shop:hooks:event:9BD6eR:failed']);
      expect(await redis.pttl('shop:hooks:event:9BD6eR:failed')).toBeGreaterThan(59_000);
    });
  });

  describe('recordReference', () => {
    it('journals each reference once, oldest first, in a sorted set with a TTL', async () => {
      const one = store({ journalTtlMs: 60_000 });

      expect(await one.recordReference('payout-1', '9BD7eW')).toEqual(['9BD7eW']);
      await sleep(2);
      expect(await store().recordReference('payout-1', '9BD6eW')).toEqual(['9BD7eW', '9BD6eW']);
      expect(await one.recordReference('payout-1', '9BD7eW')).toEqual(['9BD7eW', '9BD6eW']);
      expect(await redis.type('malipo:webhook:refs:payout-1')).toBe('zset');
      expect(await redis.pttl('malipo:webhook:refs:payout-1')).toBeGreaterThan(59_000);
    });

    it('bounds the references of a key to 8, keeping the first one', async () => {
      const one = store();
      let references: readonly string[] = [];
      for (let i = 1; i <= 20; i += 1) {
        references = await one.recordReference('payout-2', `R${i}`);
        await sleep(2);
      }

      expect(references).toEqual(['R1', 'R14', 'R15', 'R16', 'R17', 'R18', 'R19', 'R20']);
    });

    it('of two references recorded at once by two instances, exactly one sees both', async () => {
      const [a, b] = [store(), store()];
      for (let round = 0; round < 20; round += 1) {
        const seen = await Promise.all([
          a.recordReference(`key-${round}`, 'RA'),
          b.recordReference(`key-${round}`, 'RB'),
        ]);
        expect(seen.map((references) => references.length).sort()).toEqual([1, 2]);
      }
    });
  });

  describe('connection', () => {
    it('closes a connection it made, once, and leaves a given client open', async () => {
      const made = store();
      await made.claim('k', 1000);
      const client = new Redis(server.url);
      const given = new RedisPaymentsWebhookStore({ client });

      await Promise.all([made.close(), made.onModuleDestroy(), given.close()]);

      expect(made.client.status).toBe('end');
      expect(await client.ping()).toBe('PONG');
      expect(await given.claim('k', 1000)).toBe('busy');
      await client.quit();
    });

    it('refuses a client together with url or connection options', () => {
      const client = new Redis(server.url, { lazyConnect: true });
      expect(() => new RedisPaymentsWebhookStore({ client, url: server.url })).toThrow(
        /either client, or url\/connection/,
      );
      client.disconnect();
    });

    it.each([0, -5, 1.5])('refuses doneTtlMs %s', (doneTtlMs) => {
      expect(() => new RedisPaymentsWebhookStore({ client: redis, doneTtlMs })).toThrow(
        /doneTtlMs must be a positive integer/,
      );
    });

    it('fails fast when Redis cannot be reached', async () => {
      const nowhere = await RedisServer.start();
      const port = nowhere.port;
      await nowhere.close();
      const unreachable = store({ url: `redis://127.0.0.1:${port}` });

      const started = Date.now();
      const error = await unreachable.claim('k', 1000).then(
        () => new Error('the claim resolved'),
        (e: unknown) => e as Error,
      );
      const elapsed = Date.now() - started;

      console.log(
        `claim against an unreachable Redis rejected after ${elapsed} ms: ${error.message}`,
      );
      // Fast by the store's defaults, not by the clock: it gave up after one reconnection
      // (maxRetriesPerRequest 1; ioredis's own default, 20, takes over 10 s), or at its
      // commandTimeout on a machine too busy to try even that in time.
      expect(error.message).toMatch(
        /max retries per request limit \(which is 1\)|Command timed out/,
      );
    });

    it('fails within commandTimeout when Redis hangs', async () => {
      // Redis stays frozen until the claim rejects: a claim that waited for it would never settle,
      // and jest's timeout would fail the test.
      const hanging = store({ connection: { commandTimeout: 300 } });
      expect(await hanging.claim('k', 1000)).toBe('claimed');
      server.freeze();
      try {
        const started = Date.now();
        await expect(hanging.claim('k2', 1000)).rejects.toThrow(/timed out/i);
        const elapsed = Date.now() - started;
        console.log(
          `claim against a frozen Redis rejected after ${elapsed} ms (commandTimeout 300)`,
        );
      } finally {
        server.thaw();
      }
    });

    it('keeps no token of a claim whose complete or release failed (a store lives for months)', async () => {
      const hanging = store({ connection: { commandTimeout: 300 } });
      const held = () => (hanging as unknown as { tokens: Map<string, string> }).tokens.size;
      expect(await hanging.claim('to-complete', 60_000)).toBe('claimed');
      expect(await hanging.claim('to-release', 60_000)).toBe('claimed');
      expect(held()).toBe(2);
      server.freeze();
      try {
        await expect(hanging.complete('to-complete')).rejects.toThrow(/timed out/i);
        await expect(hanging.release('to-release')).rejects.toThrow(/timed out/i);
      } finally {
        server.thaw();
      }
      expect(held()).toBe(0);
    });
  });
  describe('takeLookupToken', () => {
    it('is one bucket for every store on the Redis: the burst once, then its rate', async () => {
      const [one, two] = [store(), store()];
      // A rate so low that no token comes back during the test, however slow the machine.
      const taken = await Promise.all(
        Array.from({ length: 10 }, (_, i) =>
          (i % 2 === 0 ? one : two).takeLookupToken('lookups:main', 0.001, 4),
        ),
      );
      expect(taken.filter(Boolean)).toHaveLength(4);
      // Another bucket is another budget.
      expect(await one.takeLookupToken('lookups:foreign', 0.001, 1)).toBe(true);
      expect(await two.takeLookupToken('lookups:foreign', 0.001, 1)).toBe(false);
      // It expires once it would be full again, and holds no more than the burst meanwhile.
      const ttl = await redis.pttl('malipo:webhook:budget:lookups:main');
      expect(ttl).toBeGreaterThan(0);
    });

    it('refills at its rate, never faster', async () => {
      const one = store();
      // Asked for as often as the machine allows: a busy machine makes the wait longer, never
      // the count of tokens larger. Three tokens at burst 1 and 50 a second take two refills of
      // 20 ms each on Redis's clock, which the wait measured here can only exceed (1 ms each for
      // the millisecond rounding of both clocks).
      const started = Date.now();
      let taken = 0;
      let asked = 0;
      while (taken < 3 && asked < 20_000) {
        asked += 1;
        if (await one.takeLookupToken('b', 50, 1)) taken += 1;
      }
      const waited = Date.now() - started;
      expect(taken).toBe(3);
      expect(waited).toBeGreaterThanOrEqual(38);
    });
  });
});

import { Logger } from '@nestjs/common';
import { Redis } from 'ioredis';
import { journalEntry } from '../../spec-support/journal-entries';
import { RedisServer } from '../../spec-support/redis-server';
import { paymentsJournalStoreConformance } from '../testing/payments-journal-store.conformance';
import type { PaymentsJournalEntry } from '../journal/payments-journal.interfaces';
import { RedisPaymentsJournal } from './redis-payments-journal';

const DAY_MS = 24 * 60 * 60 * 1000;

const entry = journalEntry;

describe('RedisPaymentsJournal (on a real redis-server)', () => {
  let server: RedisServer;
  /** A client of the test's own, to look at the keys. */
  let redis: Redis;
  /** Two journals, as two instances of an app would hold. */
  let one: RedisPaymentsJournal;
  let two: RedisPaymentsJournal;

  beforeAll(async () => {
    server = await RedisServer.start();
    redis = new Redis(server.url);
    one = new RedisPaymentsJournal({ url: server.url });
    two = new RedisPaymentsJournal({ url: server.url });
  });
  afterAll(async () => {
    await Promise.all([one.close(), two.close(), redis.quit()]);
    await server.close();
  });

  describe('passes the store conformance cases', () => {
    for (const check of paymentsJournalStoreConformance()) {
      it(check.name, () => check.run(one));
    }
  });

  it('is atomic across two connections: of creates racing from both, one wins', async () => {
    const results = await Promise.all(
      Array.from({ length: 10 }, (_, index) =>
        (index % 2 === 0 ? one : two).create(entry('raced', { fingerprint: `fp-${index}` })),
      ),
    );

    expect(results.filter((result) => result.created)).toHaveLength(1);
    expect(new Set(results.map((result) => result.entry.fingerprint)).size).toBe(1);
  });

  it('keeps an open entry and its reference until it is settled, then expires them ttlMs after', async () => {
    await one.create(entry('ttl'));
    expect(await redis.pttl('malipo:journal:entry:ttl')).toBe(-1);
    await one.replace(entry('ttl', { version: 2, state: 'accepted', reference: 'TTL1eW' }));
    expect(await redis.pttl('malipo:journal:entry:ttl')).toBe(-1);
    expect(await redis.pttl('malipo:journal:ref:TTL1eW')).toBe(-1);
    expect(await redis.zscore('malipo:journal:open', 'ttl')).not.toBeNull();
    expect(await redis.pttl('malipo:journal:open')).toBe(-1);

    await one.replace(entry('ttl', { version: 3, state: 'succeeded', reference: 'TTL1eW' }));
    const entryTtl = await redis.pttl('malipo:journal:entry:ttl');
    expect(entryTtl).toBeGreaterThan(29 * DAY_MS);
    expect(entryTtl).toBeLessThanOrEqual(30 * DAY_MS);
    expect(await redis.pttl('malipo:journal:ref:TTL1eW')).toBeGreaterThan(29 * DAY_MS);
    expect(await redis.zscore('malipo:journal:open', 'ttl')).toBeNull();
  });

  it('expires a refused entry ttlMs after it was written', async () => {
    await one.create(entry('refused-at-once', { state: 'refused' }));
    expect(await redis.pttl('malipo:journal:entry:refused-at-once')).toBeGreaterThan(29 * DAY_MS);
    expect(await redis.zscore('malipo:journal:open', 'refused-at-once')).toBeNull();
  });

  it('keeps the by-start index to the starts of the last ttlMs, and still lists older open entries', async () => {
    const short = new RedisPaymentsJournal({
      url: server.url,
      keyPrefix: 'window:',
      ttlMs: 60_000,
    });
    const longAgo = new Date(Date.now() - 120_000).toISOString();
    try {
      await short.create(entry('old-open', { startedAt: longAgo }));
      await short.create(entry('old-settled', { startedAt: longAgo, state: 'refused' }));
      await short.create(entry('new'));
      // The create of 'new' trimmed both old starts: the index does not grow with every call.
      expect(await redis.zrange('window:started', '0', '-1')).toEqual(['new']);

      const keys = (listed: PaymentsJournalEntry[]) => listed.map((held) => held.idempotencyKey);
      // 'old-settled' is still readable by its key until it expires, but no longer listed.
      expect((await short.get('old-settled'))?.state).toBe('refused');
      expect(keys(await short.list())).toEqual(['old-open', 'new']);
      expect(keys(await short.list({ states: ['started'] }))).toEqual(['old-open', 'new']);
      expect(keys(await short.list({ states: ['started', 'refused'] }))).toEqual([
        'old-open',
        'new',
      ]);
      expect(keys(await short.list({ states: ['refused'] }))).toEqual([]);
      expect(keys(await short.list({ since: new Date(Date.now() - 60_000) }))).toEqual(['new']);
    } finally {
      await short.close();
    }
  });

  it('keeps an entry changed after the last create listed: the index lives as long as it', async () => {
    const short = new RedisPaymentsJournal({ url: server.url, keyPrefix: 'late:', ttlMs: 60_000 });
    try {
      await short.create(entry('late'));
      // As if no call had been made for a while: the index would expire before the entry.
      await redis.pexpire('late:started', 10);
      await short.replace(entry('late', { version: 2, state: 'succeeded', reference: 'L1eW' }));
      expect(await redis.pttl('late:started')).toBeGreaterThan(50_000);
      expect((await short.list()).map((listed) => listed.idempotencyKey)).toEqual(['late']);
    } finally {
      await short.close();
    }
  });

  it('keeps only open entries in the open index, and drops expired entries from the list', async () => {
    const short = new RedisPaymentsJournal({ url: server.url, keyPrefix: 'short:', ttlMs: 60_000 });
    try {
      await short.create(entry('done'));
      await short.replace(entry('done', { version: 2, state: 'succeeded', reference: 'D1eW' }));
      await short.create(entry('gone'));
      expect(await redis.zrange('short:open', '0', '-1')).toEqual(['gone']);

      await redis.del('short:entry:gone');
      expect((await short.list()).map((listed) => listed.idempotencyKey)).toEqual(['done']);
      expect(await redis.zrange('short:started', '0', '-1')).toEqual(['done']);
    } finally {
      await short.close();
    }
  });

  it('lists every open entry while other instances settle entries between its pages', async () => {
    const client = new Redis(server.url);
    const listing = new RedisPaymentsJournal({ client, keyPrefix: 'race:' });
    const settling = new RedisPaymentsJournal({ url: server.url, keyPrefix: 'race:' });
    try {
      // 1,200 accepted entries over three start times: ties cross the pages of 500.
      const keys = Array.from({ length: 1200 }, (_, index) => `k${String(index).padStart(4, '0')}`);
      const base = Date.parse('2026-11-27T06:00:00Z');
      for (let index = 0; index < keys.length; index += 100) {
        await Promise.all(
          keys.slice(index, index + 100).map((key, offset) => {
            const startedAt = new Date(base + Math.floor((index + offset) / 400)).toISOString();
            return listing.create(
              entry(key, { state: 'accepted', reference: `R-${key}`, startedAt }),
            );
          }),
        );
      }
      // As the first page is read, another instance settles 300 of its entries: they leave the
      // open index, and the entries after them move up by as many places.
      const settled = keys.slice(100, 400);
      const read = client.zrangebyscore.bind(client) as (...args: unknown[]) => Promise<string[]>;
      let pages = 0;
      jest.spyOn(client, 'zrangebyscore').mockImplementation(async (...args: unknown[]) => {
        const page = await read(...args);
        pages += 1;
        if (pages === 1) {
          for (const key of settled) {
            const held = (await settling.get(key))!;
            await settling.replace({ ...held, state: 'succeeded', version: held.version + 1 });
          }
        }
        return page;
      });

      const open = await listing.list({ states: ['accepted'] });

      expect(pages).toBeGreaterThan(1);
      const openKeys = keys.filter((key) => !settled.includes(key));
      expect(open.map((listed) => listed.idempotencyKey).sort()).toEqual(openKeys);
    } finally {
      await Promise.all([listing.close(), settling.close()]);
      await client.quit();
    }
  });

  it('rejects, never resolves, when Redis is unreachable', async () => {
    const unreachable = new RedisPaymentsJournal({
      url: 'redis://127.0.0.1:1',
      connection: { retryStrategy: () => null },
    });
    try {
      await expect(unreachable.create(entry('down'))).rejects.toThrow();
      await expect(unreachable.get('down')).rejects.toThrow();
    } finally {
      await unreachable.close();
    }
  });

  it('names where its entries are, the same for a url and a client of one database, without the password', async () => {
    const port = new URL(server.url).port;
    const client = new Redis(`${server.url}/2`, { lazyConnect: true });
    const journals = [
      new RedisPaymentsJournal({ url: `redis://:pass-Xy7@127.0.0.1:${port}/2`, keyPrefix: 'pay:' }),
      new RedisPaymentsJournal({ client, keyPrefix: 'pay:' }),
      new RedisPaymentsJournal({ url: `redis://127.0.0.1:${port}/3`, keyPrefix: 'pay:' }),
      new RedisPaymentsJournal({ url: `redis://127.0.0.1:${port}/2` }),
      new RedisPaymentsJournal({
        url: `redis://127.0.0.1:${port}/2`,
        connection: { keyPrefix: 'tenant-a:' },
      }),
    ];
    try {
      expect(journals.map((journal) => journal.location)).toEqual([
        `127.0.0.1:${port}/2 pay:`,
        `127.0.0.1:${port}/2 pay:`,
        `127.0.0.1:${port}/3 pay:`,
        `127.0.0.1:${port}/2 malipo:journal:`,
        `127.0.0.1:${port}/2 tenant-a: malipo:journal:`,
      ]);
      // A URL given as the host is refused, never connected to, nor repeated.
      const asHost = () =>
        new RedisPaymentsJournal({ connection: { host: 'redis://:pass-Xy7@127.0.0.1' } });
      expect(asHost).toThrow(/connection.host must be a host name or address, not a URL/);
      expect(asHost).not.toThrow(/pass-Xy7/);
    } finally {
      await Promise.all(journals.map((journal) => journal.close()));
      client.disconnect();
    }
  });

  it('logs at error level, once, a Redis that lost the journal since its first entry (FLUSHALL)', async () => {
    const errors = jest.spyOn(Logger.prototype, 'error').mockImplementation(() => undefined);
    const lost = () =>
      errors.mock.calls.filter(([message]) =>
        String(message).includes('Redis lost the payments journal'),
      );
    const journal = new RedisPaymentsJournal({ url: server.url, keyPrefix: 'flushed:' });
    try {
      await journal.create(entry('before-1'));
      await two.create(entry('before-2'));
      expect(lost()).toHaveLength(0);
      await server.flushAll();
      await journal.create(entry('after-1'));
      expect(lost()).toHaveLength(1);
      expect(String(lost()[0][0])).toContain('under flushed:');
      // The new mark is the journal's from then on.
      await journal.create(entry('after-2'));
      expect(lost()).toHaveLength(1);
    } finally {
      errors.mockRestore();
      await journal.close();
    }
  });

  it('logs at error level the open entries it finds gone from Redis, naming their keys, as it lists', async () => {
    const errors = jest.spyOn(Logger.prototype, 'error').mockImplementation(() => undefined);
    const journal = new RedisPaymentsJournal({ url: server.url, keyPrefix: 'orphans:' });
    try {
      await journal.create(entry('kept', { state: 'in_doubt' }));
      await journal.create(entry('evicted', { state: 'in_doubt' }));
      await redis.del('orphans:entry:evicted');
      // As inDoubt() and reconcile() read them.
      const inDoubt = await journal.list({ states: ['in_doubt'] });
      expect(inDoubt.map((found) => found.idempotencyKey)).toEqual(['kept']);
      expect(errors).toHaveBeenCalledTimes(1);
      expect(String(errors.mock.calls[0][0])).toMatch(/1 open entry .* gone from Redis.*evicted/);
    } finally {
      errors.mockRestore();
      await journal.close();
    }
  });

  it('refuses a ttlMs that is not a positive integer, and a client given with a url', () => {
    expect(() => new RedisPaymentsJournal({ url: server.url, ttlMs: 0 })).toThrow(/ttlMs/);
    expect(() => new RedisPaymentsJournal({ client: redis, url: server.url })).toThrow(
      /either client/,
    );
  });
});

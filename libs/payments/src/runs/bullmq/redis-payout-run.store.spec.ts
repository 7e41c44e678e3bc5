import { inspect } from 'node:util';
import { Logger } from '@nestjs/common';
import { Redis } from 'ioredis';
import { itemRecord, runRecord } from '../../../spec-support/payout-run-records';
import { RedisServer } from '../../../spec-support/redis-server';
import { waitFor } from '../../../spec-support/wait-for';
import { payoutRunStoreConformance } from '../../testing/payout-run-store.conformance';
import { RedisPayoutRunStore } from './redis-payout-run.store';
import { PayoutRunExistsError } from '../payout-run.store';

describe('RedisPayoutRunStore (on a real redis-server)', () => {
  let server: RedisServer;
  /** Two stores, as two instances of an app would hold. */
  let one: RedisPayoutRunStore;
  let two: RedisPayoutRunStore;

  beforeAll(async () => {
    server = await RedisServer.start();
    one = new RedisPayoutRunStore({ url: server.url });
    two = new RedisPayoutRunStore({ url: server.url });
  });
  afterAll(async () => {
    await Promise.all([one?.close(), two?.close()]);
    await server?.close();
  });

  describe('passes the store conformance cases', () => {
    for (const check of payoutRunStoreConformance()) {
      it(check.name, () => check.run(one));
    }
  });

  it('is atomic across two connections: of updates racing from both, one wins', async () => {
    const runId = 'raced';
    await one.createRun(runRecord(runId), [itemRecord(runId, 'a')]);
    const results = await Promise.all(
      Array.from({ length: 10 }, (_, index) =>
        (index % 2 === 0 ? one : two).updateItem(runId, 'a', { state: 'sending' }, ['queued']),
      ),
    );
    expect(results.filter(Boolean)).toHaveLength(1);
    expect((await two.summary(runId)).counts).toMatchObject({ queued: 0, sending: 1 });
  });

  it('keeps the item requests of a refused write out of its error, and frees the run id (Redis out of memory)', async () => {
    const admin = new Redis(server.url);
    const store = new RedisPayoutRunStore({ url: server.url, keyPrefix: 'oom:' });
    // Enough items for several pages: the first page fills the memory left, the next is refused
    // with its items' requests as the command's arguments.
    const items = Array.from({ length: 2_000 }, (_, index) =>
      itemRecord('oom', `i${index}`, 'queued', {
        request: {
          phoneNumber: `07129${String(index).padStart(5, '0')}`,
          amount: 10,
          narration: `Salary Wanjiku Kamau ${index} ${'x'.repeat(200)}`,
        },
      }),
    );
    try {
      const used = /used_memory:(\d+)/.exec(await admin.info('memory'))?.[1];
      await admin.config('SET', 'maxmemory-policy', 'noeviction');
      await admin.config('SET', 'maxmemory', String(Number(used) + 64 * 1024));
      const error: unknown = await store.createRun(runRecord('oom'), items).then(
        () => new Error('it did not reject'),
        (rejected: unknown) => rejected,
      );
      const fields = error instanceof Error ? { ...error, stack: error.stack } : error;
      const shown = [inspect(error, { depth: 20 }), JSON.stringify(fields), String(error)].join();

      expect(shown).toMatch(/OOM/);
      expect(shown).not.toMatch(/07129\d{5}|Wanjiku/);
      // The failed creation removed what it wrote (phone numbers), and freed the id: created
      // again once Redis has room.
      expect(await admin.keys('oom:*')).toEqual([]);
      await admin.config('SET', 'maxmemory', '0');
      await store.createRun(runRecord('oom'), items.slice(0, 3));
      expect((await store.summary('oom')).counts.queued).toBe(3);
    } finally {
      await admin.config('SET', 'maxmemory', '0');
      await admin.quit();
      await store.close();
    }
  });

  it('logs a Redis that may evict its keys, or forget them on a restart, once, from its first write', async () => {
    const admin = new Redis(server.url);
    const errors = jest.spyOn(Logger.prototype, 'error').mockImplementation(() => undefined);
    const warnings = jest.spyOn(Logger.prototype, 'warn').mockImplementation(() => undefined);
    const said = (spy: jest.SpyInstance) => spy.mock.calls.map(([line]) => String(line)).join('\n');
    const store = new RedisPayoutRunStore({ url: server.url, keyPrefix: 'judged:' });
    try {
      await admin.config('SET', 'maxmemory-policy', 'volatile-lru');
      // The test's Redis runs with appendonly no, as many do by default.
      await store.createRun(runRecord('judged'), [itemRecord('judged', 'a')]);
      await waitFor(
        () =>
          said(errors).includes('maxmemory-policy is volatile-lru') &&
          said(warnings).includes('without AOF')
            ? true
            : undefined,
        'the store judged its server',
      );
      expect(said(errors)).toContain('its payouts are neither sent nor reported');
      expect(said(warnings)).toContain('the runs in progress are lost');
      await store.updateItem('judged', 'a', { state: 'sending' }, ['queued']);
      await store.client.ping();
      expect(said(errors).split('maxmemory-policy is')).toHaveLength(2);
      expect(said(warnings).split('without AOF')).toHaveLength(2);
    } finally {
      await admin.config('SET', 'maxmemory-policy', 'noeviction');
      jest.restoreAllMocks();
      await store.close();
      await admin.quit();
    }
  });

  it('deletes a run with its items, and leaves a given client open', async () => {
    const client = new Redis(server.url);
    const store = new RedisPayoutRunStore({ client, keyPrefix: 'other:' });
    const check = payoutRunStoreConformance()[0];
    await check.run(store);
    const [runKey] = await client.keys('other:*:run');
    const runId = runKey.slice('other:{'.length, -'}:run'.length);
    expect(await store.deleteRun(runId)).toBe(true);
    expect(await client.keys('other:*')).toEqual([]);
    expect(await store.deleteRun(runId)).toBe(false);
    await store.close();
    expect(await client.ping()).toBe('PONG');
    await client.quit();
  });

  it('removes what a creation that died left, once its claim lapsed: no item of it joins the run', async () => {
    const client = new Redis(server.url);
    const store = new RedisPayoutRunStore({ client, keyPrefix: 'died:' });
    const runId = 'after-a-crash';
    try {
      // What a creation killed after its first chunk leaves, its claim (a lease) lapsed.
      await client.hset(`died:{${runId}}:item:ghost`, { id: 'ghost', rq: '{"phoneNumber":"x"}' });
      await client.zadd(`died:{${runId}}:order`, 0, 'ghost');
      await client.zadd(`died:{${runId}}:state:queued`, 0, 'ghost');
      await client.hset(`died:{${runId}}:totals`, 'queued:KES:count', 7);
      await store.createRun(runRecord(runId), [itemRecord(runId, 'a')]);
      const { items } = await store.listItems(runId, { limit: 10 });
      expect(items.map((item) => item.itemId)).toEqual(['a']);
      expect(await client.exists(`died:{${runId}}:item:ghost`)).toBe(0);
      expect((await store.summary(runId)).counts.queued).toBe(1);
      expect(await client.ttl(`died:{${runId}}:claim`)).toBe(-1);
    } finally {
      await store.close();
      await client.quit();
    }
  });

  it('holds a run id for at most 15 s past the last renewal, renewing it while it writes', async () => {
    const client = new Redis(server.url);
    const store = new RedisPayoutRunStore({ client, keyPrefix: 'lease:' });
    const runId = 'renewed';
    const claimKey = `lease:{${runId}}:claim`;
    const scripts = client as unknown as Record<string, (...args: unknown[]) => Promise<number>>;
    const writeItems = scripts.malipoRunsCreateItems.bind(client);
    let firstTtl = 0;
    // The first chunk waits until the claim was renewed: a creation slower than one renewal.
    const spy = jest
      .spyOn(scripts, 'malipoRunsCreateItems')
      .mockImplementationOnce(async (...a) => {
        firstTtl = await client.pttl(claimKey);
        const firstExpiry = Date.now() + firstTtl;
        // Renewed: the claim now expires seconds later than it first would have.
        await waitFor(
          async () =>
            Date.now() + (await client.pttl(claimKey)) > firstExpiry + 1_000 ? true : undefined,
          'the claim renewed',
        );
        return writeItems(...a);
      });
    try {
      await store.createRun(runRecord(runId), [itemRecord(runId, 'a')]);
      expect(firstTtl).toBeGreaterThan(0);
      expect(firstTtl).toBeLessThanOrEqual(15_000);
      expect(await store.getRun(runId)).toMatchObject({ runId });
    } finally {
      spy.mockRestore();
      await store.close();
      await client.quit();
    }
  });

  it('leaves nothing for ever of a creation that died before its run was written', async () => {
    const client = new Redis(server.url);
    const store = new RedisPayoutRunStore({ client, keyPrefix: 'killed:' });
    const runId = 'killed-mid-creation';
    // The process dies as the run's items are to be kept: every item is in Redis by then, and
    // nothing of it cleans up.
    const scripts = client as unknown as Record<string, () => Promise<number>>;
    const createScript = jest
      .spyOn(scripts, 'malipoRunsPersistItems')
      .mockRejectedValue(new Error('killed'));
    // The removal before its items are written runs; the ones after the failure do not.
    const removal = scripts.malipoRunsRemoveUnfinishedCreation.bind(client);
    const cleanups = [
      jest
        .spyOn(scripts, 'malipoRunsRemoveUnfinishedCreation')
        .mockImplementationOnce(removal)
        .mockRejectedValue(new Error('killed')),
      jest.spyOn(scripts, 'malipoRunsReleaseClaim').mockRejectedValue(new Error('killed')),
    ];
    try {
      const items = Array.from({ length: 1_200 }, (_, index) => itemRecord(runId, `i${index}`));
      await expect(store.createRun(runRecord(runId), items)).rejects.toThrow('killed');
      const keys = await client.keys('killed:*');
      expect(keys.length).toBeGreaterThan(1_200);
      // Items hold phone numbers: each key goes with the creation's claim, none stays.
      const withoutExpiry = [];
      for (const key of keys) if ((await client.pttl(key)) < 0) withoutExpiry.push(key);
      expect(withoutExpiry).toEqual([]);
      expect(await store.getRun(runId)).toBeUndefined();
    } finally {
      createScript.mockRestore();
      for (const cleanup of cleanups) cleanup.mockRestore();
      await store.close();
      await client.quit();
    }
  });

  it('removes what a creation that failed as its run was written left; if it cannot, the next creation does', async () => {
    const client = new Redis(server.url);
    const store = new RedisPayoutRunStore({ client, keyPrefix: 'kept:' });
    const scripts = client as unknown as Record<string, () => Promise<number>>;
    const items = (runId: string) =>
      Array.from({ length: 1_200 }, (_, index) => itemRecord(runId, `i${index}`));
    const spies: jest.SpyInstance[] = [];
    try {
      spies.push(
        jest.spyOn(scripts, 'malipoRunsCreateRun').mockRejectedValueOnce(new Error('refused')),
      );
      await expect(store.createRun(runRecord('failed'), items('failed'))).rejects.toThrow(
        'refused',
      );
      expect(await client.keys('kept:{failed}:*')).toEqual([]);

      // A process that dies there cleans nothing: its kept items and their index stay, for the
      // next creation of the id to find.
      spies[0].mockRejectedValueOnce(new Error('refused'));
      const removal = scripts.malipoRunsRemoveUnfinishedCreation.bind(client);
      spies.push(
        jest
          .spyOn(scripts, 'malipoRunsRemoveUnfinishedCreation')
          // The removal before its items are written runs; the one after the failure does not.
          .mockImplementationOnce(removal)
          .mockRejectedValueOnce(new Error('died')),
        jest.spyOn(scripts, 'malipoRunsReleaseClaim').mockRejectedValueOnce(new Error('died')),
      );
      await expect(store.createRun(runRecord('died'), items('died'))).rejects.toThrow('refused');
      expect(await client.pttl('kept:{died}:item:i0')).toBe(-1);
      expect(await client.pttl('kept:{died}:order')).toBe(-1);
      await client.del('kept:{died}:claim');
      await store.createRun(runRecord('died'), [itemRecord('died', 'again')]);
      expect(await client.exists('kept:{died}:item:i0')).toBe(0);
      expect((await store.summary('died')).counts.queued).toBe(1);
    } finally {
      for (const spy of spies) spy.mockRestore();
      await store.close();
      await client.quit();
    }
  });

  it('writes no run whose creation outlived its claim: its first items may have expired', async () => {
    const client = new Redis(server.url);
    const store = new RedisPayoutRunStore({ client, keyPrefix: 'slow:' });
    const runId = 'slow-creation';
    const commands = client as unknown as {
      malipoRunsPersistItems: (...args: unknown[]) => Promise<number>;
    };
    const createScript = commands.malipoRunsPersistItems.bind(client);
    const spy = jest
      .spyOn(commands, 'malipoRunsPersistItems')
      .mockImplementation(async (...args) => {
        // The claim lapsed and another creation of the id took it meanwhile.
        await client.set(`slow:{${runId}}:claim`, 'another creation');
        return createScript(...args);
      });
    try {
      await expect(store.createRun(runRecord(runId), [itemRecord(runId, 'a')])).rejects.toThrow(
        'was not created: its creation lost its claim on the id',
      );
      expect(await store.getRun(runId)).toBeUndefined();
      expect(await client.pttl(`slow:{${runId}}:item:a`)).toBeGreaterThan(0);
    } finally {
      spy.mockRestore();
      await store.close();
      await client.quit();
    }
  });

  it.each([
    ['an item, before it is kept', 'malipoRunsPersistItems', 'item:i0'],
    ['the totals, before the run is written', 'malipoRunsCreateRun', 'totals'],
  ])(
    'writes no run when %s expired under a live claim (a creation slower than 10 minutes), and removes the rest',
    async (_, script, expiredKey) => {
      const client = new Redis(server.url);
      const store = new RedisPayoutRunStore({ client, keyPrefix: 'expired:' });
      const runId = `expired-${script}`;
      const scripts = client as unknown as Record<string, (...args: unknown[]) => Promise<number>>;
      const run = scripts[script].bind(client);
      const spy = jest.spyOn(scripts, script).mockImplementationOnce(async (...args) => {
        await client.del(`expired:{${runId}}:${expiredKey}`);
        return run(...args);
      });
      try {
        const items = Array.from({ length: 1_200 }, (_, index) => itemRecord(runId, `i${index}`));
        await expect(store.createRun(runRecord(runId), items)).rejects.toThrow(
          'writing it took longer than 10 minutes, and its first items expired',
        );
        expect(await store.getRun(runId)).toBeUndefined();
        expect(await client.keys(`expired:{${runId}}:*`)).toEqual([]);
      } finally {
        spy.mockRestore();
        await store.close();
        await client.quit();
      }
    },
  );

  it('creates a run of no items', async () => {
    const store = new RedisPayoutRunStore({ url: server.url, keyPrefix: 'empty:' });
    try {
      await store.createRun(runRecord('empty'), []);
      expect(await store.getRun('empty')).toMatchObject({ runId: 'empty', state: 'running' });
      expect((await store.listItems('empty', { limit: 10 })).items).toEqual([]);
    } finally {
      await store.close();
    }
  });

  it('stops writing items once its claim went to another creation: nothing mixes into that run', async () => {
    const client = new Redis(server.url);
    const store = new RedisPayoutRunStore({ client, keyPrefix: 'overtaken:' });
    const runId = 'overtaken';
    const commands = client as unknown as {
      malipoRunsCreateItems: (...args: unknown[]) => Promise<number>;
    };
    const writeItems = commands.malipoRunsCreateItems.bind(client);
    let chunks = 0;
    const spy = jest
      .spyOn(commands, 'malipoRunsCreateItems')
      .mockImplementation(async (...args) => {
        chunks += 1;
        // After the first chunk the claim lapsed, and another creation of the id took it.
        if (chunks === 2) await client.set(`overtaken:{${runId}}:claim`, 'another creation');
        return writeItems(...args);
      });
    try {
      const items = Array.from({ length: 1_200 }, (_, index) => itemRecord(runId, `i${index}`));
      await expect(store.createRun(runRecord(runId), items)).rejects.toThrow(
        'its creation lost its claim on the id',
      );
      expect(chunks).toBe(2);
      expect(await client.exists(`overtaken:{${runId}}:item:i499`)).toBe(1);
      expect(await client.pttl(`overtaken:{${runId}}:item:i499`)).toBeGreaterThan(0);
      expect(await client.exists(`overtaken:{${runId}}:item:i500`)).toBe(0);
      expect(await client.exists(`overtaken:{${runId}}:totals`)).toBe(0);
      expect(await store.getRun(runId)).toBeUndefined();
    } finally {
      spy.mockRestore();
      await store.close();
      await client.quit();
    }
  });

  it('writes a run whole: a run hash an older version left half-written is no bar to the id', async () => {
    const client = new Redis(server.url);
    const store = new RedisPayoutRunStore({ client, keyPrefix: 'half:' });
    const runId = 'half-written';
    try {
      // An older version wrote the run's fixed part and its state in two steps, and died between.
      await client.hset(`half:{${runId}}:run`, 'static', '{"runId":"half-written"}');
      expect(await store.getRun(runId)).toBeUndefined();
      await store.createRun(runRecord(runId), [itemRecord(runId, 'a')]);
      expect(await store.getRun(runId)).toMatchObject({ runId, state: 'running' });
      expect(await client.hkeys(`half:{${runId}}:run`)).toEqual(
        expect.arrayContaining(['static', 'state', 'updatedAt', 'rateLimited']),
      );
      // A run that is there stays the one run of its id.
      await client.del(`half:{${runId}}:claim`);
      await expect(
        store.createRun(runRecord(runId), [itemRecord(runId, 'b')]),
      ).rejects.toBeInstanceOf(PayoutRunExistsError);
      const { items } = await store.listItems(runId, { limit: 10 });
      expect(items.map((item) => item.itemId)).toEqual(['a']);
    } finally {
      await store.close();
      await client.quit();
    }
  });

  it('sets a TTL on every key of a run once it finished, and on a state set made after', async () => {
    const client = new Redis(server.url);
    const store = new RedisPayoutRunStore({
      client,
      keyPrefix: 'ttl:',
      finishedRunTtlSeconds: 3600,
    });
    const runId = 'expiring';
    // More items than the scripts read in one page.
    const more = Array.from({ length: 1_100 }, (_, index) => itemRecord(runId, `more${index}`));
    await store.createRun(runRecord(runId), [
      itemRecord(runId, 'a'),
      itemRecord(runId, 'b'),
      ...more,
    ]);
    await store.updateItem(runId, 'a', { state: 'in_doubt', reason: 'r' });
    await store.updateItem(runId, 'b', { state: 'refused', reason: 'r' });
    for (const key of await client.keys('ttl:*')) expect(await client.ttl(key)).toBe(-1);
    await store.updateRun(runId, { state: 'completed', finishedAt: 'now' }, { unfinished: true });
    await store.updateItem(runId, 'a', { state: 'succeeded' }, ['in_doubt']);
    const keys = await client.keys('ttl:*');
    expect(keys).toEqual(expect.arrayContaining([`ttl:{${runId}}:state:succeeded`]));
    for (const key of keys) {
      const ttl = await client.ttl(key);
      expect([key, ttl > 0 && ttl <= 3600]).toEqual([key, true]);
    }
    await store.close();
    await client.quit();
  });

  it("sets a finished run's items' expiry a page at a time, and a read goes on after a failure", async () => {
    const client = new Redis(server.url);
    const store = new RedisPayoutRunStore({
      client,
      keyPrefix: 'pages:',
      finishedRunTtlSeconds: 600,
    });
    const runId = 'paged';
    const items = Array.from({ length: 2_500 }, (_, index) => itemRecord(runId, `i${index}`));
    await store.createRun(runRecord(runId), items);
    const commands = client as unknown as {
      malipoRunsExpireItems: (...args: unknown[]) => Promise<number>;
    };
    const expirePage = commands.malipoRunsExpireItems.bind(client);
    let pages = 0;
    const spy = jest.spyOn(commands, 'malipoRunsExpireItems').mockImplementation((...args) => {
      pages += 1;
      // Redis fails the finish's second page.
      return pages === 2 ? Promise.reject(new Error('Command timed out')) : expirePage(...args);
    });
    const withoutExpiry = async () => {
      let count = 0;
      for (const item of items) {
        if ((await client.pttl(`pages:{${runId}}:item:${item.itemId}`)) < 0) count += 1;
      }
      return count;
    };
    try {
      expect(
        await store.updateRun(
          runId,
          { state: 'completed', finishedAt: 'now' },
          { unfinished: true },
        ),
      ).toMatchObject({ state: 'completed', finishedAt: 'now' });
      expect(await withoutExpiry()).toBe(1_500);
      expect(await client.pttl(`pages:{${runId}}:run`)).toBeGreaterThan(0);

      expect(await store.getRun(runId)).toMatchObject({ finishedAt: 'now' });
      await waitFor(
        async () =>
          (await client.hexists(`pages:{${runId}}:run`, 'expiring')) === 0 ? true : undefined,
        "the items' expiry taken up by the read",
        30_000,
      );
      expect(await withoutExpiry()).toBe(0);
      expect(pages).toBeGreaterThanOrEqual(4);
    } finally {
      spy.mockRestore();
      await store.close();
      await client.quit();
    }
  });
});

import { Logger } from '@nestjs/common';
import { type Cluster, Redis } from 'ioredis';
import { engineContext, itemRecord, runRecord } from '../../../spec-support/payout-run-records';
import { RedisCluster } from '../../../spec-support/redis-cluster';
import { waitFor } from '../../../spec-support/wait-for';
import { payoutRunStoreConformance } from '../../testing/payout-run-store.conformance';
import type { PayoutRunsPayments } from '../payout-runs-payments';
import { type BullMQPayoutRunEngine, bullmqPayoutRunEngine } from './bullmq-payout-run-engine';
import { RedisPayoutRunStore } from './redis-payout-run.store';

describe('RedisPayoutRunStore on a real Redis Cluster (three redis-server nodes)', () => {
  let cluster: RedisCluster;
  let client: Cluster;
  let store: RedisPayoutRunStore;

  beforeAll(async () => {
    cluster = await RedisCluster.start();
    client = cluster.client();
    // Each run's keys share a hash tag of its id (docs/payout-runs.md): runs spread over the nodes.
    store = new RedisPayoutRunStore({ client: client as unknown as Redis });
  });
  afterAll(async () => {
    await store?.close();
    await client?.quit();
    await cluster?.close();
  });

  describe('passes the store conformance cases', () => {
    for (const check of payoutRunStoreConformance()) {
      it(check.name, () => check.run(store));
    }
  });

  it("keeps each item in its state's index when a reshard moves the run's slot under a change", async () => {
    const runId = 'resharded';
    await store.createRun(runRecord(runId), [
      itemRecord(runId, 'a'),
      itemRecord(runId, 'b'),
      itemRecord(runId, 'c'),
    ]);
    await store.updateItem(runId, 'b', { state: 'sending' }, ['queued']);
    const admins = cluster.nodes.map((node) => new Redis(node.url));
    try {
      const slot = Number(await admins[0].call('CLUSTER', 'KEYSLOT', `{${runId}}`));
      const counts = await Promise.all(
        admins.map((admin) => admin.call('CLUSTER', 'COUNTKEYSINSLOT', slot)),
      );
      const from = admins[counts.findIndex((count) => Number(count) > 0)];
      const to = admins.find((admin) => admin !== from) as Redis;
      const [fromId, toId] = await Promise.all([
        from.call('CLUSTER', 'MYID'),
        to.call('CLUSTER', 'MYID'),
      ]);
      // A reshard, as redis-cli makes one: the slot marked on both nodes, then its keys moved in
      // batches; the item's change comes after the first batch, which holds the item and the run.
      await to.call('CLUSTER', 'SETSLOT', slot, 'IMPORTING', String(fromId));
      await from.call('CLUSTER', 'SETSLOT', slot, 'MIGRATING', String(toId));
      const key = (name: string) => `malipo:runs:{${runId}}:${name}`;
      const migrate = (keys: string[]) =>
        from.call('MIGRATE', '127.0.0.1', String(to.options.port), '', 0, 5000, 'KEYS', ...keys);
      await migrate([key('run'), key('totals'), key('item:a')]);
      const retried = async () =>
        Number(/errorstat_TRYAGAIN:count=(\d+)/.exec(await from.info('errorstats'))?.[1] ?? 0);
      const retriedBefore = await retried();
      let settled = false;
      const change = store
        .updateItem(runId, 'a', { state: 'sending' }, ['queued'])
        .then(
          (item) => ({ item }),
          (error: unknown) => ({ error }),
        )
        .finally(() => (settled = true));
      // The change ran (on whichever node it was sent to) or was told to try again: its keys are
      // on two nodes.
      await waitFor(
        async () => (settled || (await retried()) > retriedBefore ? true : undefined),
        'the change ran or was retried',
      );
      const rest = (await from.call('CLUSTER', 'GETKEYSINSLOT', slot, 1000)) as string[];
      // Refused (BUSYKEY) if the change wrote a key of the slot on the importing node.
      await migrate(rest);
      // As redis-cli ends one: the importing node first, with an epoch above the others' (so that
      // gossip never takes the slot back), then the others; each node that still names another
      // owner is told again until every node names the new one (a busy machine is slow to agree,
      // and the client's redirections run out meanwhile).
      await to.call('CLUSTER', 'BUMPEPOCH');
      const ownerSeenBy = async (admin: Redis) => {
        const ranges = (await admin.call('CLUSTER', 'SLOTS')) as [
          number,
          number,
          [string, number],
        ][];
        return ranges.find(([first, last]) => first <= slot && slot <= last)?.[2][1];
      };
      for (const admin of [to, ...admins.filter((admin) => admin !== to)]) {
        await admin.call('CLUSTER', 'SETSLOT', slot, 'NODE', String(toId));
      }
      await waitFor(
        async () => {
          let agreed = true;
          for (const admin of admins) {
            if ((await ownerSeenBy(admin)) === to.options.port) continue;
            agreed = false;
            await admin
              .call('CLUSTER', 'SETSLOT', slot, 'NODE', String(toId))
              .catch(() => undefined);
          }
          return agreed ? true : undefined;
        },
        "every node naming the slot's new owner",
        30_000,
      );
      const outcome = await change;
      // Applied once the slot moved, or refused whole (Cluster redirections spent): never half.
      // Read until found: a busy machine's client may still follow its old map of the slots.
      const a = await waitFor(() => store.getItem(runId, 'a'), 'item a read after the reshard');
      expect(a.state).toBe('item' in outcome ? 'sending' : 'queued');
      for (const state of ['queued', 'sending'] as const) {
        const listed = (await store.listItems(runId, { states: [state], limit: 10 })).items;
        expect(listed.map((item) => item.itemId).sort()).toEqual(
          ['a', 'b', 'c']
            .filter((id) => (id === 'a' ? a.state : id === 'b' ? 'sending' : 'queued') === state)
            .sort(),
        );
      }
      expect((await store.summary(runId)).counts).toMatchObject({
        queued: a.state === 'queued' ? 2 : 1,
        sending: a.state === 'sending' ? 2 : 1,
      });
    } finally {
      admins.forEach((admin) => admin.disconnect());
    }
  });

  it("the BullMQ engine given a Cluster node's url says at boot that it needs one Redis", async () => {
    const errors = jest.spyOn(Logger.prototype, 'error').mockImplementation(() => undefined);
    const warnings = jest.spyOn(Logger.prototype, 'warn').mockImplementation(() => undefined);
    const engine = bullmqPayoutRunEngine({ url: cluster.nodes[0].url })(
      engineContext(
        store,
        { reconciler: { journalInMemory: false } } as unknown as PayoutRunsPayments,
        { settlementPollMs: 60_000 },
      ),
    ) as BullMQPayoutRunEngine;
    try {
      await engine.onApplicationBootstrap();
      await waitFor(
        () =>
          errors.mock.calls.some(([message]) =>
            String(message).includes('bullmqPayoutRunEngine is given a node of a Redis Cluster'),
          )
            ? true
            : undefined,
        'the boot error',
      );
    } finally {
      await engine.close();
      errors.mockRestore();
      warnings.mockRestore();
    }
  });
});

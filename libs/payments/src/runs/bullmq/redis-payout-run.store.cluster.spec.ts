import type { Cluster, Redis } from 'ioredis';
import { RedisCluster } from '../../../spec-support/redis-cluster';
import { payoutRunStoreConformance } from '../../testing/payout-run-store.conformance';
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
});

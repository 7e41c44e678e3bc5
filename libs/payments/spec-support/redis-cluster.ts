import { Cluster, Redis } from 'ioredis';
import { freePort, RedisServer } from './redis-server';

const SLOTS = 16_384;
const READY_TIMEOUT_MS = 30_000;

/**
 * A real Redis Cluster of `masters` nodes without replicas, on free loopback ports, persistence
 * off: each node a {@link RedisServer} started with `--cluster-enabled yes` and a bus port of its
 * own, the slots split evenly, the nodes met, and `cluster_state:ok` on every node before
 * {@link RedisCluster.start} resolves. A node that cannot start, or a cluster that does not form,
 * fails the test.
 */
export class RedisCluster {
  private constructor(readonly nodes: readonly RedisServer[]) {}

  /** The seed nodes of an ioredis `Cluster` client. */
  get startupNodes(): { host: string; port: number }[] {
    return this.nodes.map((node) => ({ host: '127.0.0.1', port: node.port }));
  }

  /** A new `Cluster` client of this cluster (the caller quits it). */
  client(): Cluster {
    return new Cluster(this.startupNodes, { lazyConnect: false });
  }

  static async start(masters = 3): Promise<RedisCluster> {
    const nodes: RedisServer[] = [];
    const busPorts: number[] = [];
    try {
      for (let index = 0; index < masters; index += 1) {
        const busPort = await freePort();
        busPorts.push(busPort);
        nodes.push(
          await RedisServer.start((dir) => [
            '--cluster-enabled',
            'yes',
            '--cluster-config-file',
            `${dir}/nodes.conf`,
            '--cluster-port',
            String(busPort),
            '--cluster-node-timeout',
            '5000',
          ]),
        );
      }
      const cluster = new RedisCluster(nodes);
      await cluster.form(busPorts);
      return cluster;
    } catch (error) {
      await Promise.all(nodes.map((node) => node.close()));
      throw error;
    }
  }

  /** Deletes every key on every node. */
  async flushAll(): Promise<void> {
    await Promise.all(this.nodes.map((node) => node.flushAll()));
  }

  async close(): Promise<void> {
    await Promise.all(this.nodes.map((node) => node.close()));
  }

  private async form(busPorts: readonly number[]): Promise<void> {
    const admins = this.nodes.map((node) => new Redis(node.port, '127.0.0.1'));
    try {
      const share = Math.ceil(SLOTS / admins.length);
      await Promise.all(
        admins.map((admin, index) =>
          admin.call(
            'CLUSTER',
            'ADDSLOTSRANGE',
            index * share,
            Math.min(SLOTS, (index + 1) * share) - 1,
          ),
        ),
      );
      for (let index = 1; index < admins.length; index += 1) {
        await admins[0].call(
          'CLUSTER',
          'MEET',
          '127.0.0.1',
          this.nodes[index].port,
          busPorts[index],
        );
      }
      const deadline = Date.now() + READY_TIMEOUT_MS;
      for (;;) {
        const infos = await Promise.all(admins.map((admin) => admin.call('CLUSTER', 'INFO')));
        const ready = infos.every(
          (info) =>
            /cluster_state:ok/.test(String(info)) &&
            new RegExp(`cluster_known_nodes:${admins.length}\\b`).test(String(info)),
        );
        if (ready) return;
        if (Date.now() > deadline) {
          throw new Error(`the Redis Cluster did not form within ${READY_TIMEOUT_MS} ms`);
        }
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    } finally {
      admins.forEach((admin) => admin.disconnect());
    }
  }
}

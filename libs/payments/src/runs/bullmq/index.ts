/**
 * `@malipo/nestjs/runs/bullmq`: payout runs on BullMQ and Redis, every instance of the app a
 * worker (docs/payout-runs.md, "Engines"). A subpath of its own so that `@malipo/nestjs/runs`
 * never loads `bullmq`; this one needs `bullmq` and `ioredis` (optional peer dependencies).
 */
export {
  BullMQPayoutRunEngine,
  bullmqPayoutRunEngine,
  payoutRunJobId,
  type BullMQPayoutRunEngineOptions,
} from './bullmq-payout-run-engine';
export { RedisPayoutRunStore, type RedisPayoutRunStoreOptions } from './redis-payout-run.store';

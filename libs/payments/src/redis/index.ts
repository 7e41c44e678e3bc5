/**
 * `@malipo/nestjs/redis`: the webhook store and the payments journal for several instances, on Redis (`ioredis`, an
 * optional peer dependency: only apps that import this entry point need it).
 */
export {
  RedisPaymentsWebhookStore,
  type RedisPaymentsWebhookStoreOptions,
} from './redis-payments-webhook.store';
export { RedisPaymentsJournal, type RedisPaymentsJournalOptions } from './redis-payments-journal';

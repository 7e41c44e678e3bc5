/**
 * `@malipo/nestjs/redis`: the webhook store for several instances, on Redis (`ioredis`, an
 * optional peer dependency: only apps that import this entry point need it).
 */
export {
  RedisPaymentsWebhookStore,
  type RedisPaymentsWebhookStoreOptions,
} from './redis-payments-webhook.store';

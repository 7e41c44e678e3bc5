/**
 * Every provider the modules give an app, printed as `console.log` prints it (at any depth) and
 * serialised as `JSON.stringify` does, holds no credential, key secret or Redis password: a team
 * that logs an injected service must not log the API password with it.
 */
import { inspect } from 'node:util';
import { Test } from '@nestjs/testing';
import { ModulesContainer } from '@nestjs/core';
import { Redis } from 'ioredis';
import { PaymentsModule } from '@malipo/nestjs';
import { RedisPaymentsJournal, RedisPaymentsWebhookStore } from '@malipo/nestjs/redis';
import { PayoutRunsModule } from '@malipo/nestjs/runs';
import { PaymentsWebhookModule } from '@malipo/nestjs/webhooks';
import { basicAuthorization } from '../../libs/payments/src/secret-redactor';
import { RedisServer } from '../../libs/payments/spec-support/redis-server';

const API_PASSWORD = 'api-Pa55word-47f1c';
const FINGERPRINT_SECRET = 'fingerprint-secret-9a0d2e';
const ITEM_KEY_SECRET = 'item-key-secret-3b8c61';
const REDIS_PASSWORD = 'redis-Pa55word-5e2a';
const PROXY_PASSWORD = 'proxy-Pa55word-c71d';

const SECRETS = [
  API_PASSWORD,
  basicAuthorization('api-user', API_PASSWORD).slice('Basic '.length),
  FINGERPRINT_SECRET,
  ITEM_KEY_SECRET,
  REDIS_PASSWORD,
  PROXY_PASSWORD,
];

/**
 * What a log line of `value` could show: `console.log` (depth 2), a deep `util.inspect` (depth 12), and
 * `JSON.stringify`.
 */
function printed(value: unknown): string {
  let json: string;
  try {
    json = JSON.stringify(value) ?? '';
  } catch (error) {
    json = String(error); // circular: nothing of the value is written
  }
  return `${inspect(value)}\n${inspect(value, { depth: 12 })}\n${json}`;
}

/**
 * Providers left out: Nest's own (its core module's, and a module ref: they print the whole
 * container, through which the options as the app wrote them), and those options themselves, the
 * app's own objects.
 */
const NOT_OURS =
  /^InternalCoreModule: |: (ModuleRef|ApplicationConfig|MetadataScanner|DiscoveryService|\w+Module|MalipoPayments:(moduleOptions|webhookOptionsSource|payoutRunsOptions))$/;

describe('printed providers hold no secret (e2e, redis-server)', () => {
  let redis: RedisServer;

  beforeAll(async () => {
    redis = await RedisServer.start();
    const admin = new Redis(redis.url);
    await admin.config('SET', 'requirepass', REDIS_PASSWORD);
    admin.disconnect();
  });
  afterAll(() => redis.close());

  it('shows none of them for any provider of PaymentsModule, the webhook and the runs modules', async () => {
    const redisUrl = redis.url.replace('redis://', `redis://:${REDIS_PASSWORD}@`);
    const moduleRef = await Test.createTestingModule({
      imports: [
        PaymentsModule.forRoot({
          apiUsername: 'api-user',
          apiPassword: API_PASSWORD,
          baseUrl: 'https://payments.example.com',
          defaultUsername: 'acme',
          journalFingerprintSecret: FINGERPRINT_SECRET,
          journal: new RedisPaymentsJournal({ url: redisUrl }),
          proxy: {
            host: 'proxy.example.com',
            port: 3128,
            auth: { username: 'proxy-user', password: PROXY_PASSWORD },
          },
        }),
        PaymentsWebhookModule.forRoot({ store: new RedisPaymentsWebhookStore({ url: redisUrl }) }),
        PayoutRunsModule.forRoot({ itemKeySecret: ITEM_KEY_SECRET }),
      ],
    }).compile();
    const app = await moduleRef.createNestApplication({ logger: false }).init();
    try {
      const instances = [...app.get(ModulesContainer).values()]
        .flatMap((module) =>
          [...module.providers.values()].map((wrapper) => ({
            name: `${module.metatype.name}: ${String(wrapper.name)}`,
            instance: wrapper.instance,
          })),
        )
        .filter(({ name }) => !NOT_OURS.test(name));
      const leaks = instances
        .map(({ name, instance }) => ({
          name,
          found: SECRETS.filter((secret) => printed(instance).includes(secret)),
        }))
        .filter(({ found }) => found.length > 0);

      expect(instances.length).toBeGreaterThan(20);
      expect(leaks).toEqual([]);
    } finally {
      await app.close();
    }
  });
});

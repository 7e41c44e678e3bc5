import { PaymentsModule } from './payments.module';
import { PayoutRunsModule } from './runs/payout-runs.module';
import { PaymentsWebhookModule } from './webhooks/payments-webhook.module';
import { PaymentsValidationError } from './errors';
import { InMemoryPaymentsJournal } from './journal/in-memory-payments-journal';
import { RedisPaymentsJournal } from './redis/redis-payments-journal';
import { RedisPaymentsWebhookStore } from './redis/redis-payments-webhook.store';
import { bullmqPayoutRunEngine } from './runs/bullmq/bullmq-payout-run-engine';
import { RedisPayoutRunStore } from './runs/bullmq/redis-payout-run.store';
import { InMemoryPayoutRunStore } from './runs/in-memory-payout-run.store';
import { InMemoryPaymentsWebhookStore } from './webhooks/payments-webhook.store';

/** What `make` threw, which must be thrown before any connection is made. */
function thrownBy(make: () => unknown): unknown {
  try {
    make();
  } catch (error) {
    return error;
  }
  throw new Error('nothing was thrown');
}

// No Redis is listening on this port: a check that connected first would hang or log, not throw.
const url = 'redis://127.0.0.1:1';

describe('the options of the journals, stores and engines an app constructs', () => {
  it.each([
    [
      'InMemoryPaymentsJournal',
      () => new InMemoryPaymentsJournal({ maxEntries: 0 }),
      'maxEntries',
      'isPositiveInteger',
    ],
    [
      'InMemoryPaymentsJournal',
      () => new InMemoryPaymentsJournal({ maxEntires: 5 } as never),
      'maxEntires',
      'whitelist',
    ],
    [
      'RedisPaymentsJournal',
      () => new RedisPaymentsJournal({ url, ttlMs: 1.5 }),
      'ttlMs',
      'isPositiveInteger',
    ],
    [
      'RedisPaymentsJournal',
      () => new RedisPaymentsJournal({ url, keyprefix: 'a:' } as never),
      'keyprefix',
      'whitelist',
    ],
    [
      'RedisPaymentsJournal',
      () => new RedisPaymentsJournal({ url, waitForReplicas: -1 }),
      'waitForReplicas',
      'isNonNegativeInteger',
    ],
    [
      'RedisPaymentsJournal',
      () => new RedisPaymentsJournal({ url, waitForReplicas: 1, replicaTimeoutMs: 0 }),
      'replicaTimeoutMs',
      'isPositiveInteger',
    ],
    [
      'RedisPaymentsJournal',
      () => new RedisPaymentsJournal({ url, client: {} as never }),
      'client',
      'isExclusive',
    ],
    [
      'RedisPaymentsJournal',
      // A number read from a config file: a key prefix of keys, not a number.
      () => new RedisPaymentsJournal({ url, keyPrefix: 7 as never }),
      'keyPrefix',
      'isString',
    ],
    [
      'RedisPaymentsWebhookStore',
      () => new RedisPaymentsWebhookStore({ url, keyPrefix: 7 as never }),
      'keyPrefix',
      'isString',
    ],
    [
      'RedisPayoutRunStore',
      () => new RedisPayoutRunStore({ url, keyPrefix: 7 as never }),
      'keyPrefix',
      'isString',
    ],
    [
      'BullMQPayoutRunEngine',
      () => bullmqPayoutRunEngine({ url, prefix: 7 as never }),
      'prefix',
      'isString',
    ],
    [
      'RedisPaymentsJournal',
      // An env var set to nothing: the keys would sit beside every other app's.
      () => new RedisPaymentsJournal({ url, keyPrefix: '' }),
      'keyPrefix',
      'isNotEmpty',
    ],
    [
      'RedisPayoutRunStore',
      () => new RedisPayoutRunStore({ url, keyPrefix: '' }),
      'keyPrefix',
      'isNotEmpty',
    ],
    [
      'RedisPaymentsWebhookStore',
      () => new RedisPaymentsWebhookStore({ url, doneTtlMs: -1 }),
      'doneTtlMs',
      'isPositiveInteger',
    ],
    [
      'RedisPaymentsWebhookStore',
      () => new RedisPaymentsWebhookStore({ url, ttlMs: 5 } as never),
      'ttlMs',
      'whitelist',
    ],
    [
      'RedisPayoutRunStore',
      () => new RedisPayoutRunStore({ url, finishedRunTtlSeconds: -1 }),
      'finishedRunTtlSeconds',
      'isNonNegativeInteger',
    ],
    [
      'RedisPayoutRunStore',
      () => new RedisPayoutRunStore({ url, prefix: 'runs:' } as never),
      'prefix',
      'whitelist',
    ],
    [
      'InMemoryPayoutRunStore',
      () => new InMemoryPayoutRunStore({ maxFinishedRuns: Number.NaN }),
      'maxFinishedRuns',
      'isNonNegativeInteger',
    ],
    [
      'InMemoryPayoutRunStore',
      () => new InMemoryPayoutRunStore({ retainFinished: 5 } as never),
      'retainFinished',
      'whitelist',
    ],
    [
      'InMemoryPaymentsWebhookStore',
      () => new InMemoryPaymentsWebhookStore(0),
      'capacity',
      'isPositiveInteger',
    ],
    [
      'BullMQPayoutRunEngine',
      () => bullmqPayoutRunEngine({ url, lockDurationMs: 0 }),
      'lockDurationMs',
      'isPositiveInteger',
    ],
    [
      'BullMQPayoutRunEngine',
      () => bullmqPayoutRunEngine({ url, jobAttempts: 2.5 }),
      'jobAttempts',
      'isPositiveInteger',
    ],
    [
      'BullMQPayoutRunEngine',
      () => bullmqPayoutRunEngine({ url, prefix: 'a:b' }),
      'prefix',
      'matches',
    ],
    [
      'BullMQPayoutRunEngine',
      () => bullmqPayoutRunEngine({ url, keyPrefix: 'x' } as never),
      'keyPrefix',
      'whitelist',
    ],
  ])('%s refuses a bad %s at once, naming it and its rule', (owner, make, field, rule) => {
    const thrown = thrownBy(make);
    expect(thrown).toBeInstanceOf(PaymentsValidationError);
    expect(thrown).toMatchObject({
      target: `${owner}Options`,
      errors: [{ field, rule, message: expect.stringContaining(field) as string }],
    });
  });

  it('takes the defaults and every documented option', () => {
    expect(new InMemoryPaymentsJournal({ maxEntries: 10 }).size).toBe(0);
    expect(
      () => new InMemoryPayoutRunStore({ retainFinishedMs: 0, maxFinishedRuns: 0 }),
    ).not.toThrow();
    expect(() =>
      bullmqPayoutRunEngine({
        url,
        prefix: 'p',
        lockDurationMs: 1,
        stalledIntervalMs: 1,
        jobAttempts: 1,
        jobBackoffMs: 1,
        setupTimeoutMs: 1,
      }),
    ).not.toThrow();
  });
});

describe('forRootAsync without a source of options', () => {
  it.each([
    ['PaymentsModule', (options: object) => PaymentsModule.forRootAsync(options as never)],
    [
      'PaymentsWebhookModule',
      (options: object) => PaymentsWebhookModule.forRootAsync(options as never),
    ],
    ['PayoutRunsModule', (options: object) => PayoutRunsModule.forRootAsync(options as never)],
  ])('%s refuses it at once, naming what is missing', (moduleName, forRootAsync) => {
    const refusal = thrownBy(() => forRootAsync({ inject: [] }));
    expect(refusal).toBeInstanceOf(PaymentsValidationError);
    expect(refusal).toMatchObject({
      target: `${moduleName}AsyncOptions`,
      errors: [{ field: 'useFactory', rule: 'isDefined' }],
    });
    expect(() => forRootAsync({ useFactory: () => ({}) })).not.toThrow();
  });
});

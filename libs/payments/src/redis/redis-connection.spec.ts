import { inspect } from 'node:util';
import { Redis } from 'ioredis';
import { RedisServer } from '../../spec-support/redis-server';
import { createPaymentsClient } from '../create-payments-client';
import { PaymentsJournalError } from '../errors';
import { RedisPaymentsJournal } from './redis-payments-journal';
import { RedisPaymentsWebhookStore } from './redis-payments-webhook.store';

const PASSWORD = 'right-redis-password-41';
const WRONG = 'Wr0ng-Redis-Pass-777';

/** Every way an app or its logger may show `error`: none may hold the Redis password. */
function shown(error: unknown): string {
  const fields = error instanceof Error ? { ...error, stack: error.stack } : error;
  return [inspect(error, { depth: 20 }), JSON.stringify(fields), String(error)].join('\n');
}

/** The rejection of `promise`, which must reject. */
async function rejection(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    () => {
      throw new Error('it did not reject');
    },
    (error: unknown) => error,
  );
}

describe('Redis connections of the library: a refused password stays out of every error', () => {
  let server: RedisServer;
  let wrongUrl: string;

  beforeAll(async () => {
    server = await RedisServer.start();
    const admin = new Redis(server.url);
    await admin.config('SET', 'requirepass', PASSWORD);
    await admin.quit();
    wrongUrl = `redis://default:${WRONG}@127.0.0.1:${server.port}`;
  });
  afterAll(() => server.close());

  it('a journaled call refused before sending, and the reconciler, carry no password', async () => {
    const client = createPaymentsClient({
      apiUsername: 'u',
      apiPassword: 'p',
      // Nothing listens here: the call must stop at the journal anyway.
      baseUrl: 'http://127.0.0.1:9',
      journal: new RedisPaymentsJournal({ url: wrongUrl }),
    });
    try {
      const call = await rejection(
        client.payouts.mpesa(
          { phoneNumber: '0712345678', amount: 100, narration: 'x', callbackUrl: 'https://a.b/c' },
          { idempotencyKey: 'redis-auth-1' },
        ),
      );
      expect(call).toBeInstanceOf(PaymentsJournalError);
      expect(call).toMatchObject({ code: 'JOURNAL_UNAVAILABLE', mayHaveExecuted: false });
      // The cause is Redis refusing the password: the test would prove nothing otherwise.
      expect(shown(call)).toMatch(/WRONGPASS|invalid username-password/);
      expect(shown(call)).not.toContain(WRONG);

      const listed = await rejection(client.reconciler.inDoubt());
      expect(shown(listed)).toMatch(/WRONGPASS|invalid username-password/);
      expect(shown(listed)).not.toContain(WRONG);
    } finally {
      await client.close();
    }
  });

  it('a client you give the store is guarded too, and the webhook store', async () => {
    const given = new Redis(wrongUrl, { maxRetriesPerRequest: 1, commandTimeout: 1000 });
    given.on('error', () => undefined);
    const journal = new RedisPaymentsJournal({ client: given });
    const webhooks = new RedisPaymentsWebhookStore({ url: wrongUrl });
    try {
      for (const failed of [
        await rejection(journal.get('any-key')),
        await rejection(webhooks.claim('any-event', 1000)),
      ]) {
        expect(shown(failed)).toMatch(/WRONGPASS|invalid username-password/);
        expect(shown(failed)).not.toContain(WRONG);
      }
    } finally {
      await journal.close();
      await webhooks.close();
      given.disconnect();
    }
  });
});

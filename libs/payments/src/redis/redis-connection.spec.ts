import { EventEmitter } from 'node:events';
import { type AddressInfo, createServer } from 'node:net';
import { inspect } from 'node:util';
import { Logger } from '@nestjs/common';
import { Redis } from 'ioredis';
import { RedisServer } from '../../spec-support/redis-server';
import { waitFor } from '../../spec-support/wait-for';
import { createPaymentsClient } from '../create-payments-client';
import { PaymentsJournalError, PaymentsValidationError } from '../errors';
import { connectRedis } from './redis-connection';
import { RedisPaymentsJournal } from './redis-payments-journal';
import { RedisPaymentsWebhookStore } from './redis-payments-webhook.store';
import { RedisPayoutRunStore } from '../runs/bullmq/redis-payout-run.store';

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

  it('logs refused credentials once, at error level, as such (not as an outage), without them', async () => {
    const errors = jest.spyOn(Logger.prototype, 'error').mockImplementation(() => undefined);
    const warnings = jest.spyOn(Logger.prototype, 'warn').mockImplementation(() => undefined);
    const { client } = connectRedis({ url: wrongUrl }, 'CredentialsSpec', 'nothing is stored');
    try {
      await rejection(client.get('k'));
      await rejection(client.get('k'));
      const logged = errors.mock.calls.map(([message]) => String(message));
      expect(logged).toHaveLength(1);
      expect(logged[0]).toMatch(/^Redis refused the user or password of this client \(WRONGPASS/);
      expect(logged[0]).toContain('nothing is stored until the url or connection options');
      expect(logged[0]).not.toContain(WRONG);
      expect(warnings.mock.calls.map(([message]) => String(message))).not.toContainEqual(
        expect.stringMatching(/unreachable/),
      );
    } finally {
      client.disconnect();
      errors.mockRestore();
      warnings.mockRestore();
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

  it('guards the node connections of a Cluster given as client, those it adds later too', async () => {
    // The shape of an ioredis Cluster the guard relies on: isCluster, nodes(), '+node'.
    const first = new Redis(wrongUrl, { lazyConnect: true, maxRetriesPerRequest: 1 });
    const later = new Redis(wrongUrl, { lazyConnect: true, maxRetriesPerRequest: 1 });
    for (const node of [first, later]) node.on('error', () => undefined);
    const cluster = Object.assign(new EventEmitter(), {
      isCluster: true,
      nodes: () => [first],
      sendCommand: (command: Parameters<Redis['sendCommand']>[0]) => first.sendCommand(command),
    });
    connectRedis({ client: cluster as unknown as Redis }, 'ClusterSpec', 'nothing works');
    cluster.emit('+node', later);
    try {
      for (const failed of [await rejection(first.get('k')), await rejection(later.get('k'))]) {
        expect(shown(failed)).toMatch(/WRONGPASS|invalid username-password/);
        expect(shown(failed)).not.toContain(WRONG);
      }
    } finally {
      first.disconnect();
      later.disconnect();
    }
  });

  it('refuses a URL it cannot read without repeating it (a password with # not encoded)', () => {
    const url = `redis://:Pa#ss-${WRONG}@127.0.0.1:${server.port}`;
    let thrown: unknown;
    try {
      new RedisPaymentsJournal({ url });
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(PaymentsValidationError);
    expect(thrown).toMatchObject({
      target: 'RedisPaymentsJournalOptions',
      errors: [{ field: 'url', rule: 'isUrl' }],
    });
    expect(shown(thrown)).toContain('percent-encode');
    expect(shown(thrown)).not.toContain(WRONG);
  });

  it.each([
    // A password `Xy7@Kq9#Tr` not encoded: the URL reads, with the host `Kq9`, which the logs
    // of the failed connection would name.
    ['an @ then a #', `redis://:Xy7@Kq9-${WRONG}#Tr@127.0.0.1:6379`],
    ['an @ then a /', `redis://:Xy7@Kq9-${WRONG}/Tr@127.0.0.1:6379`],
    ['another scheme', `http://:${WRONG}@127.0.0.1:6379`],
  ])('refuses a URL that reads, but not as meant (%s), without repeating it', (_, url) => {
    let thrown: unknown;
    try {
      new RedisPaymentsJournal({ url });
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toMatchObject({ errors: [{ field: 'url', rule: 'isUrl' }] });
    expect(shown(thrown)).not.toContain(WRONG);
  });

  it('refuses no url, client or connection: ioredis would take 127.0.0.1:6379', () => {
    const config = new Map<string, string>(); // REDIS_URL unset
    for (const make of [
      () => new RedisPaymentsJournal({ url: config.get('REDIS_URL') }),
      () => new RedisPaymentsWebhookStore({}),
      () => new RedisPayoutRunStore({ url: config.get('REDIS_URL') }),
    ]) {
      expect(make).toThrow(
        expect.objectContaining({
          name: 'PaymentsValidationError',
          errors: [expect.objectContaining({ field: 'url', rule: 'isDefined' })],
        }) as Error,
      );
    }
    // A database number is a path a Redis URL may have.
    const journal = new RedisPaymentsJournal({ url: `redis://127.0.0.1:${server.port}/2` });
    return journal.close();
  });

  it('refuses a URL given as a socket path, for every store, without repeating it or logging it', () => {
    const warnings = jest.spyOn(Logger.prototype, 'warn').mockImplementation(() => undefined);
    const path = `redis://:${WRONG}@127.0.0.1:${server.port}`;
    try {
      for (const make of [
        () => new RedisPaymentsJournal({ connection: { path } }),
        () => new RedisPaymentsWebhookStore({ connection: { path } }),
        () => new RedisPayoutRunStore({ connection: { path } }),
      ]) {
        let thrown: unknown;
        try {
          make();
        } catch (error) {
          thrown = error;
        }
        expect(thrown).toMatchObject({ errors: [{ field: 'connection', rule: 'isPath' }] });
        expect(shown(thrown)).not.toContain(WRONG);
      }
      expect(warnings).not.toHaveBeenCalled();
    } finally {
      warnings.mockRestore();
    }
  });

  it.each([
    ['refusing the credentials', (args: string) => `-WRONGPASS invalid password ${args}`],
    ['failing with an error of its own', (args: string) => `-ERR unknown ${args}`],
  ])(
    'keeps the password out of its log of a server %s that quotes the command (HELLO ... AUTH)',
    async (_, answer) => {
      const logged: string[] = [];
      const logs = (['warn', 'error'] as const).map((level) =>
        jest
          .spyOn(Logger.prototype, level)
          .mockImplementation((...args: unknown[]) => void logged.push(String(args[0]))),
      );
      // A server, or a proxy, that quotes whatever it is sent in its refusal.
      const quoting = createServer((socket) => {
        socket.on('data', (data: Buffer) => {
          const args = data
            .toString('latin1')
            .split('\r\n')
            .filter((part) => part !== '' && !/^[*$]/.test(part))
            .join(' ');
          socket.write(`${answer(args)}\r\n`);
        });
        socket.on('error', () => undefined);
      });
      await new Promise<void>((resolve) => quoting.listen(0, '127.0.0.1', resolve));
      const { port } = quoting.address() as AddressInfo;
      const store = new RedisPaymentsWebhookStore({
        url: `redis://:${WRONG}@127.0.0.1:${port}`,
        connection: { retryStrategy: () => null },
      });
      try {
        await store.claim('quoted', 1000).catch(() => undefined);
        await waitFor(() => (logged.length > 0 ? true : undefined), 'the log line');
        expect(logged.join('\n')).toContain('[REDACTED]');
        expect(logged.join('\n')).not.toContain(WRONG);
      } finally {
        logs.forEach((log) => log.mockRestore());
        await store.close();
        quoting.close();
      }
    },
  );
});

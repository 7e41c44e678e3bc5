import { startSandbox } from '../../apps/sandbox/src/sandbox';
import type { RunningSandbox } from '../../apps/sandbox/src/sandbox';
import { RecordingServer } from '../../libs/payments/spec-support/recording-server';
import { RedisServer } from '../../libs/payments/spec-support/redis-server';
import { waitFor } from '../../libs/payments/spec-support/wait-for';
import {
  callMoney,
  journalRejection,
  type JournalApp,
  MONEY_OPERATIONS,
  startJournalApp,
} from './journal-kit';

describe('the payments journal on Redis: Redis down', () => {
  let redis: RedisServer;
  let sandbox: RunningSandbox;
  /** Receives the sandbox's webhooks and settles nothing: the entries keep their state. */
  let webhooks: RecordingServer;
  let instance: JournalApp;

  beforeAll(async () => {
    redis = await RedisServer.start();
    sandbox = await startSandbox({ port: 0, logger: false, webhookDelayMs: 50 });
    webhooks = await RecordingServer.start();
    // A command Redis does not answer fails after 3 s (the library's default is 1 s): short
    // enough for the hang to be seen, long enough for a busy machine's stalls not to be.
    instance = await startJournalApp({
      sandbox,
      redisUrl: redis.url,
      journal: { connection: { commandTimeout: 3000 } },
    });
    // Connected before the outages, so that a slow first connection is not taken for one.
    await waitFor(
      () =>
        instance.journal.client.ping().then(
          () => true,
          () => undefined,
        ),
      'the journal to connect to Redis',
      30_000,
    );
  });
  afterAll(async () => {
    redis?.thaw();
    await instance?.close();
    await webhooks?.close();
    await sandbox?.close();
    await redis?.close();
  });

  const callbackUrl = () => `${webhooks.url}/hooks`;
  const call = (operation: (typeof MONEY_OPERATIONS)[number], idempotencyKey: string) =>
    callMoney(instance.client, operation, { callbackUrl: callbackUrl() }, { idempotencyKey });
  const posts = async () =>
    (await sandbox.control.requests()).filter((request) => request.method === 'POST');
  /** The entries of `keys`, read once Redis answers again (the client reconnects by itself). */
  const entriesOf = (keys: string[]) =>
    waitFor(
      () =>
        Promise.all(keys.map((key) => instance.journal.get(key))).then(
          (entries) => entries,
          () => undefined,
        ),
      'Redis to answer the journal again',
      30_000,
    );

  /** Calls every operation under `keys`; each must be refused unsent by the journal. */
  async function expectRefusedUnsent(keys: string[]): Promise<void> {
    const postsBefore = (await posts()).length;
    const errors = await Promise.all(
      MONEY_OPERATIONS.map((operation, i) => journalRejection(call(operation, keys[i]))),
    );
    for (const [i, error] of errors.entries()) {
      expect({
        operation: error.operation,
        idempotencyKey: error.idempotencyKey,
        code: error.code,
        mayHaveExecuted: error.mayHaveExecuted,
        attempts: error.attempts,
        entry: error.entry,
      }).toEqual({
        operation: MONEY_OPERATIONS[i],
        idempotencyKey: keys[i],
        code: 'JOURNAL_UNAVAILABLE',
        mayHaveExecuted: false,
        attempts: 0,
        entry: undefined,
      });
    }
    // Nothing reached the sandbox: no request under these keys, and none at all meanwhile.
    expect((await posts()).slice(postsBefore)).toEqual([]);
  }

  /** Calls every operation under `keys` now that Redis is back: each is sent once and answered. */
  async function expectSentOnce(keys: string[]): Promise<void> {
    const answers = await Promise.all(
      MONEY_OPERATIONS.map((operation, i) => call(operation, keys[i])),
    );
    for (const answer of answers) {
      expect(answer.replayed).toBeUndefined();
      expect(answer.transactionReference).toEqual(expect.any(String));
    }
    const sent = await posts();
    for (const key of keys) {
      expect(sent.filter((request) => request.idempotencyKey === key)).toHaveLength(1);
    }
    const entries = await entriesOf(keys);
    expect(entries.map((entry) => entry?.state)).toEqual(keys.map(() => 'accepted'));
    // An intent that landed after its call was refused says so: never that it may have executed.
    for (const entry of entries) {
      for (const earlier of entry!.calls.slice(0, -1)) {
        expect(earlier).toMatchObject({ outcome: 'refused', mayHaveExecuted: false });
      }
    }
  }

  it('refuses money-moving calls unsent while Redis is stopped; after its restart they work and no entry was lost', async () => {
    // Before the outage: one entry per operation.
    const before = MONEY_OPERATIONS.map((operation) => `before-stop-${operation}`);
    await Promise.all(MONEY_OPERATIONS.map((operation, i) => call(operation, before[i])));
    const written = await entriesOf(before);
    expect(written.map((entry) => entry?.state)).toEqual(before.map(() => 'accepted'));

    await redis.stop();
    const during = MONEY_OPERATIONS.map((operation) => `during-stop-${operation}`);
    await expectRefusedUnsent(during);
    // Look-ups are not journaled: they still work with the journal down.
    const reference = written[0]!.reference!;
    await expect(instance.client.transactions.status(reference)).resolves.toMatchObject({
      code: reference,
    });

    await redis.restart();
    // Nothing lost: every entry written before the outage is there, unchanged.
    expect(await entriesOf(before)).toEqual(written);
    // The calls refused during the outage were never sent: sent now, once each.
    await expectSentOnce(during);
    expect(await entriesOf(before)).toEqual(written);
  }, 60_000);

  it('refuses money-moving calls unsent while Redis hangs; once it answers again they work and no entry was lost', async () => {
    const before = MONEY_OPERATIONS.map((operation) => `before-freeze-${operation}`);
    await Promise.all(MONEY_OPERATIONS.map((operation, i) => call(operation, before[i])));
    const written = await entriesOf(before);

    redis.freeze();
    const during = MONEY_OPERATIONS.map((operation) => `during-freeze-${operation}`);
    try {
      await expectRefusedUnsent(during);
      // Redis hangs on until the journal gave up marking those calls unsent: their intents,
      // written to the frozen server's socket, land when it wakes up and read `started`.
      await waitFor(
        () => {
          const givenUp = instance.logs.filter((line) =>
            during.some((key) => line.includes(`could not record that the call ${key} ended`)),
          );
          return givenUp.length === during.length ? true : undefined;
        },
        'the journal to give up marking the refused calls unsent',
        30_000,
      );
    } finally {
      redis.thaw();
    }

    expect(await entriesOf(before)).toEqual(written);
    // The same process knows these calls were never sent: the same keys send them now, once.
    await expectSentOnce(during);
    expect(await entriesOf(before)).toEqual(written);
  }, 60_000);
});

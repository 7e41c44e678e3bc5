import { createPaymentsClient, type PaymentsClient, PaymentsJournalError } from '@malipo/nestjs';
import { startSandbox } from '../../apps/sandbox/src/sandbox';
import type { RunningSandbox } from '../../apps/sandbox/src/sandbox';
import { RecordingServer } from '../../libs/payments/spec-support/recording-server';
import { RedisServer } from '../../libs/payments/spec-support/redis-server';
import { callMoney, MONEY_OPERATIONS, patientJournal } from './journal-kit';

/** Keys each called by both instances at once. */
const KEYS = 60;

describe('the payments journal on Redis: two instances calling with one key at once', () => {
  let redis: RedisServer;
  let sandbox: RunningSandbox;
  let webhooks: RecordingServer;
  let instances: PaymentsClient[];

  beforeAll(async () => {
    redis = await RedisServer.start();
    sandbox = await startSandbox({ port: 0, logger: false, webhookDelayMs: 50 });
    webhooks = await RecordingServer.start();
    // Two instances of one app: each its own client and journal connection, one Redis.
    instances = [1, 2].map(() =>
      createPaymentsClient({
        ...sandbox.credentials,
        baseUrl: sandbox.url,
        journal: patientJournal(redis.url),
      }),
    );
  });
  afterAll(async () => {
    await Promise.all((instances ?? []).map((instance) => instance.close()));
    await webhooks?.close();
    await sandbox?.close();
    await redis?.close();
  });

  it('sends one request per key; the other call is refused IN_PROGRESS or answered from the journal', async () => {
    const keys = Array.from({ length: KEYS }, (_, i) => `together-${i}`);
    const operationOf = (i: number) => MONEY_OPERATIONS[i % MONEY_OPERATIONS.length];
    const request = { callbackUrl: `${webhooks.url}/hooks` };
    // Both calls of a key start in the same turn of the event loop, one per instance, each on its
    // own connection; which asks first alternates, and Redis decides whose intent lands first.
    const outcomes = await Promise.all(
      keys.map(async (idempotencyKey, i) => {
        const call = (instance: PaymentsClient) =>
          callMoney(instance, operationOf(i), request, { idempotencyKey });
        if (i % 2 === 0) return Promise.allSettled(instances.map(call));
        const [second, first] = await Promise.allSettled([instances[1], instances[0]].map(call));
        return [first, second];
      }),
    );

    const requests = await sandbox.control.requests();
    const ledger = await sandbox.control.transactions();
    const tally = { sentByFirst: 0, sentBySecond: 0, replayed: 0, inProgress: 0 };
    for (const [i, idempotencyKey] of keys.entries()) {
      const [one, two] = outcomes[i];
      const sent = [one, two].filter(
        (outcome) => outcome.status === 'fulfilled' && outcome.value.replayed === undefined,
      );
      const other = [one, two].find((outcome) => !sent.includes(outcome))!;
      // Exactly one of the two calls was sent, and answered.
      expect(sent).toHaveLength(1);
      const reference = (sent[0] as PromiseFulfilledResult<Record<string, unknown>>).value
        .transactionReference;
      if (sent[0] === one) tally.sentByFirst += 1;
      else tally.sentBySecond += 1;
      if (other.status === 'fulfilled') {
        expect(other.value).toMatchObject({ replayed: true, transactionReference: reference });
        tally.replayed += 1;
      } else {
        const error: unknown = other.reason;
        expect(error).toBeInstanceOf(PaymentsJournalError);
        expect(error).toMatchObject({
          code: 'IN_PROGRESS',
          idempotencyKey,
          mayHaveExecuted: true,
          attempts: 0,
          entry: { idempotencyKey, state: 'started' },
        });
        tally.inProgress += 1;
      }
      // One request on the wire, one execution.
      expect(
        requests.filter((r) => r.method === 'POST' && r.idempotencyKey === idempotencyKey),
      ).toHaveLength(1);
      expect(
        ledger.filter((t) => t.idempotencyKey === idempotencyKey).map((t) => t.reference),
      ).toEqual([reference]);
    }
    console.log(
      `two instances, ${KEYS} keys called by both at once: each sent once (${tally.sentByFirst} ` +
        `by the first instance, ${tally.sentBySecond} by the second); the other call ` +
        `${tally.inProgress} times IN_PROGRESS, ${tally.replayed} times answered from the journal`,
    );

    // Once the sends ended, each key is answered from the journal by both instances.
    for (const [i, idempotencyKey] of keys.entries()) {
      const again = await Promise.all(
        instances.map((instance) =>
          callMoney(instance, operationOf(i), request, { idempotencyKey }),
        ),
      );
      expect(again.map((answer) => answer.replayed)).toEqual([true, true]);
    }
    const posts = (await sandbox.control.requests()).filter((r) => r.method === 'POST');
    expect(posts).toHaveLength(KEYS);
  }, 60_000);
});

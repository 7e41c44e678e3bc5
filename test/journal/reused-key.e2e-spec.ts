import type { PaymentsClient } from '@malipo/nestjs';
import { createPaymentsClient, PaymentsValidationError } from '@malipo/nestjs';
import { startSandbox } from '../../apps/sandbox/src/sandbox';
import type { RunningSandbox } from '../../apps/sandbox/src/sandbox';
import { RecordingServer } from '../../libs/payments/spec-support/recording-server';
import { RedisServer } from '../../libs/payments/spec-support/redis-server';
import {
  callMoney,
  executionsOf,
  MONEY_OPERATIONS,
  patientJournal,
  postsOf,
  rejection,
} from './journal-kit';

describe('the payments journal on Redis: a key reused for another amount', () => {
  let redis: RedisServer;
  let sandbox: RunningSandbox;
  let webhooks: RecordingServer;
  /** Two instances of one app: each its own client and journal connection, one Redis. */
  let first: PaymentsClient;
  let second: PaymentsClient;

  beforeAll(async () => {
    redis = await RedisServer.start();
    sandbox = await startSandbox({ port: 0, logger: false, webhookDelayMs: 50 });
    webhooks = await RecordingServer.start();
    [first, second] = [1, 2].map(() =>
      createPaymentsClient({
        ...sandbox.credentials,
        baseUrl: sandbox.url,
        journal: patientJournal(redis.url),
      }),
    );
  });
  afterAll(async () => {
    await Promise.all([first?.close(), second?.close()]);
    await webhooks?.close();
    await sandbox?.close();
    await redis?.close();
  });

  it.each(MONEY_OPERATIONS)(
    '%s: refused before sending, by the instance that made the call and by another one',
    async (operation) => {
      const idempotencyKey = `reused-${operation}`;
      const request = { callbackUrl: `${webhooks.url}/hooks` };
      const answer = await callMoney(first, operation, request, { idempotencyKey });
      const entry = await first.reconciler.get(idempotencyKey);
      expect(entry).toMatchObject({ state: 'accepted', reference: answer.transactionReference });

      for (const client of [first, second]) {
        const error = await rejection(
          callMoney(client, operation, { ...request, amount: 11 }, { idempotencyKey }),
        );
        expect(error).toBeInstanceOf(PaymentsValidationError);
        expect((error as PaymentsValidationError).errors).toEqual([
          expect.objectContaining({ field: 'idempotencyKey', rule: 'reused' }),
        ]);
      }

      // Only the first call reached the sandbox and executed; its entry is as it was.
      expect(await postsOf(sandbox, idempotencyKey)).toHaveLength(1);
      expect(
        (await executionsOf(sandbox, idempotencyKey)).map((execution) => execution.reference),
      ).toEqual([answer.transactionReference]);
      expect(await second.reconciler.get(idempotencyKey)).toEqual(
        await first.reconciler.get(idempotencyKey),
      );
    },
  );
});

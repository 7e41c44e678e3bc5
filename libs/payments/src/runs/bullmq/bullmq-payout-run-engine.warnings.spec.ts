import { Logger } from '@nestjs/common';
import { engineContext } from '../../../spec-support/payout-run-records';
import type { PayoutRunsPayments } from '../payout-runs-payments';
import { type BullMQPayoutRunEngine, bullmqPayoutRunEngine } from './bullmq-payout-run-engine';
import type { RedisPayoutRunStore } from './redis-payout-run.store';

const PASSWORD = 'engine-redis-Pw-7731';

describe("BullMQPayoutRunEngine's warnings of BullMQ's own connections", () => {
  it('keep the Redis password out of an error that quotes the refused command', async () => {
    const warnings = jest.spyOn(Logger.prototype, 'warn').mockImplementation(() => undefined);
    const engine = bullmqPayoutRunEngine({
      // Nothing listens there: the engine's own client only retries in the background.
      url: `redis://:${PASSWORD}@127.0.0.1:1`,
      connection: { lazyConnect: true },
    })(
      // Never read here.
      engineContext({} as RedisPayoutRunStore, {} as PayoutRunsPayments),
    ) as BullMQPayoutRunEngine;
    try {
      const warn = (
        engine as unknown as { bullMQWarning(runId: string): (error: Error) => void }
      ).bullMQWarning('r');
      // What Redis answers a client that authenticates to a server without a password.
      warn(new Error(`ERR AUTH ${PASSWORD} called without any password configured`));
      const logged = warnings.mock.calls.map(([message]) => String(message)).join('\n');
      expect(logged).toContain('BullMQ: ERR AUTH [REDACTED] called');
      expect(logged).not.toContain(PASSWORD);
    } finally {
      await engine.close();
      warnings.mockRestore();
    }
  });
});

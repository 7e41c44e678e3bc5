import { itemRecord, runRecord } from '../../spec-support/payout-run-records';
import { InMemoryPayoutRunStore } from './in-memory-payout-run.store';
import { InProcessPayoutRunEngine } from './in-process-payout-run-engine';
import type { PayoutRunEvent } from './payout-run-events';
import type { PayoutRunsPayments } from './payout-runs-payments';

describe('InProcessPayoutRunEngine', () => {
  it('takes over, never re-sends, the items a dead process left sending in a store that outlived it', async () => {
    const store = new InMemoryPayoutRunStore();
    await store.createRun(runRecord('r', { ratePerSecond: 100 }), [
      itemRecord('r', 'was-sending', 'sending'),
      itemRecord('r', 'never-sent'),
    ]);
    const sent: string[] = [];
    const events: PayoutRunEvent[] = [];
    const payments = {
      payouts: {
        mpesa: (_request: object, options: { idempotencyKey: string }) => {
          sent.push(options.idempotencyKey);
          return Promise.resolve({ transactionReference: 'REF' });
        },
      },
      // The dead process's send: journaled, its outcome unknown.
      reconciler: {
        get: (key: string) =>
          Promise.resolve(
            key === 'run-r-was-sending' ? { idempotencyKey: key, state: 'started' } : undefined,
          ),
      },
    } as unknown as PayoutRunsPayments;
    const engine = new InProcessPayoutRunEngine({
      store,
      payments,
      emit: (event) => events.push(event),
      settlementPollMs: 60_000,
      progressIntervalMs: 60_000,
      followInDoubtMs: 0,
    });
    try {
      await engine.start('r');
      // The queued item's send ends the run's sending; a busy machine only makes it later.
      for (let waited = 0; (await store.getItem('r', 'never-sent'))?.state !== 'accepted';) {
        if ((waited += 10) > 30_000) throw new Error('the queued item was never sent');
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
      expect(sent).toEqual(['run-r-never-sent']);
      expect(await store.getItem('r', 'was-sending')).toMatchObject({
        state: 'in_doubt',
        reason: expect.stringContaining('journal holds it started') as string,
      });
    } finally {
      await engine.close();
    }
  });
});

import { runRecord } from '../../spec-support/payout-run-records';
import { payoutRunStoreConformance } from '../testing/payout-run-store.conformance';
import { InMemoryPayoutRunStore } from './in-memory-payout-run.store';
import type { PayoutRunRecord } from './payout-run.store';

const run = (runId: string, finishedAt?: string): PayoutRunRecord =>
  runRecord(runId, finishedAt ? { state: 'completed', finishedAt } : {});

describe('InMemoryPayoutRunStore', () => {
  const store = new InMemoryPayoutRunStore();

  describe('passes the store conformance cases', () => {
    for (const check of payoutRunStoreConformance()) {
      it(check.name, () => check.run(store));
    }
  });

  it('forgets finished runs after retainFinishedMs and beyond maxFinishedRuns, never open ones', async () => {
    let now = Date.parse('2026-01-02T00:00:00.000Z');
    const expiring = new InMemoryPayoutRunStore({
      retainFinishedMs: 60_000,
      maxFinishedRuns: 2,
      now: () => now,
    });
    await expiring.createRun(run('open'), []);
    await expiring.createRun(run('old', '2026-01-01T00:00:00.000Z'), []);
    await expiring.createRun(run('f1', '2026-01-01T23:59:30.000Z'), []);
    await expiring.createRun(run('f2', '2026-01-01T23:59:40.000Z'), []);
    await expiring.createRun(run('f3', '2026-01-01T23:59:50.000Z'), []);
    // Creating one more run expires: "old" is past 60 s, then f1 is one finished run too many.
    await expiring.createRun(run('next'), []);
    const kept = async (runId: string) => (await expiring.getRun(runId)) !== undefined;
    expect(await Promise.all(['open', 'old', 'f1', 'f2', 'f3', 'next'].map(kept))).toEqual([
      true,
      false,
      false,
      true,
      true,
      true,
    ]);
    now += 120_000;
    await expiring.createRun(run('later'), []);
    expect(await kept('f3')).toBe(false);
    expect(await kept('open')).toBe(true);
  });
});

import { InMemoryPaymentsJournal } from '@malipo/nestjs';
import { journalThatGoesDown } from './journal-that-goes-down';
import { completedRun, PayoutRunsHarness, pausedRun } from './payout-runs-harness';

jest.setTimeout(120_000);

/**
 * A run whose journal cannot be written sends nothing it cannot journal: its items wait
 * `queued`, the run pauses itself, and resume() pays each of them once when the journal is back
 * (sandbox over loopback, embedded engine).
 */
describe('a payout run whose journal goes down (e2e, sandbox over loopback)', () => {
  let harness: PayoutRunsHarness;
  const journal = new (journalThatGoesDown(InMemoryPaymentsJournal))();

  beforeAll(async () => {
    journal.goDownAfter(12);
    harness = await PayoutRunsHarness.start({ journal });
  });
  afterAll(() => harness?.close());

  it('pauses with the unsent items queued, none refused, and pays each once on resume', async () => {
    const { runs, sandbox } = harness;
    const created = await runs.create({
      items: harness.mpesaItems(40),
      concurrency: 4,
      ratePerSecond: 200,
    });

    const paused = await pausedRun(runs, created.runId);
    expect(journal.failedCreates).toBeGreaterThan(0);
    expect(paused.counts.refused).toBe(0);
    expect(paused.counts.in_doubt).toBe(0);
    expect(paused.counts.queued).toBeGreaterThan(0);
    // Each item that left `queued` went out once; none still queued went out.
    const sentWhileDown = await sandbox.control.transactions();
    expect(sentWhileDown.length).toBe(40 - paused.counts.queued);

    journal.up();
    await runs.resume(created.runId);
    const run = await completedRun(runs, created.runId);
    expect(run.counts).toMatchObject({ refused: 0, in_doubt: 0, queued: 0, sending: 0 });
    expect(run.counts.succeeded + run.counts.failed).toBe(40);
    const keys = (await sandbox.control.transactions()).map((tx) => tx.idempotencyKey);
    expect(keys).toHaveLength(40);
    expect(new Set(keys).size).toBe(40);
  });
});

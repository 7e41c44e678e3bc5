import { Logger } from '@nestjs/common';
import { completedRun, PayoutRunsHarness, pausedRun } from './payout-runs-harness';

jest.setTimeout(120_000);

/**
 * Credentials the service refuses mid-run (a password rotated at the service before the
 * redeploy) are the account's failure, not the items': the run pauses with the items queued, and
 * resume() pays each once (sandbox over loopback, embedded engine).
 */
describe('a payout run whose credentials the service refuses (e2e, sandbox over loopback)', () => {
  let harness: PayoutRunsHarness;

  beforeAll(async () => {
    harness = await PayoutRunsHarness.start();
  });
  afterAll(() => harness?.close());

  beforeEach(() => harness.sandbox.control.reset());

  it.each([
    ['HTTP 401', { status: 401 }],
    ['401 in the body of an HTTP 400', { status: 400, body: { status: 401, success: false } }],
  ])('pauses on %s with no item refused, and pays each once on resume', async (_, fault) => {
    const errors = jest.spyOn(Logger.prototype, 'error').mockImplementation(() => undefined);
    const { runs, sandbox } = harness;
    await sandbox.control.injectFault({ ...fault, count: 3, path: '/api/v2/withdrawal' });
    const created = await runs.create({
      items: harness.mpesaItems(30),
      concurrency: 2,
      ratePerSecond: 50,
    });

    const paused = await pausedRun(runs, created.runId);
    expect(paused.counts).toMatchObject({ refused: 0, in_doubt: 0 });
    expect(paused.counts.queued).toBeGreaterThan(0);
    expect(errors).toHaveBeenCalledWith(expect.stringMatching(/paused: .*credentials \(401\)/));

    await sandbox.control.clearFaults();
    await runs.resume(created.runId);
    const run = await completedRun(runs, created.runId);
    expect(run.counts).toMatchObject({ refused: 0, in_doubt: 0, queued: 0, sending: 0 });
    expect(run.counts.succeeded + run.counts.failed).toBe(30);
    const keys = (await sandbox.control.transactions()).map((tx) => tx.idempotencyKey);
    expect(keys).toHaveLength(30);
    expect(new Set(keys).size).toBe(30);
  });
});

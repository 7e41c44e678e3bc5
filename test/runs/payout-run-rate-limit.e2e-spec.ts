import { completedRun, eventually, PayoutRunsHarness } from './payout-runs-harness';

jest.setTimeout(120_000);

/**
 * A sandbox that answers 429 above 20 requests per second: the run slows to that pace and loses
 * no item. Outcomes and counts are asserted, never durations.
 */
describe('a payout run against a rate-limited service (e2e, sandbox over loopback)', () => {
  let harness: PayoutRunsHarness;

  beforeAll(async () => {
    harness = await PayoutRunsHarness.start({
      sandbox: { rateLimit: { requestsPerSecond: 20 } },
    });
  });
  afterAll(() => harness?.close());

  it('slows down on 429, sends every item once, and loses none', async () => {
    const { runs, sandbox } = harness;
    const items = harness.mpesaItems(120);

    const created = await runs.create({ items, concurrency: 8, ratePerSecond: 60 });
    const run = await eventually(
      async () => {
        const current = await runs.get(created.runId);
        return current.counts.queued + current.counts.sending === 0 ? current : undefined;
      },
      'every item sent',
      100_000,
    );

    // Every item was executed once: none refused, none in doubt, none lost.
    expect(run.counts.refused + run.counts.in_doubt).toBe(0);
    expect(run.counts.accepted + run.counts.succeeded + run.counts.failed).toBe(120);
    const ledger = await sandbox.control.transactions();
    const keys = ledger.map((tx) => tx.idempotencyKey);
    expect(new Set(keys).size).toBe(120);
    expect(keys).toHaveLength(120);

    // The run was slowed: it met 429s, and slowed below its own ceiling.
    const requests = await sandbox.control.requests();
    const limited = requests.filter((r) => r.fault === 'rate limit 429');
    expect(run.pace.rateLimited).toBeGreaterThan(0);
    expect(run.pace.currentRatePerSecond).toBeLessThan(60);
    // Each 429 is one more send of an item, never a lost one: sends = items + 429s on payouts.
    const payoutRequests = requests.filter((r) => r.method === 'POST');
    const limitedPayouts = limited.filter((r) => r.method === 'POST').length;
    expect(payoutRequests.length).toBe(120 + limitedPayouts);
    expect(run.pace.rateLimited).toBe(limitedPayouts);
    // Paced, the run does not hammer: far fewer 429s than sends (an unpaced client at 60/s
    // against 20/s would have about two of three refused).
    expect(limitedPayouts).toBeLessThan(120 / 2);
  });
});

/** The service's 429 as its body gives it, under another HTTP status, is a rate limit too. */
describe('a payout run answered 429 in the body (e2e, sandbox over loopback)', () => {
  let harness: PayoutRunsHarness;

  beforeAll(async () => {
    harness = await PayoutRunsHarness.start();
  });
  afterAll(() => harness?.close());

  it.each([200, 400])(
    'sends the item again after HTTP %i with status 429 in the body',
    async (status) => {
      const { runs, sandbox } = harness;
      await sandbox.control.injectFault({
        status,
        body: { status: 429, success: false, message: 'Too many requests' },
        count: 1,
        path: '/api/v2/withdrawal',
      });
      const created = await runs.create({ items: harness.mpesaItems(3), concurrency: 1 });
      const run = await completedRun(runs, created.runId);
      expect(run.counts).toMatchObject({ refused: 0, in_doubt: 0 });
      expect(run.counts.succeeded + run.counts.failed).toBe(3);
      expect(run.pace.rateLimited).toBe(1);
    },
  );
});

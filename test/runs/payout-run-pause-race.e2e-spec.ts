import { InMemoryPayoutRunStore } from '@malipo/nestjs/runs';
import type { PayoutRunStore } from '@malipo/nestjs/runs';
import { eventually, PayoutRunsHarness } from './payout-runs-harness';

jest.setTimeout(60_000);

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * A store with a network's latency before and after each call, as Redis has; an item's write
 * waits longest, so a pause or cancel written meanwhile lands first.
 */
function latentStore(): PayoutRunStore {
  const inner = new InMemoryPayoutRunStore();
  return new Proxy(inner, {
    get(target, property, receiver) {
      const value: unknown = Reflect.get(target, property, receiver);
      if (typeof value !== 'function') return value;
      return async (...args: unknown[]) => {
        await pause(property === 'updateItem' ? 150 : 5);
        const result: unknown = await (value as (...a: unknown[]) => Promise<unknown>).apply(
          target,
          args,
        );
        await pause(5);
        return result;
      };
    },
  });
}

/**
 * pause() and cancel() against a store with latency: once either resolved, no item of the run
 * starts; the items in flight then end and are recorded. States are waited for, never times.
 */
describe('pause and cancel racing the sends (e2e, latent store, sandbox over loopback)', () => {
  let harness: PayoutRunsHarness;

  beforeAll(async () => {
    harness = await PayoutRunsHarness.start({ store: latentStore() });
  });
  afterAll(() => harness?.close());

  it('sends nothing after pause() or cancel() resolved', async () => {
    const { runs, sandbox } = harness;
    const created = await runs.create({
      items: harness.mpesaItems(80),
      // Starts spaced 50 ms apart while each start's write takes longer: whenever pause() comes,
      // some items are between being taken and being written `sending`.
      concurrency: 8,
      ratePerSecond: 20,
    });
    await eventually(async () => {
      const run = await runs.get(created.runId);
      return run.counts.accepted + run.counts.succeeded + run.counts.failed > 5 ? run : undefined;
    }, 'some items sent');

    const atPause = (await runs.pause(created.runId)).counts.queued;
    expect(atPause).toBeGreaterThan(0);
    const settled = await eventually(async () => {
      const run = await runs.get(created.runId);
      return run.counts.sending === 0 ? run : undefined;
    }, 'the sends in flight recorded');
    expect(settled.counts.queued).toBe(atPause);
    const payouts = async () =>
      (await sandbox.control.requests()).filter((r) => r.method === 'POST').length;
    expect(await payouts()).toBe(80 - atPause);

    await runs.resume(created.runId);
    await eventually(async () => {
      const run = await runs.get(created.runId);
      return run.counts.queued < atPause - 3 ? run : undefined;
    }, 'the run to go on after resume');
    // cancel() refuses the queued items before it resolves.
    const atCancel = (await runs.cancel(created.runId)).counts.refused;
    expect(atCancel).toBeGreaterThan(0);
    const cancelled = await eventually(async () => {
      const run = await runs.get(created.runId);
      return run.finishedAt !== undefined ? run : undefined;
    }, 'the cancelled run to finish');
    expect(cancelled.state).toBe('cancelled');
    expect(cancelled.counts.refused).toBe(atCancel);
    expect(await payouts()).toBe(80 - atCancel);
  });

  it('leaves store and engine agreeing after concurrent pause and resume calls', async () => {
    const { runs } = harness;
    const created = await runs.create({
      items: harness.mpesaItems(40).map((item) => ({ ...item, itemId: `b-${item.itemId}` })),
      allowDuplicates: true,
      concurrency: 2,
      ratePerSecond: 50,
    });
    const calls = [
      runs.pause(created.runId),
      runs.resume(created.runId),
      runs.pause(created.runId),
      runs.resume(created.runId),
      runs.pause(created.runId),
    ];
    await Promise.allSettled(calls);
    const run = await runs.get(created.runId);
    expect(run.state).toBe('paused');
    const queued = run.counts.queued;
    await eventually(async () => {
      const current = await runs.get(created.runId);
      return current.counts.sending === 0 ? current : undefined;
    }, 'the sends in flight recorded');
    expect((await runs.get(created.runId)).counts.queued).toBe(queued);
    await runs.cancel(created.runId);
  });
});

import { createSandboxControl, SandboxControlError } from './sandbox-control';
import type { RunningSandbox } from './sandbox';
import { examplePath, SandboxClient, startFastSandbox, wireBody } from '../test/sandbox-test-kit';

describe('sandbox.control (the typed control client)', () => {
  let sandbox: RunningSandbox;

  beforeAll(async () => {
    // No webhook during a test: each one reads transactions while they are still pending.
    sandbox = await startFastSandbox({ webhookDelayMs: 60_000 });
  });
  afterAll(() => sandbox.close());
  beforeEach(() => sandbox.control.reset());

  it('reads the ledger, one transaction, the wallets, the accounts and the request log', async () => {
    const accepted = await new SandboxClient(sandbox).post(
      examplePath('payouts.mpesa'),
      wireBody('payouts.mpesa'),
    );
    const reference = (accepted.json as { correlator_id: string }).correlator_id;

    const ledger = await sandbox.control.transactions();
    expect(ledger.map((t) => [t.reference, t.operation, t.kind])).toEqual([
      [reference, 'payouts.mpesa', 'payout'],
    ]);
    expect((await sandbox.control.transaction(reference)).status).toBe('pending');
    expect(await sandbox.control.wallets()).toEqual({
      local: 1_000_000 - ledger[0].amount,
      USD: 10_000,
      usdRate: 130,
    });
    expect((await sandbox.control.accounts()).map((a) => a.username)).toEqual(['sandbox', 'beta']);
    expect(await sandbox.control.requests()).toEqual([
      expect.objectContaining({ method: 'POST', path: '/api/v2/withdrawal' }),
    ]);
  });

  it('queues a fault, lists it and clears it', async () => {
    const queued = await sandbox.control.injectFault({
      status: 503,
      count: 2,
      path: '/api/v2/withdrawal',
    });
    expect(queued).toMatchObject({ remaining: 2, status: 503, path: '/api/v2/withdrawal' });

    const answer = await new SandboxClient(sandbox).post(
      examplePath('payouts.mpesa'),
      wireBody('payouts.mpesa'),
    );
    expect(answer.status).toBe(503);
    expect((await sandbox.control.faults()).queued).toEqual([
      expect.objectContaining({ remaining: 1 }),
    ]);

    await sandbox.control.clearFaults();
    expect(await sandbox.control.faults()).toEqual({ queued: [], random: null });
  });

  it('sets a random failure rate with its defaults filled in; reset clears it', async () => {
    expect(await sandbox.control.randomFaults({ rate: 1, seed: 7 })).toEqual({
      rate: 1,
      statuses: [500, 502, 503, 504],
      reset: false,
      seed: 7,
    });
    const answer = await new SandboxClient(sandbox).post(
      examplePath('payouts.mpesa'),
      wireBody('payouts.mpesa'),
    );
    expect(answer.status).toBeGreaterThanOrEqual(500);

    await sandbox.control.reset();
    expect((await sandbox.control.faults()).random).toBeNull();
  });

  it('rejects a non-2xx answer with a SandboxControlError carrying status and body', async () => {
    const error: unknown = await sandbox.control.injectFault({ count: 1 }).catch((e: unknown) => e);

    expect(error).toBeInstanceOf(SandboxControlError);
    expect(error).toMatchObject({
      status: 400,
      body: { success: false, message: expect.stringMatching(/status, reset or delayMs/) },
    });
    await expect(sandbox.control.transaction('NOPE')).rejects.toMatchObject({ status: 404 });
  });

  it('stays callable for any control path', async () => {
    await sandbox.control('faults', { body: { delayMs: 1 } });
    expect(await sandbox.control<{ queued: unknown[] }>('faults')).toMatchObject({
      queued: [{ delayMs: 1 }],
    });
    await sandbox.control('faults', { method: 'DELETE' });
  });

  it('controls a sandbox by its URL, with or without a trailing slash', async () => {
    const control = createSandboxControl(`${sandbox.url}/`);

    await control.injectFault({ reset: true });
    expect((await sandbox.control.faults()).queued).toHaveLength(1);
    await control.reset();
    expect((await sandbox.control.faults()).queued).toHaveLength(0);
  });
});

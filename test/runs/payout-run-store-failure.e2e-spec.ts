import { PaymentsValidationError } from '@malipo/nestjs';
import {
  InMemoryPayoutRunStore,
  PayoutRunCreationError,
  PayoutRunNotFoundError,
  PayoutRunStoreError,
} from '@malipo/nestjs/runs';
import type { PayoutRunRecord } from '@malipo/nestjs/runs';
import { eventually, PayoutRunsHarness } from './payout-runs-harness';

/**
 * The run's store failing inside `create()`, after every check passed: a typed error that says
 * whether the run may have started paying and names its runId, and a retry with that runId takes
 * the run up without paying anyone twice. And a finished run created again after the process
 * that followed it died: its items in doubt are followed again (sandbox over loopback).
 */
describe('payout runs when their store or process fails (e2e, sandbox over loopback)', () => {
  /** An in-memory store that can be made to fail its next `createRun` and the read after it. */
  class FlakyStore extends InMemoryPayoutRunStore {
    failCreate = 0;
    failGet = 0;
    /** Next `createRun`s refused, reads answering (Redis out of memory). */
    refuseCreate = 0;
    /** Next `createRun`s written, their answer lost. */
    loseCreateAnswer = 0;
    getRunCalls = 0;

    override async createRun(...args: Parameters<InMemoryPayoutRunStore['createRun']>) {
      if (this.refuseCreate > 0) {
        this.refuseCreate -= 1;
        throw new Error("OOM command not allowed when used memory > 'maxmemory'.");
      }
      if (this.loseCreateAnswer > 0) {
        this.loseCreateAnswer -= 1;
        await super.createRun(...args);
        throw new Error('Command timed out');
      }
      if (this.failCreate > 0) {
        this.failCreate -= 1;
        // An outage: the next read fails too.
        this.failGet += 1;
        return Promise.reject(new Error('Command timed out'));
      }
      return super.createRun(...args);
    }

    override getRun(runId: string): Promise<PayoutRunRecord | undefined> {
      this.getRunCalls += 1;
      if (this.failGet > 0) {
        this.failGet -= 1;
        return Promise.reject(new Error('Command timed out'));
      }
      return super.getRun(runId);
    }
  }

  let harness: PayoutRunsHarness;
  const store = new FlakyStore();

  beforeAll(async () => {
    harness = await PayoutRunsHarness.start({ store });
  });
  afterAll(() => harness?.close());
  beforeEach(() => harness.sandbox.control.reset());

  const payouts = async () =>
    (await harness.sandbox.control.transactions()).map((tx) => tx.idempotencyKey);

  it('a store down as the run is stored: not started, and the same runId creates it later', async () => {
    const items = harness.mpesaItems(5);
    store.failCreate = 1;
    const error: unknown = await harness.runs
      .create({ runId: 'stored-later', items })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(PayoutRunCreationError);
    expect(error).toMatchObject({ runId: 'stored-later', mayHaveExecuted: false });
    expect((error as Error).message).toContain('call create() again with runId stored-later');
    expect((error as Error).cause).toEqual(new Error('Command timed out'));
    expect(await payouts()).toEqual([]);

    const created = await harness.runs.create({ runId: 'stored-later', items });
    expect(created.existing).toBe(false);
    await eventually(
      async () => ((await harness.runs.get('stored-later')).finishedAt ? true : undefined),
      'the run finished',
    );
    expect((await payouts()).sort()).toEqual(
      items.map((item) => harness.runs.itemKey('stored-later', item.itemId)).sort(),
    );
  });

  it('a write refused while reads answer (out of memory): answered after one read, not after waiting for a run nobody writes', async () => {
    const items = harness.mpesaItems(3);
    store.refuseCreate = 1;
    store.getRunCalls = 0;
    const error: unknown = await harness.runs
      .create({ runId: 'refused-write', items })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(PayoutRunCreationError);
    expect(error).toMatchObject({ runId: 'refused-write', mayHaveExecuted: false });
    expect((error as Error).cause).toEqual(
      new Error("OOM command not allowed when used memory > 'maxmemory'."),
    );
    // One read before the write (is it there?) and one after (was it written after all?).
    expect(store.getRunCalls).toBe(2);
    expect(await payouts()).toEqual([]);
  });

  it('a write whose answer was lost: the run it wrote is answered and paid once', async () => {
    const items = harness.mpesaItems(3);
    store.loseCreateAnswer = 1;
    const created = await harness.runs.create({ runId: 'lost-answer', items });
    expect(created).toMatchObject({ runId: 'lost-answer', existing: true });
    await eventually(
      async () => ((await harness.runs.get('lost-answer')).finishedAt ? true : undefined),
      'the run finished',
    );
    const keys = await payouts();
    expect(keys.sort()).toEqual(
      items.map((item) => harness.runs.itemKey('lost-answer', item.itemId)).sort(),
    );
  });

  it.each([
    ['the store', new Error('Command timed out')],
    ['the library', new PayoutRunNotFoundError('started')],
  ])(
    'a failure of %s once the run started: may have executed, and the same runId answers it',
    async (_, failure) => {
      const runId = `started-${failure.name}`;
      const items = harness.mpesaItems(5);
      // The read after the start, to answer the caller, fails.
      const runs = harness.runs;
      const get = jest.spyOn(runs, 'get').mockRejectedValueOnce(failure);
      let error: unknown;
      try {
        error = await runs.create({ runId, items }).catch((e: unknown) => e);
      } finally {
        get.mockRestore();
      }
      expect(error).toBeInstanceOf(PayoutRunCreationError);
      expect(error).toMatchObject({ runId, mayHaveExecuted: true, cause: failure });
      expect((error as Error).message).toContain('may have started paying');

      await eventually(
        async () => ((await runs.get(runId)).finishedAt ? true : undefined),
        'the run finished',
      );
      const again = await runs.create({ runId, items });
      expect(again.existing).toBe(true);
      const keys = await payouts();
      expect(keys).toHaveLength(5);
      expect(new Set(keys).size).toBe(5);
    },
  );

  it("reads and changes of a run its store fails reject typed, never in the store's words; bad queries name the field", async () => {
    const runId = 'typed-reads';
    await harness.runs.create({ runId, items: harness.mpesaItems(3) });

    store.failGet = 1;
    const unread: unknown = await harness.runs.get(runId).catch((e: unknown) => e);
    expect(unread).toBeInstanceOf(PayoutRunStoreError);
    expect(unread).toMatchObject({ runId, action: 'read', mayHaveExecuted: false });
    expect((unread as Error).message).not.toContain('Command timed out');
    expect((unread as Error).cause).toEqual(new Error('Command timed out'));

    store.failGet = 1;
    const unpaused: unknown = await harness.runs.pause(runId).catch((e: unknown) => e);
    expect(unpaused).toBeInstanceOf(PayoutRunStoreError);
    expect(unpaused).toMatchObject({ runId, action: 'pause', mayHaveExecuted: true });

    const refusal = async (read: Promise<unknown>) => {
      const error: unknown = await read.catch((e: unknown) => e);
      expect(error).toBeInstanceOf(PaymentsValidationError);
      return (error as PaymentsValidationError).errors.map(({ field, rule }) => [field, rule]);
    };
    expect(await refusal(harness.runs.items(runId, { limit: 0 }))).toEqual([['limit', 'isInt']]);
    expect(
      await refusal(harness.runs.items(runId, { state: 'paid' as unknown as 'queued' })),
    ).toEqual([['state', 'isIn']]);
    expect(await refusal(harness.runs.items(runId, { cursor: 'abc' }))).toEqual([
      ['cursor', 'isPayoutRunCursor'],
    ]);
    // A query that would list every item, or none, or fail as the store's fault.
    for (const [query, refused] of [
      [{ states: 'in_doubt' }, ['states', 'whitelist']],
      ['in_doubt', ['query', 'isObject']],
      [['in_doubt'], ['query', 'isObject']],
      [null, ['query', 'isObject']],
      [{ state: [] }, ['state', 'isIn']],
      [{ state: { a: 'succeeded' } }, ['state', 'isIn']],
      [{ cursor: true }, ['cursor', 'isPayoutRunCursor']],
      [{ limit: '10' }, ['limit', 'isInt']],
      [
        {
          get state(): string {
            throw new Error('unreadable');
          },
        },
        ['query', 'isReadable'],
      ],
    ] as const) {
      expect(await refusal(harness.runs.items(runId, query as never))).toEqual([refused]);
    }
    expect(await refusal(harness.runs.report(runId, 'xml' as 'json'))).toEqual([
      ['format', 'isIn'],
    ]);
    const badFormat: unknown = await harness.runs
      .report(runId, 'xml' as 'json')
      .catch((e: unknown) => e);
    expect(badFormat).toMatchObject({ target: 'PayoutRunsService.report' });
    // A runId no run can have is the caller's mistake, named as such, not a run that is missing;
    // the store is not asked.
    for (const [method, read] of [
      ['get', (id: string) => harness.runs.get(id)],
      ['items', (id: string) => harness.runs.items(id)],
      ['report', (id: string) => harness.runs.report(id, 'json')],
      ['pause', (id: string) => harness.runs.pause(id)],
      ['resume', (id: string) => harness.runs.resume(id)],
      ['cancel', (id: string) => harness.runs.cancel(id)],
    ] as const) {
      for (const badId of ['../x', '', 'a/b', 42, undefined, 'r'.repeat(65)]) {
        const readsBefore = store.getRunCalls;
        const error: unknown = await read(badId as string).catch((e: unknown) => e);
        expect(store.getRunCalls).toBe(readsBefore);
        expect(error).toBeInstanceOf(PaymentsValidationError);
        expect(error).toMatchObject({ target: `PayoutRunsService.${method}` });
        expect((error as PaymentsValidationError).errors).toEqual([
          expect.objectContaining({ field: 'runId', rule: 'isPayoutRunId' }),
        ]);
      }
    }
    // Its payouts end before the next test reads the ledger.
    await eventually(
      async () => ((await harness.runs.get(runId)).finishedAt ? true : undefined),
      'the run finished',
    );
  });

  it('a finished run created again follows its items in doubt through the journal once more', async () => {
    const items = harness.mpesaItems(3).slice(1);
    const runId = 'followed-again';
    await harness.runs.create({ runId, items });
    await eventually(async () => {
      const run = await harness.runs.get(runId);
      return run.finishedAt && run.counts.succeeded === 2 ? true : undefined;
    }, 'the run finished, every item paid');
    // As a process that died before its last look left it: in doubt in the run, while the journal
    // holds the payout succeeded (its webhook settled it).
    const [item] = items;
    expect(
      await store.updateItem(runId, item.itemId, { state: 'in_doubt', reason: 'r' }, ['succeeded']),
    ).toBeDefined();

    await eventually(async () => {
      expect((await harness.runs.create({ runId, items })).existing).toBe(true);
      return (await store.getItem(runId, item.itemId))?.state === 'succeeded' ? true : undefined;
    }, 'the item followed again and settled from the journal');
    expect(await payouts()).toHaveLength(2);
  });
});

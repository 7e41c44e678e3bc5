import { Logger } from '@nestjs/common';
import { itemRecord, runRecord } from '../../spec-support/payout-run-records';
import { waitFor } from '../../spec-support/wait-for';
import type { PayoutRunEngineContext } from './payout-run-engine';
import { InMemoryPayoutRunStore } from './in-memory-payout-run.store';
import { InProcessPayoutRunEngine } from './in-process-payout-run-engine';
import { ON_WIRE } from '../operation-runner';
import type { InternalCallOptions } from '../operation-runner';
import type { PayoutRunEvent } from './payout-run-events';
import type { PayoutRunsPayments } from './payout-runs-payments';

/** An engine over `store` and `payments` that looks at its runs once a minute unless told. */
function engineOf(
  store: InMemoryPayoutRunStore,
  payments: PayoutRunsPayments,
  options: Partial<
    Pick<
      PayoutRunEngineContext,
      'emit' | 'settlementPollMs' | 'followInDoubtMs' | 'progressIntervalMs'
    >
  > = {},
): InProcessPayoutRunEngine {
  return new InProcessPayoutRunEngine({
    store,
    payments,
    emit: () => undefined,
    settlementPollMs: 60_000,
    progressIntervalMs: 60_000,
    followInDoubtMs: 0,
    ...options,
  });
}

/** Payouts that are accepted at once, their keys in `sent`; a journal that holds none of them. */
function acceptingPayments(): { sent: string[]; payments: PayoutRunsPayments } {
  const sent: string[] = [];
  const payments = {
    payouts: {
      // Every entry here is of its item's request.
      journalsAnotherRequest: () => false,
      mpesa: (_request: object, options: { idempotencyKey: string }) => {
        sent.push(options.idempotencyKey);
        return Promise.resolve({ transactionReference: 'REF' });
      },
    },
    reconciler: { get: () => Promise.resolve(undefined) },
  } as unknown as PayoutRunsPayments;
  return { sent, payments };
}

describe('InProcessPayoutRunEngine', () => {
  it('sends none of a run created through another account (an app sharing the store), and says so', async () => {
    const store = new InMemoryPayoutRunStore();
    await store.createRun(
      runRecord('theirs', { ratePerSecond: 100, account: 'digest-of-theirs' }),
      [itemRecord('theirs', 'a')],
    );
    await store.createRun(runRecord('ours', { ratePerSecond: 100, account: 'digest-of-ours' }), [
      itemRecord('ours', 'a'),
    ]);
    const { sent, payments } = acceptingPayments();
    Object.assign(payments, { accountDigest: () => 'digest-of-ours' });
    const errors = jest.spyOn(Logger.prototype, 'error').mockImplementation(() => undefined);
    const engine = engineOf(store, payments);
    try {
      await engine.start('theirs');
      await engine.start('ours');
      await waitFor(
        async () => ((await store.getItem('ours', 'a'))?.state === 'accepted' ? true : undefined),
        "our run's item sent",
      );
      expect(sent).toEqual(['run-ours-a']);
      expect((await store.getItem('theirs', 'a'))?.state).toBe('queued');
      expect(errors).toHaveBeenCalledWith(
        expect.stringContaining('Payout run theirs was created through another payment account'),
      );
    } finally {
      await engine.close();
      errors.mockRestore();
    }
  });

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
        // Every entry here is of its item's request.
        journalsAnotherRequest: () => false,
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
    const engine = engineOf(store, payments, { emit: (event) => events.push(event) });
    try {
      await engine.start('r');
      // The queued item's send ends the run's sending; a busy machine only makes it later.
      await waitFor(
        async () =>
          (await store.getItem('r', 'never-sent'))?.state === 'accepted' ? true : undefined,
        'the queued item sent',
        30_000,
      );
      expect(sent).toEqual(['run-r-never-sent']);
      expect(await store.getItem('r', 'was-sending')).toMatchObject({
        state: 'in_doubt',
        reason: expect.stringContaining('journal holds it started') as string,
      });
    } finally {
      await engine.close();
    }
  });

  it('paces requests by when they went to the wire, however long the writes before them took', async () => {
    jest.useFakeTimers({ now: Date.parse('2026-11-27T00:00:00Z') });
    const store = new InMemoryPayoutRunStore();
    const items = Array.from({ length: 200 }, (_, index) => itemRecord('r', `item-${index}`));
    const ratePerSecond = 10;
    await store.createRun(
      runRecord('r', { ratePerSecond, concurrency: 100, createdAt: new Date().toISOString() }),
      items,
    );
    // Before each request the journal's write hangs now and then, for up to 400 ms; the service
    // answers a payout in 1.5 s (it waits for the mobile network).
    let seed = 11;
    const hold = () => {
      seed = (seed * 48271) % 2147483647;
      return seed % 3 === 0 ? seed % 401 : 1;
    };
    const departures: number[] = [];
    const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
    const payments = {
      payouts: {
        // Every entry here is of its item's request.
        journalsAnotherRequest: () => false,
        mpesa: async (_request: object, options: InternalCallOptions) => {
          await sleep(hold());
          options[ON_WIRE]?.();
          departures.push(Date.now());
          await sleep(1500);
          return { transactionReference: `REF-${options.idempotencyKey}` };
        },
      },
      reconciler: { get: () => Promise.resolve(undefined) },
    } as unknown as PayoutRunsPayments;
    const engine = engineOf(store, payments);
    try {
      await engine.start('r');
      await jest.advanceTimersByTimeAsync(10_000);
      const inOneSecond = (at: number) =>
        departures.filter((other) => other > at - 1000 && other <= at).length;
      expect(Math.max(...departures.map(inOneSecond))).toBeLessThanOrEqual(ratePerSecond);
      // At the rate, not at the slow answers' pace: a send counts from when it left, not from
      // its answer 1.5 s later.
      expect(departures.length).toBeGreaterThanOrEqual(80);
    } finally {
      const closed = engine.close();
      await jest.runAllTimersAsync();
      await closed;
      jest.useRealTimers();
    }
  });

  it('finishes a run whose store failed mid-item: each item sent once, none left queued or sending', async () => {
    const store = new InMemoryPayoutRunStore();
    const count = 30;
    await store.createRun(
      runRecord('r', { ratePerSecond: 1000, concurrency: 4 }),
      Array.from({ length: count }, (_, index) => itemRecord('r', `item-${index}`)),
    );
    // The store stalls for a while: each of its item writes meanwhile fails, before or after the
    // send (a command timeout), and none is carried out.
    let writes = 0;
    const updateItem = store.updateItem.bind(store);
    jest.spyOn(store, 'updateItem').mockImplementation((...args) => {
      writes += 1;
      if (writes > 6 && writes <= 30) return Promise.reject(new Error('Command timed out'));
      return updateItem(...args);
    });
    const sent: string[] = [];
    const payments = {
      payouts: {
        // Every entry here is of its item's request.
        journalsAnotherRequest: () => false,
        mpesa: (_request: object, options: { idempotencyKey: string }) => {
          sent.push(options.idempotencyKey);
          return Promise.resolve({ transactionReference: `REF-${sent.length}` });
        },
      },
      // The journal: what was sent succeeded (its webhook came).
      reconciler: {
        get: (key: string) =>
          Promise.resolve(
            sent.includes(key)
              ? { idempotencyKey: key, state: 'succeeded', reference: `REF-${key}` }
              : undefined,
          ),
      },
    } as unknown as PayoutRunsPayments;
    const engine = engineOf(store, payments, { settlementPollMs: 20, followInDoubtMs: 60_000 });
    try {
      await engine.start('r');
      await waitFor(async () => (await store.getRun('r'))?.finishedAt, 'the run finished', 30_000);
      const { items } = await store.listItems('r', { limit: count });
      expect(items.filter((item) => item.state !== 'succeeded').map((item) => item.state)).toEqual(
        [],
      );
      expect(new Set(sent).size).toBe(count);
      expect(sent).toHaveLength(count);
    } finally {
      await engine.close();
    }
  });

  it('holds no half-loaded run when its start failed: the next start sends its items', async () => {
    const store = new InMemoryPayoutRunStore();
    await store.createRun(runRecord('r', { ratePerSecond: 100 }), [itemRecord('r', 'item')]);
    jest.spyOn(store, 'listItems').mockRejectedValueOnce(new Error('Command timed out'));
    const { sent, payments } = acceptingPayments();
    const engine = engineOf(store, payments);
    try {
      await expect(engine.start('r')).rejects.toThrow('Command timed out');
      await engine.start('r');
      await waitFor(
        async () => ((await store.getItem('r', 'item'))?.state === 'accepted' ? true : undefined),
        'the item sent',
        30_000,
      );
      expect(sent).toEqual(['run-r-item']);
    } finally {
      await engine.close();
    }
  });

  it('takes up a run it never held (its start failed) on cancel, refusing its items, and on resume, sending them', async () => {
    const store = new InMemoryPayoutRunStore();
    await store.createRun(runRecord('cancelled', { ratePerSecond: 100 }), [
      itemRecord('cancelled', 'a'),
      itemRecord('cancelled', 'b'),
    ]);
    await store.createRun(runRecord('resumed', { ratePerSecond: 100, state: 'paused' }), [
      itemRecord('resumed', 'a'),
    ]);
    const { sent, payments } = acceptingPayments();
    const engine = engineOf(store, payments);
    try {
      await engine.cancel('cancelled');
      expect(await store.getRun('cancelled')).toMatchObject({
        state: 'cancelled',
        finishedAt: expect.any(String) as string,
      });
      for (const itemId of ['a', 'b']) {
        expect(await store.getItem('cancelled', itemId)).toMatchObject({ state: 'refused' });
      }

      await engine.resume('resumed');
      await waitFor(
        async () =>
          (await store.getItem('resumed', 'a'))?.state === 'accepted' ? true : undefined,
        'the resumed run sent its item',
        30_000,
      );
      expect(sent).toEqual(['run-resumed-a']);
    } finally {
      await engine.close();
    }
  });

  it('refuses the queued items of a run stored cancelled when it takes it up (a cancel cut short), and finishes it', async () => {
    const store = new InMemoryPayoutRunStore();
    await store.createRun(runRecord('cut-short', { ratePerSecond: 100, state: 'cancelled' }), [
      itemRecord('cut-short', 'a'),
      itemRecord('cut-short', 'b'),
    ]);
    const { sent, payments } = acceptingPayments();
    const engine = engineOf(store, payments);
    try {
      await engine.start('cut-short');
      for (const itemId of ['a', 'b']) {
        expect(await store.getItem('cut-short', itemId)).toMatchObject({ state: 'refused' });
      }
      expect(await store.getRun('cut-short')).toMatchObject({
        state: 'cancelled',
        finishedAt: expect.any(String) as string,
      });
      expect(sent).toEqual([]);
    } finally {
      await engine.close();
    }
  });
});

describe('InProcessPayoutRunEngine at shutdown', () => {
  afterEach(() => jest.restoreAllMocks());

  it.each([
    [false, 'create() it again with the same runId and items'],
    [true, 'Do not create it again as it was, which would send every item again'],
  ])(
    'says which run it stopped, what it never sent, and how to go on after the restart (journal in memory: %s)',
    async (journalInMemory, advice) => {
      const warnings = jest.spyOn(Logger.prototype, 'warn').mockImplementation(() => undefined);
      const store = new InMemoryPayoutRunStore();
      const ids = Array.from({ length: 20 }, (_, index) => `emp-${index}`);
      await store.createRun(
        runRecord('payroll-11', { ratePerSecond: 100, concurrency: 2 }),
        ids.map((itemId) => itemRecord('payroll-11', itemId)),
      );
      let answer: (() => void) | undefined;
      const sent: string[] = [];
      const payments = {
        payouts: {
          // Every entry here is of its item's request.
          journalsAnotherRequest: () => false,
          // The first two sends wait for the shutdown; the others never start.
          mpesa: (_request: object, options: InternalCallOptions & { idempotencyKey: string }) => {
            sent.push(options.idempotencyKey);
            options[ON_WIRE]?.();
            return new Promise((resolve) => {
              const earlier = answer;
              answer = () => {
                earlier?.();
                resolve({ transactionReference: 'REF' });
              };
            });
          },
        },
        reconciler: { get: () => Promise.resolve(undefined), journalInMemory },
      } as unknown as PayoutRunsPayments;
      const engine = engineOf(store, payments);
      await engine.start('payroll-11');
      await waitFor(() => (sent.length === 2 ? true : undefined), 'two sends under way');
      const closed = engine.close();
      answer?.();
      await closed;

      const said = warnings.mock.calls.map(([message]) => String(message)).join('\n');
      expect(said).toContain('Payout run payroll-11 stopped at shutdown');
      expect(said).toMatch(/\b18 item\(s\) never sent, [12] sent and not settled yet/);
      expect(said).toContain(advice);
    },
  );

  it('emits no progress once closed, not even of a send that ended while it closed', async () => {
    const store = new InMemoryPayoutRunStore();
    await store.createRun(runRecord('r', { ratePerSecond: 100 }), [itemRecord('r', 'a')]);
    let release: () => void = () => undefined;
    const held = new Promise<void>((resolve) => (release = resolve));
    const payments = {
      payouts: {
        journalsAnotherRequest: () => false,
        mpesa: async () => {
          await held;
          return { transactionReference: 'REF' };
        },
      },
      reconciler: { get: () => Promise.resolve(undefined) },
    } as unknown as PayoutRunsPayments;
    const events: PayoutRunEvent[] = [];
    const engine = engineOf(store, payments, {
      emit: (event) => events.push(event),
      progressIntervalMs: 1,
    });
    await engine.start('r');
    await waitFor(
      async () => ((await store.getItem('r', 'a'))?.state === 'sending' ? true : undefined),
      'the item being sent',
    );

    const closed = engine.close();
    release();
    await closed;
    const seen = events.length;
    await new Promise((resolve) => setTimeout(resolve, 50));

    expect(events.slice(seen)).toEqual([]);
  });

  it('rejects a start once closed: nothing would send the run here', async () => {
    const store = new InMemoryPayoutRunStore();
    await store.createRun(runRecord('r', { ratePerSecond: 100 }), [itemRecord('r', 'a')]);
    const { sent, payments } = acceptingPayments();
    const engine = engineOf(store, payments);
    await engine.close();

    await expect(engine.start('r')).rejects.toMatchObject({
      name: 'PayoutRunEngineClosedError',
      runId: 'r',
    });
    expect(sent).toEqual([]);
  });

  it('says nothing of a run that finished', async () => {
    const warnings = jest.spyOn(Logger.prototype, 'warn').mockImplementation(() => undefined);
    const store = new InMemoryPayoutRunStore();
    await store.createRun(runRecord('done', { ratePerSecond: 100 }), [itemRecord('done', 'a')]);
    const payments = {
      payouts: {
        // Every entry here is of its item's request.
        journalsAnotherRequest: () => false,
        mpesa: () => Promise.resolve({ transactionReference: 'REF' }),
      },
      // Its webhook came: the journal holds it settled.
      reconciler: {
        get: (key: string) => Promise.resolve({ idempotencyKey: key, state: 'succeeded' }),
      },
    } as unknown as PayoutRunsPayments;
    const engine = engineOf(store, payments, { settlementPollMs: 10 });
    await engine.start('done');
    await waitFor(
      async () => ((await store.getRun('done'))?.finishedAt === undefined ? undefined : true),
      'the run finished',
    );
    await engine.close();
    expect(warnings.mock.calls.join('\n')).not.toContain('stopped at shutdown');
  });
});

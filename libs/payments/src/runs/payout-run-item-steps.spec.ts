import { Logger } from '@nestjs/common';
import { PaymentsJournalError, PaymentsValidationError, ServiceAPIError } from '../errors';
import type { PaymentsJournalEntry } from '../journal/payments-journal.interfaces';
import { engineContext, itemRecord, runRecord } from '../../spec-support/payout-run-records';
import { InMemoryPayoutRunStore } from './in-memory-payout-run.store';
import { PayoutRunOutageGuard } from './payout-run-outage-guard';
import type { PayoutRunEvent } from './payout-run-events';
import {
  followPayoutRunItem,
  sendPayoutRunItem,
  takeOverPayoutRunItem,
} from './payout-run-item-steps';
import type { PayoutRunItemState } from './payout-run.interfaces';
import type { PayoutRunsPayments } from './payout-runs-payments';
import { toPayoutRunItem } from './payout-run-view';
import { REFUSALS_STAND, UNSENT_SENDS } from '../operation-runner';
import type { InternalCallOptions } from '../operation-runner';

const AT = '2026-01-01T00:00:00.000Z';

/** The fingerprint of an entry of another request (another sum or payee) under the item's key. */
const ANOTHER_REQUEST = 'fingerprint of another request';

/** A store with one run of one item in `state`, a journal of `entry`, payouts that count sends. */
async function world(state: PayoutRunItemState, entry?: Partial<PaymentsJournalEntry>) {
  const store = new InMemoryPayoutRunStore();
  await store.createRun(runRecord('r', { createdAt: AT, updatedAt: AT }), [
    itemRecord('r', 'a', state, { idempotencyKey: 'run-r-key', sends: 1, updatedAt: AT }),
  ]);
  const sent: object[] = [];
  const held: { key: string; reason: string }[] = [];
  const events: PayoutRunEvent[] = [];
  const payments = {
    payouts: {
      mpesa: (request: object) => {
        sent.push(request);
        return Promise.resolve({ transactionReference: 'REF' });
      },
      // The journal's hold of a key with no entry: written in doubt, with the reason.
      holdKey: (
        _operation: object,
        _request: object,
        key: string,
        state: 'in_doubt' | 'refused',
        reason: string,
      ) => {
        held.push({ key, reason });
        return Promise.resolve({ idempotencyKey: key, state, reason });
      },
      // The entry is the item's unless it is of another request (edited since).
      journalsAnotherRequest: (_operation: object, _request: object, held: PaymentsJournalEntry) =>
        held.fingerprint === ANOTHER_REQUEST,
    },
    reconciler: { get: () => Promise.resolve(entry && { idempotencyKey: 'run-r-key', ...entry }) },
  } as unknown as PayoutRunsPayments;
  const context = engineContext(store, payments, { emit: (event) => events.push(event) });
  return { store, context, sent, held, events };
}

/** The service's refusal of the item's payout (HTTP 400), with its own message when given. */
function refusedWith400(serviceMessage?: string): ServiceAPIError {
  return new ServiceAPIError('payouts.mpesa was refused with HTTP 400', {
    operation: 'payouts.mpesa',
    idempotencyKey: 'run-r-key',
    attempts: 1,
    status: 400,
    code: 'SERVICE_ERROR',
    mayHaveExecuted: false,
    ...(serviceMessage === undefined ? {} : { serviceMessage }),
  });
}

describe('payout-run item steps', () => {
  it("never sends another account's item when its run is created anew between the account's read and the item's move", async () => {
    const ours = new InMemoryPayoutRunStore();
    await ours.createRun(runRecord('r', { account: 'digest-of-ours' }), [itemRecord('r', 'a')]);
    // What the store holds once the run was deleted and created anew by the other app.
    const theirs = new InMemoryPayoutRunStore();
    await theirs.createRun(runRecord('r', { account: 'digest-of-theirs' }), [
      itemRecord('r', 'a', 'queued', {
        idempotencyKey: 'their-key',
        request: { phoneNumber: '0799999999', amount: 5000 },
      }),
    ]);
    let now: InMemoryPayoutRunStore = ours;
    // The deletion and the other app's create() land right after the first read of the run.
    const store = {
      getRun: async (runId: string) => {
        const run = await now.getRun(runId);
        now = theirs;
        return run;
      },
      getItem: (runId: string, itemId: string) => now.getItem(runId, itemId),
      updateItem: (...args: Parameters<InMemoryPayoutRunStore['updateItem']>) =>
        now.updateItem(...args),
    } as unknown as InMemoryPayoutRunStore;
    const sent: object[] = [];
    const payments = {
      accountDigest: () => 'digest-of-ours',
      payouts: {
        mpesa: (request: object) => {
          sent.push(request);
          return Promise.resolve({ transactionReference: 'REF' });
        },
      },
    } as unknown as PayoutRunsPayments;
    const context = engineContext(store, payments);
    expect(await sendPayoutRunItem(context, 'r', 'a')).toEqual({
      kind: 'foreign',
      requested: false,
    });
    expect(sent).toEqual([]);
    // Put back for its own app's engine.
    expect((await theirs.getItem('r', 'a'))?.state).toBe('queued');
  });

  it('never sends an item of a run another payment account created (an app sharing the store), however long the engine held it', async () => {
    const { store, context, sent } = await world('queued');
    Object.assign(context.payments, { accountDigest: () => 'digest-of-ours' });
    // Deleted and created anew under its id by the other app since this engine took it up.
    const stored = await store.getRun('r');
    jest
      .spyOn(store, 'getRun')
      .mockResolvedValue(stored && { ...stored, account: 'digest-of-theirs' });
    expect(await sendPayoutRunItem(context, 'r', 'a')).toEqual({
      kind: 'foreign',
      requested: false,
    });
    expect(sent).toEqual([]);
    expect((await store.getItem('r', 'a'))?.state).toBe('queued');
  });

  it('never starts an item once the run is paused or cancelled in the store: it is held', async () => {
    for (const runState of ['paused', 'cancelled'] as const) {
      const { store, context, sent } = await world('queued');
      await store.updateRun('r', { state: runState });
      expect(await sendPayoutRunItem(context, 'r', 'a')).toEqual({
        kind: 'held',
        requested: false,
      });
      expect(sent).toEqual([]);
      expect((await store.getItem('r', 'a'))?.state).toBe('queued');
    }
  });

  it.each([
    ['an answer from the service', () => Promise.resolve({ transactionReference: 'REF' }), true],
    [
      'an answer from the journal',
      () => Promise.resolve({ transactionReference: 'REF', replayed: true }),
      false,
    ],
    [
      'a refusal of the journal',
      () =>
        Promise.reject(
          new PaymentsJournalError('not sent', {
            operation: 'payouts.mpesa',
            idempotencyKey: 'run-r-key',
            code: 'IN_DOUBT',
            mayHaveExecuted: true,
          }),
        ),
      false,
    ],
    ["the service's refusal", () => Promise.reject(refusedWith400()), true],
  ] as const)('says whether a send made a request, for the pacer: %s', async (_, answer, made) => {
    const { context } = await world('queued');
    (context.payments.payouts as unknown as { mpesa: () => Promise<unknown> }).mpesa = answer;
    expect((await sendPayoutRunItem(context, 'r', 'a')).requested).toBe(made);
  });

  it('sends an item whose move to sending landed but whose answer was lost (the write ran again), once', async () => {
    const { store, context, sent } = await world('queued');
    const updateItem = store.updateItem.bind(store);
    // As ioredis does on a reconnect: the first run of the command landed, its reply was lost,
    // and the same command ran again, which finds the item moved on.
    store.updateItem = async (...args: Parameters<typeof updateItem>) => {
      const [, , change] = args;
      if (change.state !== 'sending') return updateItem(...args);
      await updateItem(...args);
      return updateItem(...args);
    };

    const result = await sendPayoutRunItem(context, 'r', 'a');

    expect(result).toMatchObject({ requested: true });
    expect(sent).toHaveLength(1);
    expect((await store.getItem('r', 'a'))?.state).toBe('accepted');
  });

  it('leaves an item another send moved to sending (another claim) to that send', async () => {
    const { store, context, sent } = await world('queued');
    await store.updateItem('r', 'a', { state: 'sending', sends: 2, sendClaim: 'another' }, [
      'queued',
    ]);
    const getItem = store.getItem.bind(store);
    // This worker read the item while it was still queued.
    store.getItem = async (...args: Parameters<typeof getItem>) => {
      store.getItem = getItem;
      const item = await getItem(...args);
      return item && { ...item, state: 'queued' };
    };

    expect(await sendPayoutRunItem(context, 'r', 'a')).toEqual({
      kind: 'skipped',
      requested: false,
    });
    expect(sent).toEqual([]);
  });

  it("sends an item with no retry of a failure that may have executed, and no retry of the service's refusal", async () => {
    const { context } = await world('queued');
    const options: unknown[] = [];
    (context.payments.payouts as unknown as { mpesa: unknown }).mpesa = (
      _request: object,
      callOptions: unknown,
    ) => {
      options.push(callOptions);
      return Promise.resolve({ transactionReference: 'REF' });
    };
    await sendPayoutRunItem(context, 'r', 'a');
    expect(options).toEqual([
      {
        idempotencyKey: 'run-r-key',
        retryAmbiguous: false,
        [UNSENT_SENDS]: { callIds: [], notSent: expect.any(Function) as unknown },
        [REFUSALS_STAND]: true,
      },
    ]);
  });

  it("keeps on the item the sends the journal could not write, and tells the item's next send", async () => {
    jest.spyOn(Logger.prototype, 'error').mockImplementation(() => undefined);
    const { store, context } = await world('queued');
    const told: (readonly string[])[] = [];
    let fail = true;
    (context.payments.payouts as unknown as { mpesa: unknown }).mpesa = (
      _request: object,
      callOptions: InternalCallOptions,
    ) => {
      const unsent = callOptions[UNSENT_SENDS]!;
      told.push([...unsent.callIds]);
      if (!fail) return Promise.resolve({ transactionReference: 'REF' });
      unsent.notSent(`call-${told.length}`);
      return Promise.reject(
        new PaymentsJournalError('not sent: the journal failed', {
          operation: 'payouts.mpesa',
          idempotencyKey: 'run-r-key',
          code: 'JOURNAL_UNAVAILABLE',
          mayHaveExecuted: false,
        }),
      );
    };
    expect(await sendPayoutRunItem(context, 'r', 'a')).toMatchObject({ kind: 'requeued' });
    expect(await store.getItem('r', 'a')).toMatchObject({
      state: 'queued',
      unsentCallIds: ['call-1'],
    });
    await store.updateRun('r', { state: 'running' });
    await sendPayoutRunItem(context, 'r', 'a');
    fail = false;
    await store.updateRun('r', { state: 'running' });
    expect(await sendPayoutRunItem(context, 'r', 'a')).toMatchObject({ kind: 'accepted' });
    expect(told).toEqual([[], ['call-1'], ['call-1', 'call-2']]);
    // Never shown to callers: an engine's detail.
    const item = await store.getItem('r', 'a');
    expect(item && toPayoutRunItem(item)).not.toHaveProperty('unsentCallIds');
  });

  it("gives a refused item the service's own message, the payee's number masked", async () => {
    const { store, context } = await world('queued');
    (context.payments.payouts as unknown as { mpesa: () => Promise<unknown> }).mpesa = () =>
      Promise.reject(
        refusedWith400(`number 0712 345 678 is not registered for M-Pesa ${'x'.repeat(300)}`),
      );
    await sendPayoutRunItem(context, 'r', 'a');
    const item = await store.getItem('r', 'a');
    expect(item).toMatchObject({ state: 'refused' });
    expect(item?.reason).toMatch(
      /^SERVICE_ERROR \(HTTP 400\): not executed: number \[personal data\] is not registered for M-Pesa x+…$/,
    );
    expect(item?.reason).not.toMatch(/345/);
    expect(Array.from(item?.reason ?? '').length).toBeLessThan(260);
  });

  it("cleans a refused item's message as a failure's reason: escapes, bidi marks, emails, numbers", async () => {
    const { store, context } = await world('queued');
    (context.payments.payouts as unknown as { mpesa: () => Promise<unknown> }).mpesa = () =>
      Promise.reject(
        refusedWith400(
          '\u001b[2J\u202edenied:\u2028payer jw.1987@mail.example, 0733 111 222 barred',
        ),
      );
    await sendPayoutRunItem(context, 'r', 'a');
    const item = await store.getItem('r', 'a');
    expect(item?.reason).toBe(
      'SERVICE_ERROR (HTTP 400): not executed: [2J denied: payer [personal data], [personal data] barred',
    );
  });

  it('puts in doubt, never refused, an item whose key the journal holds with another request', async () => {
    const { store, context } = await world('queued');
    (context.payments.payouts as unknown as { mpesa: () => Promise<unknown> }).mpesa = () =>
      Promise.reject(
        new PaymentsValidationError('MpesaPayoutRequest', [
          { field: 'idempotencyKey', rule: 'reused', message: 'idempotencyKey was already used' },
        ]),
      );
    await sendPayoutRunItem(context, 'r', 'a');
    expect(await store.getItem('r', 'a')).toMatchObject({
      state: 'in_doubt',
      reason: expect.stringContaining('may have executed') as string,
    });
  });

  it('pauses a run after sends in a row reached the service and ended in doubt; an answer resets the count', async () => {
    const store = new InMemoryPayoutRunStore();
    const ids = ['a', 'b', 'c', 'd', 'e', 'f'];
    await store.createRun(
      runRecord('r'),
      ids.map((itemId) =>
        itemRecord('r', itemId, 'queued', {
          request: { phoneNumber: '0712345678', amount: 10, itemId },
        }),
      ),
    );
    const down = (request: { itemId: string }) =>
      request.itemId === 'b'
        ? Promise.resolve({ transactionReference: 'REF' })
        : Promise.reject(
            new ServiceAPIError('no answer', {
              operation: 'payouts.mpesa',
              idempotencyKey: `run-r-${request.itemId}`,
              attempts: 1,
              status: 503,
              code: 'SERVICE_ERROR',
              mayHaveExecuted: true,
            }),
          );
    const context = engineContext(
      store,
      { payouts: { mpesa: down } } as unknown as PayoutRunsPayments,
      { outageGuard: new PayoutRunOutageGuard(3) },
    );
    const errors = jest.spyOn(Logger.prototype, 'error').mockImplementation(() => undefined);
    try {
      // a in doubt, b answered (the count starts again), c, d, e in doubt: paused; f never goes.
      for (const itemId of ids) await sendPayoutRunItem(context, 'r', itemId);
      expect((await store.getRun('r'))?.state).toBe('paused');
      expect((await store.getItem('r', 'e'))?.state).toBe('in_doubt');
      expect((await store.getItem('r', 'f'))?.state).toBe('queued');
      expect(errors).toHaveBeenCalledWith(expect.stringContaining('Payout run r paused'));
    } finally {
      errors.mockRestore();
    }
  });

  it('drops the request of an item once it is final', async () => {
    const { store, context } = await world('accepted', {
      state: 'succeeded',
      settledBy: 'webhook',
      settledStatus: 'success',
    });
    expect(await followPayoutRunItem(context, 'r', 'a')).toBe(false);
    const item = await store.getItem('r', 'a');
    expect(item?.state).toBe('succeeded');
    expect(item?.request).toBeUndefined();
  });

  it('gives a failed item the reason the journal settled it by', async () => {
    const { store, context } = await world('accepted', {
      state: 'failed',
      settledBy: 'webhook',
      settledStatus: 'failed',
    });
    await followPayoutRunItem(context, 'r', 'a');
    expect(await store.getItem('r', 'a')).toMatchObject({
      state: 'failed',
      reason: 'failed: webhook, status failed',
    });
  });

  it("gives a failed item the service's own reason, as the journal kept it", async () => {
    const { store, context } = await world('accepted', {
      state: 'failed',
      settledBy: 'status',
      settledStatus: 'failed',
      settledReason: 'Transaction failed with message: [DS timeout user cannot be reached]',
    });
    await followPayoutRunItem(context, 'r', 'a');
    expect((await store.getItem('r', 'a'))?.reason).toBe(
      'failed: status, status failed: Transaction failed with message: [DS timeout user cannot be reached]',
    );
  });

  it.each([
    ['refused', { state: 'refused', reason: 'HTTP 400' }],
    ['absent', undefined],
    ['started', { state: 'started' }],
  ] as const)(
    'takes over a sending item whose entry is %s as in doubt, never refused or re-sent',
    async (_, entry) => {
      const { store, context, sent, events } = await world('sending', entry);
      const item = await store.getItem('r', 'a');
      await takeOverPayoutRunItem(context, item!);
      const after = await store.getItem('r', 'a');
      expect(after?.state).toBe('in_doubt');
      expect(after?.reason).toMatch(/PaymentsReconciler\.resolve/);
      expect(sent).toEqual([]);
      expect(events).toEqual([expect.objectContaining({ event: 'item.settled' })]);
    },
  );

  it('takes over a sending item whose key has no entry by holding the key in doubt in the journal', async () => {
    const { store, context, sent, held } = await world('sending');
    await takeOverPayoutRunItem(context, (await store.getItem('r', 'a'))!);
    expect(held).toEqual([
      { key: 'run-r-key', reason: expect.stringContaining('the journal holds the key') as string },
    ]);
    expect(await store.getItem('r', 'a')).toMatchObject({
      state: 'in_doubt',
      reason: held[0].reason,
    });
    expect(sent).toEqual([]);
  });

  it('puts back an item whose own send ended in a store failure when the journal says it was not sent', async () => {
    for (const [entry, expected] of [
      [undefined, 'queued'],
      [{ state: 'refused', reason: 'not sent: JOURNAL_UNAVAILABLE' }, 'queued'],
      [{ state: 'refused', settledBy: 'manual', reason: 'resolved by hand: no' }, 'refused'],
      [{ state: 'started' }, 'in_doubt'],
      [{ state: 'accepted', reference: 'R1' }, 'accepted'],
    ] as const) {
      const { store, context, sent, held } = await world('sending', entry);
      await takeOverPayoutRunItem(context, (await store.getItem('r', 'a'))!, { senderEnded: true });
      expect([entry?.state, (await store.getItem('r', 'a'))?.state]).toEqual([
        entry?.state,
        expected,
      ]);
      expect(sent).toEqual([]);
      expect(held).toEqual([]);
      if (expected === 'in_doubt') {
        // No worker stopped: the reason says what happened.
        const { reason } = (await store.getItem('r', 'a'))!;
        expect(reason).toContain("its send ended as the run's store failed");
        expect(reason).not.toContain('worker stopped');
      }
    }
  });

  it('takes over a sending item in doubt, unheld, when its stored request no longer passes the rules', async () => {
    const { store, context, sent } = await world('sending');
    (context.payments.payouts as unknown as { holdKey: () => Promise<never> }).holdKey = () =>
      Promise.reject(
        new PaymentsValidationError('MpesaPayoutRequest', [
          { field: 'username', rule: 'isNotEmpty', message: 'username must not be empty' },
        ]),
      );
    await takeOverPayoutRunItem(context, (await store.getItem('r', 'a'))!);
    expect(await store.getItem('r', 'a')).toMatchObject({
      state: 'in_doubt',
      reason: expect.stringContaining('before the journal entry was written') as string,
    });
    expect(sent).toEqual([]);
  });

  it('settles an in-doubt item refused once a person resolved its entry refused, not before', async () => {
    for (const [entry, expected] of [
      [
        { state: 'refused', settledBy: 'manual', reason: 'resolved by hand: never left' },
        'refused',
      ],
      [{ state: 'refused', reason: 'not sent: JOURNAL_UNAVAILABLE' }, 'in_doubt'],
    ] as const) {
      const { store, context, events } = await world('in_doubt', entry);
      const unsettled = await followPayoutRunItem(context, 'r', 'a');
      expect([unsettled, (await store.getItem('r', 'a'))?.state]).toEqual([
        expected === 'in_doubt',
        expected,
      ]);
      if (expected === 'refused') {
        expect(await store.getItem('r', 'a')).toMatchObject({
          reason: 'resolved by hand: never left',
        });
        expect(events).toEqual([expect.objectContaining({ event: 'item.settled' })]);
      }
    }
  });

  it.each(['in_doubt', 'accepted'] as const)(
    'takes no state from an entry of another request under the key of an item %s',
    async (state) => {
      // A run created again with an edited item (another sum or payee), the same ids, so the
      // same key: the entry is of the earlier request, paid to someone else.
      const { store, context, events } = await world(state, {
        state: 'succeeded',
        reference: 'R-EARLIER',
        settledBy: 'webhook',
        fingerprint: ANOTHER_REQUEST,
      });
      const item = await store.getItem('r', 'a');
      await store.updateItem(
        'r',
        'a',
        state === 'in_doubt'
          ? {
              reason:
                'idempotencyKey reused: the journal holds an earlier, different request under its key, which may have executed',
            }
          : { reference: 'R-OWN' },
        [item!.state],
      );

      expect(await followPayoutRunItem(context, 'r', 'a')).toBe(false);

      expect(await store.getItem('r', 'a')).toMatchObject({
        state: 'in_doubt',
        reason: expect.stringMatching(/^idempotencyKey reused/),
      });
      expect(events).toHaveLength(state === 'in_doubt' ? 0 : 1);
    },
  );

  it("follows an entry by the reference the item's send was answered with, whatever else it says", async () => {
    const { store, context } = await world('accepted', {
      state: 'succeeded',
      reference: 'R-OWN',
      settledBy: 'webhook',
      fingerprint: ANOTHER_REQUEST,
    });
    await store.updateItem('r', 'a', { reference: 'R-OWN' }, ['accepted']);
    expect(await followPayoutRunItem(context, 'r', 'a')).toBe(false);
    expect((await store.getItem('r', 'a'))?.state).toBe('succeeded');
  });

  it('takes over a sending item whose key holds another request: in doubt, not its state', async () => {
    const { store, context } = await world('sending', {
      state: 'succeeded',
      reference: 'R-EARLIER',
      fingerprint: ANOTHER_REQUEST,
    });
    await takeOverPayoutRunItem(context, (await store.getItem('r', 'a'))!);
    expect(await store.getItem('r', 'a')).toMatchObject({
      state: 'in_doubt',
      reason: expect.stringMatching(/^idempotencyKey reused/),
    });
  });

  it('takes over a sending item whose entry is final or accepted in that state', async () => {
    const { store, context } = await world('sending', { state: 'accepted', reference: 'R1' });
    await takeOverPayoutRunItem(context, (await store.getItem('r', 'a'))!);
    expect(await store.getItem('r', 'a')).toMatchObject({ state: 'accepted', reference: 'R1' });
  });
});

import { Logger } from '@nestjs/common';
import { journalEntry, payoutIntent, testJournal } from '../spec-support/journal-entries';
import { RecordingServer } from '../spec-support/recording-server';
import { waitFor } from '../spec-support/wait-for';
import type { RecordedRequest, Reply } from '../spec-support/recording-server';
import { createPaymentsClient } from './create-payments-client';
import { ServiceAPIError } from './errors';
import { InMemoryPaymentsJournal } from './journal/in-memory-payments-journal';
import type { PaymentsJournal } from './journal/payments-journal';
import { PAYMENTS_CONFIRMATION_WINDOW_MS } from './journal/payments-journal.interfaces';
import type { OperationRunner } from './operation-runner';
import type { PaymentsClient } from './payments-client';
import { PaymentsReconciler } from './payments-reconciler';

const START = Date.parse('2026-11-27T08:00:00Z');
const NOTE = { outcome: 'refused', note: 'ops: not in the dashboard' } as const;

/** The service's final record of a payout of 500 KES `reference`, created a second after START. */
function successRecord(reference: string) {
  return {
    id: `id-${reference}`,
    code: reference,
    currency: 'KES',
    amount: 500,
    type: 'withdrawal',
    transaction_details: { status: 'success' },
    created_at: new Date(START + 1000).toISOString(),
  };
}

/**
 * A journal on `store` and a clock the test moves, with a reconciler whose look-ups are a client's
 * own over loopback HTTP to `serviceUrl`. The caller closes the client.
 */
function journaledOver<S extends InMemoryPaymentsJournal>(serviceUrl: string, store: S) {
  const clock = { nowMs: START };
  const journal = testJournal(store, () => clock.nowMs);
  const client = createPaymentsClient({
    apiUsername: 'u',
    apiPassword: 'reconciler-spec-password',
    baseUrl: serviceUrl,
    maxRetries: 0,
    timeout: 5000,
  });
  const reconciler = new PaymentsReconciler(
    { journal } as unknown as OperationRunner,
    client.transactions,
  );
  return { clock, store, journal, client, reconciler };
}

describe('PaymentsReconciler and the webhooks deferred while a call was being sent', () => {
  let server: RecordingServer;
  const clients: PaymentsClient[] = [];
  /** How the service answers the status look-up of a reference. */
  let lookup: (reference: string) => Reply;

  /** {@link journaledOver} this describe's server, its client closed after each test. */
  function journaled<S extends InMemoryPaymentsJournal>(store: S) {
    const journaled = journaledOver(server.url, store);
    clients.push(journaled.client);
    return journaled;
  }

  /** A payout under `key` whose answer was lost after webhooks of these references and kinds came. */
  async function lostWithDeferredKinds(
    journal: PaymentsJournal,
    key: string,
    events: readonly (readonly [reference: string, kind: string])[],
  ) {
    const decision = await journal.begin(payoutIntent(key));
    if (!decision.send) throw new Error(`${key} was not sent`);
    for (const [reference, kind] of events) await journal.deferEvent(key, reference, kind);
    await journal.failed(decision, new Error('socket hang up'));
  }

  /** A payout under `key` whose answer was lost after the webhooks naming `references` came. */
  async function lostWithDeferred(journal: PaymentsJournal, key: string, ...references: string[]) {
    const decision = await journal.begin(payoutIntent(key));
    if (!decision.send) throw new Error(`${key} was not sent`);
    for (const reference of references) await journal.deferEvent(key, reference, 'payout');
    await journal.failed(decision, new Error('socket hang up'));
  }

  beforeAll(async () => {
    server = await RecordingServer.start();
  });
  beforeEach(() => {
    jest.spyOn(Logger.prototype, 'warn').mockImplementation(() => undefined);
    server.fallback = (request: RecordedRequest) =>
      lookup(decodeURIComponent(request.path.split('/').at(-1) ?? ''));
  });
  afterEach(async () => {
    jest.restoreAllMocks();
    await Promise.all(clients.splice(0).map((client) => client.close()));
    server.reset();
  });
  afterAll(() => server.close());

  it("lists a deferred reference as another execution when the call's answer gives it its own during the look-up", async () => {
    const errors = jest.spyOn(Logger.prototype, 'error').mockImplementation(() => undefined);
    const { journal, store, reconciler, clock } = journaled(new InMemoryPaymentsJournal());
    const decision = await journal.begin(payoutIntent('twice-1'));
    if (!decision.send) throw new Error('twice-1 was not sent');
    await journal.deferEvent('twice-1', 'DEFR00000001eW', 'payout');
    clock.nowMs += 60_000;
    // The service answers the look-up of the deferred reference once the call's late answer,
    // with a reference of its own, is written.
    let answered: Promise<void> | undefined;
    lookup = (reference) => {
      answered ??= journal.accepted(
        decision,
        { success: true, transactionReference: 'OWN000000002eW' },
        { phoneNumber: '0712345678', amount: 500 },
      );
      return { status: 200, body: successRecord(reference), after: answered };
    };

    const summary = await reconciler.reconcile();

    const entry = await store.get('twice-1');
    expect(entry).toMatchObject({
      state: 'in_doubt',
      reference: 'OWN000000002eW',
      otherExecutions: ['DEFR00000001eW'],
      deferredEvents: [],
    });
    expect(summary.inDoubt.map((listed) => listed.idempotencyKey)).toEqual(['twice-1']);
    expect(errors).toHaveBeenCalledWith(expect.stringContaining('DEFR00000001eW'));
  });

  it('counts as changed only what the pass wrote: not an entry a webhook settled before its mark', async () => {
    /** A store under which `then` runs once, right after the next listing. */
    class SettledAfterListing extends InMemoryPaymentsJournal {
      then: (() => Promise<unknown>) | undefined;
      override async list(query?: Parameters<InMemoryPaymentsJournal['list']>[0]) {
        const listed = await super.list(query);
        const then = this.then;
        this.then = undefined;
        await then?.();
        return listed;
      }
    }
    const { journal, store, reconciler, clock } = journaled(new SettledAfterListing());
    await journal.begin(payoutIntent('late-1'));
    clock.nowMs += 60_000;
    lookup = (reference) => ({ status: 200, body: successRecord(reference) });
    store.then = () =>
      journal.settle({
        idempotencyKey: 'late-1',
        reference: 'LATE00000001eW',
        outcome: 'succeeded',
        amount: 500,
        currency: 'KES',
        kind: 'payout',
        by: 'webhook',
      });

    const summary = await reconciler.reconcile();

    expect(await store.get('late-1')).toMatchObject({ state: 'succeeded' });
    expect(summary.changed).toBe(0);
  });

  it('books a reference two entries hold to the one that held it first: the other is in doubt, counted once', async () => {
    jest.spyOn(Logger.prototype, 'error').mockImplementation(() => undefined);
    /** A store that fails the next reference read it is told to. */
    class FailsOneRead extends InMemoryPaymentsJournal {
      failNext = false;
      override async findByReference(reference: string) {
        if (!this.failNext) return super.findByReference(reference);
        this.failNext = false;
        throw new Error('Command timed out');
      }
    }
    const { journal, store, reconciler, clock } = journaled(new FailsOneRead());
    const request = { phoneNumber: '0712345678', amount: 500 };
    for (const key of ['first-1', 'second-2']) {
      const decision = await journal.begin(payoutIntent(key));
      if (!decision.send) throw new Error(`${key} was not sent`);
      // The service answers both with one transaction; the store fails the second's check.
      store.failNext = key === 'second-2';
      await journal.accepted(
        decision,
        { success: true, transactionReference: 'ONCE00000001eW' },
        request,
      );
    }
    clock.nowMs += 60_000;
    lookup = (reference) => ({ status: 200, body: successRecord(reference) });

    const summary = await reconciler.reconcile();

    expect(await store.get('first-1')).toMatchObject({ state: 'succeeded' });
    expect(await store.get('second-2')).toMatchObject({ state: 'in_doubt' });
    expect(summary.totals.succeeded?.KES).toEqual({ count: 1, amount: 500 });
    expect(summary.changed).toBe(2);
  });

  it("sums a journal's totals exactly past 2^53 units, as the run's totals are", async () => {
    const store = new InMemoryPaymentsJournal();
    const { reconciler } = journaled(store);
    const at = new Date(START).toISOString();
    for (let index = 0; index < 100; index += 1) {
      await store.create(
        journalEntry(`large-${index}`, {
          state: 'succeeded',
          amount: 999_999_999_999.99,
          startedAt: at,
          updatedAt: at,
          deadlineAt: at,
        }),
      );
    }

    const summary = await reconciler.reconcile();

    expect(summary.totals.succeeded?.KES).toEqual({ count: 100, amount: 99_999_999_999_999 });
    expect(summary.byOperation['payouts.mpesa']?.succeeded?.KES?.amount).toBe(99_999_999_999_999);
  });

  it('counts as changed a deferred reference dropped by this pass only, not one another pass dropped first', async () => {
    const { journal, store, reconciler, clock } = journaled(new InMemoryPaymentsJournal());
    await lostWithDeferred(journal, 'dropped-1', 'DROP00000001eW');
    clock.nowMs += 60_000;
    // Of another amount: whichever pass reads it drops it. Both passes look it up before either does.
    let release: () => void = () => undefined;
    const bothAsked = new Promise<void>((resolve) => (release = resolve));
    let asked = 0;
    lookup = (reference) => {
      asked += 1;
      if (asked === 2) release();
      return { status: 200, body: { ...successRecord(reference), amount: 999 }, after: bothAsked };
    };

    const [one, other] = await Promise.all([reconciler.reconcile(), reconciler.reconcile()]);

    expect((await store.get('dropped-1'))?.deferredEvents).toEqual([]);
    expect(one.changed + other.changed).toBe(1);
  });

  it('settles accepted entries by their records while the reference index fails', async () => {
    /** A store whose reference index fails while `failing`. */
    class FailingIndex extends InMemoryPaymentsJournal {
      failing = false;
      override async findByReference(reference: string) {
        if (this.failing) throw new Error('Command timed out');
        return super.findByReference(reference);
      }
    }
    const { journal, store, reconciler } = journaled(new FailingIndex());
    for (const key of ['indexed-1', 'indexed-2']) {
      const decision = await journal.begin(payoutIntent(key));
      if (!decision.send) throw new Error(`${key} was not sent`);
      await journal.accepted(
        decision,
        { success: true, transactionReference: `${key.toUpperCase().replace('-', '')}0eW` },
        { phoneNumber: '0712345678', amount: 500 },
      );
    }
    await journal.close();
    lookup = (reference) => ({ status: 200, body: successRecord(reference) });
    store.failing = true;

    const summary = await reconciler.reconcile();

    expect(summary.changed).toBe(2);
    expect(summary.totals.succeeded?.KES).toEqual({ count: 2, amount: 1000 });
  });

  it("settles the entry by the call's own record, which a person's refused could not override", async () => {
    lookup = (reference) => ({ status: 200, body: successRecord(reference) });
    const { journal, store, reconciler, clock } = journaled(new InMemoryPaymentsJournal());
    await lostWithDeferred(journal, 'own-1', 'OWN000000001eW');
    await expect(reconciler.resolve('own-1', NOTE)).rejects.toMatchObject({ code: 'REFUSED' });
    clock.nowMs += 60_000;

    await reconciler.reconcile();

    expect(await store.get('own-1')).toMatchObject({
      state: 'succeeded',
      reference: 'OWN000000001eW',
    });
  });

  it('drops a reference the service does not know, or no look-up can carry; then refused is taken', async () => {
    lookup = () => ({ status: 404, body: { success: false, message: 'transaction not found' } });
    const { journal, store, reconciler, clock } = journaled(new InMemoryPaymentsJournal());
    // `..` would change the look-up's path: refused before sending, so never looked up.
    await lostWithDeferred(journal, 'forged-1', 'FORGED000001eW', '..');
    clock.nowMs += 60_000;

    await reconciler.reconcile();

    expect((await store.get('forged-1'))?.deferredEvents).toEqual([]);
    expect(server.requests.map((request) => request.path)).toEqual([
      expect.stringMatching(/\/FORGED000001eW$/) as string,
    ]);
    await reconciler.resolve('forged-1', NOTE);
    expect(await store.get('forged-1')).toMatchObject({ state: 'refused' });
  });

  it('keeps a reference whose look-ups fail for the confirmation window from the first failure, then drops it, logged', async () => {
    const errors = jest.spyOn(Logger.prototype, 'error').mockImplementation(() => undefined);
    const { journal, store, reconciler, clock } = journaled(new InMemoryPaymentsJournal());
    await lostWithDeferred(journal, 'failing-1', 'FAILING00001eW');
    const deferred = async () => (await store.get('failing-1'))?.deferredEvents;

    // The first pass runs days later, met by a rate limit: no failure of the reference's own.
    clock.nowMs = START + 2 * PAYMENTS_CONFIRMATION_WINDOW_MS;
    lookup = () => ({ status: 200, body: { status: 429, success: false, message: 'slow down' } });
    await reconciler.reconcile();
    expect(await deferred()).toEqual([
      expect.not.objectContaining({ unplacedSince: expect.anything() }),
    ]);
    lookup = () => ({ status: 503, body: { message: 'try again' } });
    await reconciler.reconcile();
    const since = clock.nowMs;
    expect(await deferred()).toEqual([
      expect.objectContaining({ unplacedSince: new Date(since).toISOString() }),
    ]);
    // The log says what failed: the error's code and HTTP status, never its message.
    expect(jest.mocked(Logger.prototype.warn)).toHaveBeenCalledWith(
      expect.stringContaining('failed (ServiceAPIError SERVICE_ERROR, HTTP 503)'),
    );
    await expect(reconciler.resolve('failing-1', NOTE)).rejects.toMatchObject({
      code: 'REFUSED',
    });

    clock.nowMs = since + PAYMENTS_CONFIRMATION_WINDOW_MS - 1;
    await reconciler.reconcile();
    expect(await deferred()).toHaveLength(1);
    clock.nowMs = since + PAYMENTS_CONFIRMATION_WINDOW_MS;
    await reconciler.reconcile();
    expect(await deferred()).toEqual([]);
    expect(errors).toHaveBeenCalledWith(expect.stringContaining('FAILING00001eW'));
    await reconciler.resolve('failing-1', NOTE);
  });

  it('counts the window of failing look-ups without a break: a look-up that answers starts it again', async () => {
    const { journal, store, reconciler, clock } = journaled(new InMemoryPaymentsJournal());
    await lostWithDeferred(journal, 'blips-1', 'OWN000000003eW');
    const deferred = async () => (await store.get('blips-1'))?.deferredEvents;
    const failing = () => ({ status: 503, body: { message: 'try again' } });
    const pending = (reference: string) => ({
      status: 200,
      body: { ...successRecord(reference), transaction_details: { status: 'pending' } },
    });
    lookup = failing;
    clock.nowMs += 60_000;
    await reconciler.reconcile();
    expect(await deferred()).toEqual([
      expect.objectContaining({ unplacedSince: expect.any(String) }),
    ]);
    lookup = pending;
    clock.nowMs += PAYMENTS_CONFIRMATION_WINDOW_MS / 2;
    await reconciler.reconcile();
    expect(await deferred()).toEqual([
      expect.not.objectContaining({ unplacedSince: expect.anything() }),
    ]);
    // A blip past 72 h from the first failure is a new first failure: the reference stays.
    lookup = failing;
    clock.nowMs += PAYMENTS_CONFIRMATION_WINDOW_MS;
    await reconciler.reconcile();
    expect((await deferred())?.map((event) => event.reference)).toEqual(['OWN000000003eW']);
  });

  it('keeps a reference whose record agrees with the entry while another call could own it, for the window from the first pass that found it so', async () => {
    const errors = jest.spyOn(Logger.prototype, 'error').mockImplementation(() => undefined);
    lookup = (reference) => ({ status: 200, body: successRecord(reference) });
    const { journal, store, reconciler, clock } = journaled(new InMemoryPaymentsJournal());
    await lostWithDeferred(journal, 'rival-1', 'RIVAL0000001eW');
    // Another payout of the same sum, its answer lost too: the record could be either's.
    await lostWithDeferred(journal, 'rival-2');
    clock.nowMs += 60_000;

    await reconciler.reconcile();
    expect(await store.get('rival-1')).toMatchObject({
      state: 'in_doubt',
      deferredEvents: [expect.objectContaining({ reference: 'RIVAL0000001eW' })],
    });
    await expect(reconciler.resolve('rival-1', NOTE)).rejects.toMatchObject({ code: 'REFUSED' });

    // Unplaced for 72 h from the first pass that found it so (a forger may name a real
    // transaction under keys not its own): dropped.
    const since = clock.nowMs;
    expect(await store.get('rival-1')).toMatchObject({
      deferredEvents: [expect.objectContaining({ unplacedSince: new Date(since).toISOString() })],
    });
    clock.nowMs = since + PAYMENTS_CONFIRMATION_WINDOW_MS - 1;
    await reconciler.reconcile();
    expect((await store.get('rival-1'))?.deferredEvents).toHaveLength(1);
    clock.nowMs = since + PAYMENTS_CONFIRMATION_WINDOW_MS;
    await reconciler.reconcile();
    expect((await store.get('rival-1'))?.deferredEvents).toEqual([]);
    expect(errors).toHaveBeenCalledWith(expect.stringContaining('RIVAL0000001eW'));
    await reconciler.resolve('rival-1', NOTE);
  });

  it("drops a reference whose record, not final, has other figures than the call's; keeps one that has the call's", async () => {
    const pending = (reference: string, amount: number) => ({
      status: 200,
      body: { ...successRecord(reference), amount, transaction_details: { status: 'pending' } },
    });
    lookup = (reference) => pending(reference, reference.startsWith('OWN') ? 500 : 1);
    const { journal, store, reconciler, clock } = journaled(new InMemoryPaymentsJournal());
    await lostWithDeferred(journal, 'pending-1', 'DEPOSIT00001eW', 'OWN000000002eW');
    clock.nowMs += 60_000;

    for (let pass = 0; pass < 4; pass += 1) {
      clock.nowMs += PAYMENTS_CONFIRMATION_WINDOW_MS / 2;
      await reconciler.reconcile();
    }
    // Days later, the call's own execution, still pending, keeps the key closed.
    expect((await store.get('pending-1'))?.deferredEvents?.map((event) => event.reference)).toEqual(
      ['OWN000000002eW'],
    );
    await expect(journal.begin(payoutIntent('pending-1', { resend: true }))).rejects.toMatchObject({
      code: 'IN_DOUBT',
    });
  });
  it("places the call's own record whatever kind a webhook that named it first claimed", async () => {
    const { journal, store, reconciler, clock } = journaled(new InMemoryPaymentsJournal());
    // A forger posts the call's own reference on the collection route before the service's
    // webhook of the payout, which then adds nothing (one event per reference).
    const events = [
      ['OWN000000004eW', 'collection'],
      ['OWN000000004eW', 'payout'],
    ] as const;
    lookup = (reference) => ({
      status: 200,
      body: { ...successRecord(reference), transaction_details: { status: 'pending' } },
    });
    await lostWithDeferredKinds(journal, 'kind-1', events);
    clock.nowMs += 60_000;
    await reconciler.reconcile();
    expect((await store.get('kind-1'))?.deferredEvents?.map((event) => event.reference)).toEqual([
      'OWN000000004eW',
    ]);

    lookup = (reference) => ({ status: 200, body: successRecord(reference) });
    await reconciler.reconcile();
    expect(await store.get('kind-1')).toMatchObject({
      state: 'succeeded',
      reference: 'OWN000000004eW',
    });
  });

  it('drops a reference unplaced for the window only if no other instance placed it meanwhile', async () => {
    const { journal, store, reconciler, clock } = journaled(new InMemoryPaymentsJournal());
    const other = new PaymentsReconciler(
      { journal } as unknown as OperationRunner,
      clients.at(-1)!.transactions,
    );
    await lostWithDeferred(journal, 'race-1', 'OWN000000005eW');
    lookup = () => ({ status: 503, body: { message: 'try again' } });
    clock.nowMs += 60_000;
    await reconciler.reconcile();
    clock.nowMs += PAYMENTS_CONFIRMATION_WINDOW_MS;
    // This instance's look-up hangs, read with the old mark; the other's answers: pending.
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    lookup = () => ({ status: 503, body: { message: 'try again' }, after: released });
    const hanging = reconciler.reconcile();
    await waitFor(
      () => Promise.resolve(server.requests.length >= 2 ? true : undefined),
      'the look-up',
    );
    lookup = (reference) => ({
      status: 200,
      body: { ...successRecord(reference), transaction_details: { status: 'pending' } },
    });
    await other.reconcile();
    release();
    await hanging;

    expect((await store.get('race-1'))?.deferredEvents?.map((event) => event.reference)).toEqual([
      'OWN000000005eW',
    ]);
  });
});

describe('PaymentsReconciler, the late answer and the webhook of one stalled payout, in every order', () => {
  let server: RecordingServer;
  /** The status word of each reference the service knows. */
  let statuses: Record<string, string>;
  const OWN = 'OWN000000009eW';
  const OTHER = 'OTHR00000009eW';

  /** Every order of `steps`. */
  function orders<T>(steps: readonly T[]): T[][] {
    if (steps.length <= 1) return [[...steps]];
    return steps.flatMap((step, index) =>
      orders([...steps.slice(0, index), ...steps.slice(index + 1)]).map((rest) => [step, ...rest]),
    );
  }

  beforeAll(async () => {
    server = await RecordingServer.start();
    server.fallback = (request: RecordedRequest) => {
      const reference = decodeURIComponent(request.path.split('/').at(-1) ?? '');
      const status = statuses[reference];
      return status === undefined
        ? { status: 404, body: { success: false, message: 'transaction not found' } }
        : { status: 200, body: { ...successRecord(reference), transaction_details: { status } } };
    };
  });
  beforeEach(() => {
    jest.spyOn(Logger.prototype, 'warn').mockImplementation(() => undefined);
    jest.spyOn(Logger.prototype, 'error').mockImplementation(() => undefined);
  });
  afterEach(() => jest.restoreAllMocks());
  afterAll(() => server.close());

  it.each([
    // The answer, the webhook's reference and outcome, the service's records; what every order ends in.
    ['the answer and the webhook agree', OWN, 'succeeded', { [OWN]: 'success' }, 'succeeded'],
    ['the record is pending at the look-ups', OWN, 'succeeded', { [OWN]: 'pending' }, 'succeeded'],
    ['the answer was a 502', 502, 'succeeded', { [OWN]: 'success' }, 'succeeded'],
    ['the webhook says the payout failed', OWN, 'failed', { [OWN]: 'failed' }, 'failed'],
    [
      'the answer gives another reference',
      OTHER,
      'succeeded',
      { [OWN]: 'success', [OTHER]: 'success' },
      undefined,
    ],
  ] as const)('%s', async (_case, answer, webhookOutcome, records, ends) => {
    statuses = records;
    for (const order of orders(['reconcile', 'answer', 'webhook', 'reconcile again'] as const)) {
      const { clock, store, journal, client, reconciler } = journaledOver(
        server.url,
        new InMemoryPaymentsJournal(),
      );
      const key = `stalled-${order.join('-')}`;
      const decision = await journal.begin(payoutIntent(key));
      if (!decision.send) throw new Error(`${key} was not sent`);
      // Past its deadline: each pass reads it in doubt.
      clock.nowMs += 60_000;
      const steps = {
        reconcile: () => reconciler.reconcile(),
        'reconcile again': () => reconciler.reconcile(),
        answer: () =>
          typeof answer === 'number'
            ? journal.failed(
                decision,
                new ServiceAPIError('bad gateway', {
                  operation: 'payouts.mpesa',
                  idempotencyKey: key,
                  code: 'SERVICE_ERROR',
                  attempts: 1,
                  status: answer,
                  mayHaveExecuted: true,
                }),
              )
            : journal.accepted(
                decision,
                { success: true, transactionReference: answer },
                { phoneNumber: '0712345678', amount: 500 },
              ),
        webhook: () =>
          journal.settle({
            idempotencyKey: key,
            reference: OWN,
            outcome: webhookOutcome,
            amount: 500,
            currency: 'KES',
            kind: 'payout',
            by: 'webhook',
          }),
      };
      for (const step of order) await steps[step]();
      const summary = await reconciler.reconcile();
      await client.close();

      const entry = await store.get(key);
      const where = `${key}: ${JSON.stringify(entry)}`;
      // One call, counted once; never left started, never refused once accepted.
      const counted = Object.values(summary.totals).flatMap((byCurrency) =>
        Object.values(byCurrency),
      );
      expect([where, counted.reduce((sum, total) => sum + total.count, 0)]).toEqual([where, 1]);
      expect([where, entry?.state]).not.toEqual([where, 'started']);
      expect([where, entry?.state]).not.toEqual([where, 'refused']);
      if (entry?.state === 'in_doubt') {
        expect([where, typeof entry.reason]).toEqual([where, 'string']);
        expect(summary.inDoubt.map((listed) => listed.idempotencyKey)).toContain(key);
      }
      if (ends !== undefined) {
        expect([where, entry?.state, entry?.reference]).toEqual([where, ends, OWN]);
      } else {
        // Two transactions: both references kept, one of them on the entry, never settled on one alone.
        const references = [entry?.reference, ...(entry?.otherExecutions ?? [])];
        expect([where, entry?.state]).not.toEqual([where, 'failed']);
        if (entry?.state === 'in_doubt') {
          expect([where, [...references].sort()]).toEqual([where, [OTHER, OWN].sort()]);
        } else {
          expect([where, entry?.reference]).toEqual([where, OTHER]);
        }
      }
    }
  });
});

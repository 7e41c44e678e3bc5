import kenyaSuccess from '../../spec-support/real-service/webhooks/kenya-success.json';
import { getEventListeners } from 'node:events';
import { Injectable, type INestApplication } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { OPERATION_CASES, successBody } from '../../spec-support/operation-cases';
import { RecordingServer } from '../../spec-support/recording-server';
import { waitFor } from '../../spec-support/wait-for';
import { InMemoryPaymentsJournal } from '../journal/in-memory-payments-journal';
import type { PaymentsJournalEntry } from '../journal/payments-journal.interfaces';
import { PaymentsReconciler } from '../payments-reconciler';
import { PaymentsModule } from '../payments.module';
import { PayoutsService } from '../payouts.service';
import { OnPaymentEvent } from './on-payment-event.decorator';
import type { PaymentDuplicateEvent, PaymentWebhookEvent } from './payment-webhook-event';
import { PaymentsWebhookConfirmation } from './payments-webhook.confirmation';
import { PaymentsWebhookModule } from './payments-webhook.module';

const PAYOUT = OPERATION_CASES.find((c) => c.operation === 'payouts.mpesa')!.request as {
  phoneNumber: string;
  amount: number;
  narration: string;
};
/** The reference of `successBody('payout')`. */
const PAYOUT_REFERENCE = '9BD141203407eW';

/** What the app's handlers were given. */
@Injectable()
class Handlers {
  readonly payouts: PaymentWebhookEvent[] = [];
  readonly duplicates: PaymentDuplicateEvent[] = [];

  @OnPaymentEvent('payout.succeeded', 'payout.failed')
  onPayout(event: PaymentWebhookEvent) {
    this.payouts.push(event);
  }

  @OnPaymentEvent('payment.duplicate')
  onDuplicate(event: PaymentDuplicateEvent) {
    this.duplicates.push(event);
  }
}

/** The service's status record of a payout `reference`, settled `success`, of `amount` KES. */
function succeededPayout(reference: string, amount: number) {
  return {
    id: `id-${reference}`,
    code: reference,
    currency: 'KES',
    amount,
    type: 'withdrawal',
    transaction_details: { status: 'success', phone_number: '+254712345678' },
    created_at: new Date().toISOString(),
  };
}

/**
 * The entry of a payout another instance journaled and died sending: `started` until its deadline
 * (1.5 s away), and no answer will ever give it a reference.
 */
function crashedEntry(key: string): PaymentsJournalEntry {
  const startedAt = new Date().toISOString();
  return {
    idempotencyKey: key,
    operation: 'payouts.mpesa',
    account: 'default',
    amount: PAYOUT.amount,
    currency: 'KES',
    fingerprint: 'written-by-the-dead-instance',
    state: 'started',
    version: 1,
    startedAt,
    updatedAt: startedAt,
    deadlineAt: new Date(Date.now() + 1500).toISOString(),
    calls: [{ callId: 'dead-call', startedAt }],
  };
}

/** The payments module of the app under test: the service on loopback, and `journal`. */
const journaledPayments = (service: RecordingServer, journal: InMemoryPaymentsJournal) =>
  PaymentsModule.forRoot({
    apiUsername: 'shop-user',
    apiPassword: 'webhook-journal-spec-password',
    baseUrl: service.url,
    maxRetries: 0,
    defaultCallbackUrl: 'https://shop.example.com/webhooks/payments',
    journal,
  });

describe('PaymentsWebhookModule with the payments journal', () => {
  let service: RecordingServer;
  let app: INestApplication;
  let journal: InMemoryPaymentsJournal;

  beforeAll(async () => {
    service = await RecordingServer.start();
  });
  beforeEach(async () => {
    journal = new InMemoryPaymentsJournal();
    const moduleRef = await Test.createTestingModule({
      // No hold: these cases answer a delivery for a call being sent at once (the hold's own below).
      imports: [
        journaledPayments(service, journal),
        PaymentsWebhookModule.forRoot({ inFlightHoldMs: 0 }),
      ],
      providers: [Handlers],
    }).compile();
    app = moduleRef.createNestApplication({ logger: false });
    await app.listen(0, '127.0.0.1');
  });
  afterEach(async () => {
    await app.close();
    service.reset();
  });
  afterAll(() => service.close());

  /** Delivers `body` to the app's webhook route with `malipo_key` `key`; answers the status. */
  async function deliver(key: string, body: Record<string, unknown>): Promise<number> {
    const response = await fetch(`${await app.getUrl()}/webhooks/payments?malipo_key=${key}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    await response.arrayBuffer();
    return response.status;
  }

  it("tells the handlers the key of the call the journal matched, never a forger's", async () => {
    const secondReference = '9BD141299999eW';
    const payoutAnswers = [
      successBody('payout'),
      { ...successBody('payout'), correlator_id: secondReference },
    ];
    service.fallback = (request) =>
      request.method === 'POST'
        ? { status: 200, body: payoutAnswers.shift() }
        : {
            status: 200,
            body: succeededPayout(
              decodeURIComponent(request.path.split('/').pop()!),
              PAYOUT.amount,
            ),
          };
    const payouts = app.get(PayoutsService);
    const handlers = app.get(Handlers);
    await payouts.mpesa(PAYOUT, { idempotencyKey: 'order-a' });

    // A's genuine reference and amount, under the key of a call not made yet: A's outcome, and
    // A's key, is what the handlers learn.
    const genuineOfA = {
      ...kenyaSuccess,
      transaction_reference: PAYOUT_REFERENCE,
      amount: PAYOUT.amount,
    };
    expect(await deliver('order-b', genuineOfA)).toBe(200);
    expect(handlers.payouts.map((event) => event.idempotencyKey)).toEqual(['order-a']);
    expect(await journal.get('order-a')).toMatchObject({ state: 'succeeded' });

    // B's own call and webhook later: its key, and no false alarm of a second execution.
    await payouts.mpesa(PAYOUT, { idempotencyKey: 'order-b' });
    const genuineOfB = {
      ...kenyaSuccess,
      transaction_reference: secondReference,
      amount: PAYOUT.amount,
    };
    expect(await deliver('order-b', genuineOfB)).toBe(200);
    expect(handlers.payouts.map((event) => event.idempotencyKey)).toEqual(['order-a', 'order-b']);
    expect(handlers.duplicates).toEqual([]);

    // A transaction the journal does not hold, under a key it does not hold: no key is vouched for.
    const unknown = {
      ...kenyaSuccess,
      transaction_reference: '9BD141288888eW',
      amount: PAYOUT.amount,
    };
    expect(await deliver('order-c', unknown)).toBe(200);
    expect(handlers.payouts).toHaveLength(3);
    expect(handlers.payouts[2].idempotencyKey).toBeUndefined();
    expect(handlers.payouts[2].transactionReference).toBe('9BD141288888eW');
  });

  it('reports a known second execution of a call as payment.duplicate, and leaves its entry in doubt for a person', async () => {
    const [first, second] = ['9BD141211111eW', '9BD141222222eW'];
    service.fallback = (request) => ({
      status: 200,
      body: succeededPayout(decodeURIComponent(request.path.split('/').pop()!), PAYOUT.amount),
    });
    const crashed = crashedEntry('order-twice');
    const doubted: PaymentsJournalEntry = {
      ...crashed,
      state: 'in_doubt',
      reference: first,
      otherExecutions: [second],
      reason: 'executed more than once',
      deadlineAt: crashed.startedAt,
      calls: [{ ...crashed.calls[0], outcome: 'accepted', endedAt: crashed.startedAt }],
    };
    await journal.create(doubted);
    const handlers = app.get(Handlers);

    // The second transaction's webhook, by its reference alone (no key in the URL).
    const ofSecond = { ...kenyaSuccess, transaction_reference: second, amount: PAYOUT.amount };
    const response = await fetch(`${await app.getUrl()}/webhooks/payments`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(ofSecond),
    });
    expect(response.status).toBe(200);
    expect(handlers.duplicates).toEqual([
      expect.objectContaining({ idempotencyKey: 'order-twice', references: [first, second] }),
    ]);
    expect(handlers.payouts).toEqual([]);

    // The first's: handled as the call's outcome; the entry waits for a person all the same.
    const ofFirst = { ...kenyaSuccess, transaction_reference: first, amount: PAYOUT.amount };
    expect(await deliver('order-twice', ofFirst)).toBe(200);
    expect(handlers.payouts.map((event) => event.transactionReference)).toEqual([first]);
    expect(await journal.get('order-twice')).toEqual(doubted);
    expect(await app.get(PaymentsReconciler).inDoubt()).toEqual([
      expect.objectContaining({ idempotencyKey: 'order-twice', otherExecutions: [second] }),
    ]);
  });

  it("never lets an event taken for a second execution mark the transaction's own event handled", async () => {
    const other = '9BD141277777eW';
    service.fallback = (request) =>
      request.method === 'POST'
        ? { status: 200, body: successBody('payout') }
        : {
            status: 200,
            body: succeededPayout(
              decodeURIComponent(request.path.split('/').pop()!),
              PAYOUT.amount,
            ),
          };
    await app.get(PayoutsService).mpesa(PAYOUT, { idempotencyKey: 'order-b' });
    const handlers = app.get(Handlers);

    // A genuine payout of the same sum to the same number, made outside the journal, posted by a
    // forger under order-b's key: the journal cannot tell it from a second execution.
    const ofOther = { ...kenyaSuccess, transaction_reference: other, amount: PAYOUT.amount };
    expect(await deliver('order-b', ofOther)).toBe(200);
    expect(handlers.duplicates).toHaveLength(1);
    expect(handlers.payouts).toEqual([]);

    // Its own delivery, as the service sends it: handled, not taken for a copy of the forged one.
    const own = await fetch(`${await app.getUrl()}/webhooks/payments`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(ofOther),
    });
    expect(own.status).toBe(200);
    expect(await own.json()).toMatchObject({ duplicate: false, handled: 1 });
    expect(handlers.payouts.map((event) => event.transactionReference)).toEqual([other]);
    // A copy of the forged delivery is a copy: no second alarm, no handler.
    expect(await deliver('order-b', ofOther)).toBe(200);
    expect(handlers.duplicates).toHaveLength(1);
    expect(handlers.payouts).toHaveLength(1);
  });

  it('answers 503, before any look-up, an event that names by key alone a call being sent', async () => {
    let release = () => {};
    const answered = new Promise<void>((resolve) => (release = resolve));
    service.fallback = (request) =>
      request.method === 'POST'
        ? { status: 200, body: successBody('payout'), after: answered }
        : { status: 404, body: { success: false, message: 'not found' } };
    const call = app.get(PayoutsService).mpesa(PAYOUT, { idempotencyKey: 'salary-7' });
    try {
      await waitFor(
        () => service.requests.find((request) => request.method === 'POST'),
        'the payout at the service',
      );

      // Its key is in a URL anyone may see; its reference is another transaction's.
      const response = await fetch(`${await app.getUrl()}/webhooks/payments?malipo_key=salary-7`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({
          ...kenyaSuccess,
          transaction_reference: 'FORGED000001eW',
          amount: PAYOUT.amount,
        }),
      });

      expect(response.status).toBe(503);
      // No status look-up was spent on it: nothing it could say would settle the call.
      expect(service.requests.filter((request) => request.method === 'GET')).toEqual([]);
    } finally {
      release();
    }
    await call;
    expect(await journal.get('salary-7')).toMatchObject({
      state: 'accepted',
      reference: PAYOUT_REFERENCE,
    });
  });

  it('keeps what it deferred for reconcile(), which settles a call whose process died mid-send', async () => {
    const genuine = '9BD141277777eW';
    const forged = '9BD141266666eW';
    service.fallback = (request) => {
      const reference = decodeURIComponent(request.path.split('/').pop()!);
      // The forger's reference is a real transaction of another amount.
      return {
        status: 200,
        body: succeededPayout(reference, reference === forged ? 1 : PAYOUT.amount),
      };
    };
    await journal.create(crashedEntry('crashed-1'));

    // The service's webhooks arrive while the entry still reads as being sent: deferred, and
    // (a forger's among them) kept unchecked.
    const delivered = { ...kenyaSuccess, amount: PAYOUT.amount };
    expect(await deliver('crashed-1', { ...delivered, transaction_reference: forged })).toBe(503);
    expect(await deliver('crashed-1', { ...delivered, transaction_reference: genuine })).toBe(503);
    expect((await journal.get('crashed-1'))?.deferredEvents).toEqual([
      { reference: forged, kind: 'payout', at: expect.any(String) as string },
      { reference: genuine, kind: 'payout', at: expect.any(String) as string },
    ]);
    expect(service.requests).toEqual([]);

    const reconciler = app.get(PaymentsReconciler);
    await waitFor(
      async () => ((await reconciler.get('crashed-1'))?.state === 'in_doubt' ? true : undefined),
      'the entry past its deadline',
    );
    await reconciler.reconcile();

    // The forger's reference disagrees with the entry (amount); the service's own settles it.
    expect(await journal.get('crashed-1')).toMatchObject({
      state: 'succeeded',
      reference: genuine,
      settledBy: 'status',
    });
  });

  it('drops deferred references the service does not know or that disagree: looked up once', async () => {
    const unknown = '9BD141255555eW';
    const otherAmount = '9BD141244444eW';
    service.fallback = (request) => {
      const reference = decodeURIComponent(request.path.split('/').pop()!);
      return reference === unknown
        ? { status: 404, body: { success: false, message: 'transaction not found' } }
        : { status: 200, body: succeededPayout(reference, 1) };
    };
    await journal.create(crashedEntry('crashed-2'));
    const delivered = { ...kenyaSuccess, amount: PAYOUT.amount };
    for (const reference of [unknown, otherAmount]) {
      expect(await deliver('crashed-2', { ...delivered, transaction_reference: reference })).toBe(
        503,
      );
    }
    const reconciler = app.get(PaymentsReconciler);
    await waitFor(
      async () => ((await reconciler.get('crashed-2'))?.state === 'in_doubt' ? true : undefined),
      'the entry past its deadline',
    );

    await reconciler.reconcile();
    const lookUps = service.requests.filter((request) => request.method === 'GET').length;
    expect(lookUps).toBe(2);
    expect(await journal.get('crashed-2')).toMatchObject({ state: 'in_doubt', deferredEvents: [] });
    await reconciler.reconcile();
    expect(service.requests.filter((request) => request.method === 'GET')).toHaveLength(lookUps);
  });
});

describe('PaymentsWebhookModule with the payments journal: a delivery for a call being sent', () => {
  let service: RecordingServer;
  let app: INestApplication | undefined;

  beforeAll(async () => {
    service = await RecordingServer.start();
  });
  afterEach(async () => {
    await app?.close();
    app = undefined;
    service.reset();
  });
  afterAll(() => service.close());

  /** The app, its journal, and a payout whose answer the service holds until `release()`. */
  async function payoutBeingSent(webhookOptions: { inFlightHoldMs?: number }) {
    const journal = new InMemoryPaymentsJournal();
    const get = jest.spyOn(journal, 'get');
    const moduleRef = await Test.createTestingModule({
      imports: [journaledPayments(service, journal), PaymentsWebhookModule.forRoot(webhookOptions)],
      providers: [Handlers],
    }).compile();
    app = moduleRef.createNestApplication({ logger: false });
    await app.listen(0, '127.0.0.1');
    let release = () => {};
    const answered = new Promise<void>((resolve) => (release = resolve));
    service.fallback = (request) =>
      request.method === 'POST'
        ? { status: 200, body: successBody('payout'), after: answered }
        : { status: 200, body: succeededPayout(PAYOUT_REFERENCE, PAYOUT.amount) };
    const call = app.get(PayoutsService).mpesa(PAYOUT, { idempotencyKey: 'salary-8' });
    await waitFor(
      () => service.requests.find((request) => request.method === 'POST'),
      'the payout at the service',
    );
    const route = `${await app.getUrl()}/webhooks/payments`;
    /**
     * The service's delivery of the payout's webhook, named by its key alone; or a copy of it
     * under another `query`, with `changes` to its body.
     */
    const deliver = (query = '?malipo_key=salary-8', changes: object = {}) =>
      fetch(`${route}${query}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({
          ...kenyaSuccess,
          transaction_reference: PAYOUT_REFERENCE,
          amount: PAYOUT.amount,
          ...changes,
        }),
      });
    const delivery = deliver();
    // Reads of the entry by the webhook module, from here on.
    const before = get.mock.calls.length;
    return {
      app,
      journal,
      call,
      delivery,
      deliver,
      release,
      reads: () => get.mock.calls.length - before,
    };
  }

  it('ends the hold on time when a journal read never answers, for this delivery and the next of the key', async () => {
    const { journal, call, delivery, deliver, release, reads } = await payoutBeingSent({
      inFlightHoldMs: 300,
    });
    await waitFor(() => (reads() >= 1 ? true : undefined), 'the delivery held');
    // The next read of the store hangs for good (a store without a command timeout).
    jest.spyOn(journal, 'get').mockImplementationOnce(() => new Promise(() => undefined));
    // Answered (not held for ever), as a hold that ran out: 503, delivered again later.
    expect((await delivery).status).toBe(503);
    expect((await deliver()).status).toBe(503);
    release();
    await call;
  }, 60_000);

  it('keeps one timer per held key, not one per poll, however long the hold', async () => {
    const { delivery, release, call, reads } = await payoutBeingSent({ inFlightHoldMs: 60_000 });
    const timers = () =>
      process.getActiveResourcesInfo().filter((resource) => resource === 'Timeout').length;
    try {
      await waitFor(() => (reads() >= 2 ? true : undefined), 'the delivery held');
      const early = timers();
      // A dozen more polls of the journal (one every 100 ms).
      const polled = reads();
      await waitFor(() => (reads() >= polled + 12 ? true : undefined), 'a dozen more polls');
      expect(timers() - early).toBeLessThanOrEqual(1);
    } finally {
      release();
    }
    await call;
    expect((await delivery).status).toBe(200);
  });

  it('leaves nothing of its reads on the shutdown signal, which lives as long as the app', async () => {
    const { app, delivery, release, call, reads } = await payoutBeingSent({
      inFlightHoldMs: 60_000,
    });
    try {
      // A dozen polls of the journal, each read raced against its own timer.
      await waitFor(() => (reads() >= 12 ? true : undefined), 'a dozen polls');
    } finally {
      release();
    }
    await call;
    expect((await delivery).status).toBe(200);
    const confirmation: unknown = app.get(PaymentsWebhookConfirmation);
    const { signal } = (confirmation as { closing: AbortController }).closing;
    expect(getEventListeners(signal, 'abort')).toEqual([]);
    // Node 20 keeps every signal `AbortSignal.any()` made of this one in a set of its own, for the
    // signal's life: none may be made per read.
    const dependants = Object.getOwnPropertySymbols(signal)
      .filter((symbol) => symbol.description === 'kDependantSignals')
      .map((symbol) => (signal as unknown as Record<symbol, { size: number }>)[symbol]);
    expect(dependants.map((set) => set.size).filter((size) => size > 0)).toEqual([]);
  });

  it('holds a few deliveries of one call being sent; a flood of more is answered 503 at once', async () => {
    const { app, delivery, deliver, release, call, reads } = await payoutBeingSent({
      inFlightHoldMs: 600_000,
    });
    try {
      await waitFor(() => (reads() >= 1 ? true : undefined), 'the delivery held');
      const held = [delivery, ...Array.from({ length: 4 }, () => deliver())];
      // Five wait for the call's answer (a hold of ten minutes): the sixth and later are turned
      // away while the five still wait.
      const flood = await Promise.all(Array.from({ length: 20 }, () => deliver()));
      expect(flood.map((response) => response.status)).toEqual(Array(20).fill(503));
      release();
      await call;
      const answered = await Promise.all(held);
      expect(answered.map((response) => response.status)).toEqual(Array(5).fill(200));
      expect(app.get(Handlers).payouts).toHaveLength(1);
    } finally {
      release();
    }
  });

  it("answers 503 to a delivery naming no key, or another, while a call it may be is being sent; then hands it over with the call's key", async () => {
    const { app, call, delivery, deliver, release } = await payoutBeingSent({ inFlightHoldMs: 0 });
    /** A copy of the genuine body, its `forward_url` (which names the key) blanked. */
    const forged = (query: string) => deliver(query, { forward_url: '' });
    // A copy of the genuine body with no key, or under a key the journal does not hold, would
    // otherwise be handled keyless and claim the delivery before the call's own.
    expect((await forged('')).status).toBe(503);
    expect((await forged('?malipo_key=never-used')).status).toBe(503);
    release();
    await call;
    expect((await delivery).status).toBe(503);
    // Delivered again after the answer: the call's, with its key.
    expect((await forged('')).status).toBe(200);
    expect(app.get(Handlers).payouts).toEqual([
      expect.objectContaining({
        idempotencyKey: 'salary-8',
        transactionReference: PAYOUT_REFERENCE,
      }),
    ]);
  });

  it('reads the journal once more as a short hold runs out: an answer that came in it counts', async () => {
    const { journal, call, delivery, release, reads } = await payoutBeingSent({
      inFlightHoldMs: 60,
    });
    // The delivery found the entry being sent (a read answered): the hold begins.
    await waitFor(() => (reads() >= 1 ? true : undefined), 'the entry found being sent');
    // The hold's reads answer 10 ms after the call's answer is in (a round trip to Redis on a
    // busy network): the only read of the 60 ms hold starts as it ends, and answers after.
    jest.spyOn(journal, 'get').mockImplementation(async function (
      this: InMemoryPaymentsJournal,
      key: string,
    ) {
      await call;
      await new Promise((resolve) => setTimeout(resolve, 10));
      return InMemoryPaymentsJournal.prototype.get.call(this, key);
    });
    release();
    await call;
    expect((await delivery).status).toBe(200);
  });

  it("waits for the call's answer and handles its webhook in the same delivery, as without the journal", async () => {
    const { app, journal, call, delivery, release, reads } = await payoutBeingSent({});
    // The callback is in before the answer: held (the journal read again and again), not answered.
    await waitFor(() => (reads() >= 3 ? true : undefined), 'the delivery held');
    expect(service.requests.filter((request) => request.method === 'GET')).toEqual([]);
    release();
    await call;
    const response = await delivery;
    expect(response.status).toBe(200);
    expect(await response.json()).toMatchObject({ duplicate: false, handled: 1 });
    expect(app.get(Handlers).payouts).toEqual([
      expect.objectContaining({
        idempotencyKey: 'salary-8',
        transactionReference: PAYOUT_REFERENCE,
      }),
    ]);
    expect(await journal.get('salary-8')).toMatchObject({
      state: 'succeeded',
      reference: PAYOUT_REFERENCE,
      settledBy: 'webhook',
    });
  });

  it('answers 503 once the hold is over, keeping the reference for reconcile()', async () => {
    const { app, journal, call, delivery, release } = await payoutBeingSent({
      inFlightHoldMs: 150,
    });
    try {
      expect((await delivery).status).toBe(503);
      expect((await journal.get('salary-8'))?.deferredEvents).toEqual([
        { reference: PAYOUT_REFERENCE, kind: 'payout', at: expect.any(String) as string },
      ]);
      expect(app.get(Handlers).payouts).toEqual([]);
    } finally {
      release();
    }
    await call;
  });

  it('answers a held delivery 503 when the app shuts down, without waiting out the hold', async () => {
    const { app, delivery, release, call } = await payoutBeingSent({ inFlightHoldMs: 600_000 });
    try {
      await waitFor(
        () => service.requests.find((request) => request.method === 'POST'),
        'the payout at the service',
      );
      // A hold of ten minutes, and the test's own timeout of seconds: only the shutdown ends it.
      const closed = app.close();
      expect((await delivery).status).toBe(503);
      release();
      await call.catch(() => undefined);
      await closed;
    } finally {
      release();
    }
  });

  it.each([-1, 1.5, '3000'])('refuses inFlightHoldMs %p at boot', async (inFlightHoldMs) => {
    const moduleRef = await Test.createTestingModule({
      imports: [
        journaledPayments(service, new InMemoryPaymentsJournal()),
        PaymentsWebhookModule.forRoot({ inFlightHoldMs: inFlightHoldMs as number }),
      ],
    }).compile();
    const booting = moduleRef.createNestApplication({ logger: false });
    await expect(booting.init()).rejects.toThrow('inFlightHoldMs must be a non-negative integer');
    await booting.close().catch(() => undefined);
  });
});

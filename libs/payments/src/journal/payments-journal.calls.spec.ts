import { Logger } from '@nestjs/common';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { runInNewContext } from 'node:vm';
import { executedMoreThanOnce, journalEntry } from '../../spec-support/journal-entries';
import { OPERATION_CASES, successBody } from '../../spec-support/operation-cases';
import { RecordingServer } from '../../spec-support/recording-server';
import { waitFor } from '../../spec-support/wait-for';
import type { RecordedRequest } from '../../spec-support/recording-server';
import { createPaymentsClient } from '../create-payments-client';
import {
  PaymentsJournalError,
  PaymentsReconcilerError,
  PaymentsValidationError,
  ServiceAPIError,
} from '../errors';
import { ON_WIRE } from '../operation-runner';
import { OPERATIONS } from '../operations';
import type { PaymentsOperation } from '../operations';
import type { InternalCallOptions } from '../operation-runner';
import { PaymentsExceptionFilter } from '../payments-exception.filter';
import type { PaymentsClient } from '../payments-client';
import { InMemoryPaymentsJournal } from './in-memory-payments-journal';
import { PAYMENTS_CONFIRMATION_WINDOW_MS } from './payments-journal.interfaces';
import type { PaymentsJournalEntry, PaymentsJournalStore } from './payments-journal.interfaces';

const MPESA_PAYOUT = OPERATION_CASES.find((c) => c.operation === 'payouts.mpesa')!;
const CARD = OPERATION_CASES.find((c) => c.operation === 'collections.card')!;
const MPESA_COLLECTION = OPERATION_CASES.find((c) => c.operation === 'collections.mpesa')!;
const PAYOUT = MPESA_PAYOUT.request as { phoneNumber: string; amount: number; narration: string };
const PAYOUT_REFERENCE = '9BD141203407eW';

type Mutable<T> = { -readonly [K in keyof T]: T[K] };

/** The rejection of `promise`, which must reject. */
async function rejection(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    () => {
      throw new Error('the call was not refused');
    },
    (error: unknown) => error,
  );
}

/** A status record of `reference` as the service answers it. */
function statusRecord(reference: string, status: string, amount: number) {
  return {
    id: 'id-1',
    code: reference,
    currency: 'KES',
    amount,
    type: 'withdrawal',
    transaction_details: { status, phone_number: '+254712345678' },
  };
}

/** A confirmed webhook of the payout's success under `idempotencyKey`, naming `reference`. */
function payoutWebhook(idempotencyKey: string, reference: string) {
  return {
    idempotencyKey,
    reference,
    outcome: 'succeeded',
    amount: PAYOUT.amount,
    currency: 'KES',
    kind: 'payout',
    by: 'webhook',
  } as const;
}

const RESOLUTION = { outcome: 'refused', note: 'ops: not in the dashboard' } as const;

/** A client whose journal store is down, called 25 times at once (run by a child process). */
const OUTAGE_OF_25_CALLS = `
const { createPaymentsClient } = require('./create-payments-client');
const down = () => Promise.reject(new Error('store down'));
const client = createPaymentsClient({
  apiUsername: 'u', apiPassword: 'outage-spec-password', baseUrl: 'http://127.0.0.1:9',
  defaultUsername: 'acme', journal: { create: down, replace: down, get: down, findByReference: down, list: down },
});
const payout = { phoneNumber: '0712345678', amount: 100, narration: 'x', callbackUrl: 'https://a.b/c' };
Promise.all(Array.from({ length: 25 }, (_, i) =>
  client.payouts.mpesa(payout, { idempotencyKey: 'outage-' + i }).catch((error) => error.code),
)).then(async (codes) => {
  await new Promise((resolve) => setTimeout(resolve, 100));
  process.stdout.write('\\ncodes: ' + codes.join(',') + '\\n');
  await client.close();
});
`;

describe('the payments journal, through a client over loopback HTTP', () => {
  let server: RecordingServer;
  let store: InMemoryPaymentsJournal;
  const clients: PaymentsClient[] = [];

  const client = (options: { journal?: PaymentsJournalStore; password?: string } = {}) => {
    const made = createPaymentsClient({
      apiUsername: 'u',
      apiPassword: options.password ?? 'journal-spec-password',
      baseUrl: server.url,
      maxRetries: 0,
      timeout: 5000,
      journal: options.journal ?? store,
    });
    clients.push(made);
    return made;
  };
  const posts = () => server.requests.filter((request) => request.method === 'POST');

  beforeAll(async () => {
    server = await RecordingServer.start();
  });
  beforeEach(() => {
    store = new InMemoryPaymentsJournal();
    server.fallback = (request: RecordedRequest) =>
      request.method === 'GET'
        ? { status: 200, body: statusRecord(PAYOUT_REFERENCE, 'success', PAYOUT.amount) }
        : {
            status: 200,
            body: successBody(request.path.includes('withdrawal') ? 'payout' : 'card'),
          };
  });
  afterEach(async () => {
    jest.restoreAllMocks();
    await Promise.all(clients.splice(0).map((made) => made.close()));
    server.reset();
  });
  afterAll(() => server.close());

  it('journals the intent before sending, then the answer; no phone number, name or narration', async () => {
    let seenWhileSending: Promise<PaymentsJournalEntry | undefined> | undefined;
    server.fallback = () => {
      // Read as the request arrives: the in-memory store answers from its state at this moment.
      seenWhileSending = store.get('salary-1');
      return { status: 200, body: successBody('payout') };
    };
    const payments = client();
    await payments.payouts.mpesa(PAYOUT, { idempotencyKey: 'salary-1' });

    expect(await seenWhileSending).toMatchObject({
      idempotencyKey: 'salary-1',
      operation: 'payouts.mpesa',
      account: 'default',
      amount: PAYOUT.amount,
      currency: 'KES',
      state: 'started',
      version: 1,
    });
    const entry = await store.get('salary-1');
    expect(entry).toMatchObject({
      state: 'accepted',
      reference: PAYOUT_REFERENCE,
      answer: { success: true, transaction_reference: PAYOUT_REFERENCE },
      calls: [{ outcome: 'accepted', endedAt: expect.any(String) as string }],
    });
    const written = JSON.stringify(entry);
    for (const secret of [
      '0712345678',
      '254712345678',
      PAYOUT.narration,
      'journal-spec-password',
    ]) {
      expect(written).not.toContain(secret);
    }
    expect(Date.parse(entry!.deadlineAt)).toBeGreaterThan(Date.parse(entry!.startedAt));
  });

  /** As another instance writes it while this one's send is on the wire: `change` over it. */
  const rewriteWhileSending = (
    key: string,
    change: Partial<PaymentsJournalEntry>,
    answer: { status: number; body?: unknown },
  ) => {
    server.fallback = () => {
      const held = (store as unknown as { entries: Map<string, PaymentsJournalEntry> }).entries;
      const entry = held.get(key)!;
      void store.replace({ ...entry, ...change, version: entry.version + 1 });
      return answer;
    };
  };

  it('a send that may have executed reopens an entry a person resolved refused meanwhile: in doubt, never sent again', async () => {
    const payments = client();
    // The sender stalled past its deadline; on another instance a person resolved it refused.
    rewriteWhileSending(
      'stalled-1',
      { state: 'refused', settledBy: 'manual', note: 'ops: not in the dashboard' },
      { status: 502, body: { message: 'bad gateway' } },
    );
    const error = await rejection(payments.payouts.mpesa(PAYOUT, { idempotencyKey: 'stalled-1' }));
    expect(error).toMatchObject({ mayHaveExecuted: true });

    const entry = await store.get('stalled-1');
    expect(entry).toMatchObject({ state: 'in_doubt', note: 'ops: not in the dashboard' });
    expect(entry?.settledBy).toBeUndefined();
    expect(entry?.reason).toMatch(/may have executed/);
    const sent = posts().length;
    expect(
      await rejection(payments.payouts.mpesa(PAYOUT, { idempotencyKey: 'stalled-1' })),
    ).toMatchObject({ code: 'IN_DOUBT' });
    expect(posts()).toHaveLength(sent);
  });

  it('a second send under a key accepted with another reference leaves the entry in doubt naming both', async () => {
    const payments = client();
    // Another send under the key was accepted first, with a reference of its own.
    rewriteWhileSending(
      'twice-1',
      { state: 'accepted', reference: '9BD000000001eW' },
      { status: 200, body: successBody('payout') },
    );
    await payments.payouts.mpesa(PAYOUT, { idempotencyKey: 'twice-1' });

    const entry = await store.get('twice-1');
    expect(entry).toMatchObject({ state: 'in_doubt', reference: '9BD000000001eW' });
    expect(entry?.reason).toContain('9BD000000001eW');
    expect(entry?.reason).toContain(PAYOUT_REFERENCE);
    expect(entry?.otherExecutions).toEqual([PAYOUT_REFERENCE]);
    expect((await store.findByReference(PAYOUT_REFERENCE))?.idempotencyKey).toBe('twice-1');
    // The service's final record of the first transaction settles nothing: a person looks.
    server.fallback = () => ({
      status: 200,
      body: statusRecord('9BD000000001eW', 'success', PAYOUT.amount),
    });
    await payments.reconciler.reconcile();
    expect(await payments.reconciler.inDoubt()).toEqual([
      expect.objectContaining({ idempotencyKey: 'twice-1', state: 'in_doubt' }),
    ]);
  });

  it('holds in doubt, with no reference, a call answered with the reference another call holds', async () => {
    const payments = client();
    const logged = jest.spyOn(Logger.prototype, 'error').mockImplementation(() => undefined);
    await payments.payouts.mpesa(PAYOUT, { idempotencyKey: 'refund-1' });
    // A service that answers another payout of the same sum and phone with the first one's
    // answer (a duplicate filter), executing nothing: the reference is refund-1's.
    const second = await payments.payouts.mpesa(PAYOUT, { idempotencyKey: 'refund-2' });
    expect(second.transactionReference).toBe(PAYOUT_REFERENCE);

    const entry = await store.get('refund-2');
    expect(entry).toMatchObject({ state: 'in_doubt' });
    expect(entry?.reference).toBeUndefined();
    expect(entry?.reason).toContain(PAYOUT_REFERENCE);
    expect(entry?.reason).toContain('refund-1');
    expect(entry?.calls[0]).toMatchObject({ outcome: 'in_doubt' });
    expect((await store.findByReference(PAYOUT_REFERENCE))?.idempotencyKey).toBe('refund-1');
    expect(logged.mock.calls.flat().join('\n')).toContain('refund-2');

    // The record of the one transaction settles refund-1 alone.
    await payments.reconciler.reconcile();
    expect(await store.get('refund-1')).toMatchObject({ state: 'succeeded', settledBy: 'status' });
    expect(await store.get('refund-2')).toMatchObject({ state: 'in_doubt' });
    // Nor does its webhook under refund-2's key settle it: the reference is refund-1's.
    expect(
      await payments.reconciler.settle(payoutWebhook('refund-2', PAYOUT_REFERENCE)),
    ).toMatchObject({ result: 'contradicted' });
    // And refund-2 is not sent again without a person or `resend`.
    expect(
      await rejection(payments.payouts.mpesa(PAYOUT, { idempotencyKey: 'refund-2' })),
    ).toMatchObject({ code: 'IN_DOUBT' });
    expect(posts()).toHaveLength(2);
    // The other call's answer is not kept as this one's: a person who finds the call never
    // executed resolves it refused, and it is sent again as a retry.
    expect(entry?.answer).toBeUndefined();
    await payments.reconciler.resolve('refund-2', RESOLUTION);
    server.fallback = () => ({
      status: 200,
      body: { ...successBody('payout'), correlator_id: '9BD100000002eW' },
    });
    await payments.payouts.mpesa(PAYOUT, { idempotencyKey: 'refund-2' });
    expect(await store.get('refund-2')).toMatchObject({
      state: 'accepted',
      reference: '9BD100000002eW',
    });
    expect(posts()).toHaveLength(3);
  });

  it("keeps an entry settled on its own reference when its late answer gives another call's", async () => {
    const payments = client();
    jest.spyOn(Logger.prototype, 'error').mockImplementation(() => undefined);
    await payments.payouts.mpesa(PAYOUT, { idempotencyKey: 'owner-1' });
    // A webhook settled late-2 on its own reference while its answer, another call's, was on
    // its way.
    rewriteWhileSending(
      'late-2',
      { state: 'succeeded', reference: '9BD000000009eW', settledBy: 'webhook' },
      { status: 200, body: successBody('payout') },
    );
    const late = await payments.payouts.mpesa(PAYOUT, { idempotencyKey: 'late-2' });
    expect(late.transactionReference).toBe(PAYOUT_REFERENCE);

    const entry = await store.get('late-2');
    expect(entry).toMatchObject({ state: 'succeeded', reference: '9BD000000009eW' });
    expect(entry?.otherExecutions).toBeUndefined();
    // Not kept, so never replayed as this call's answer.
    expect(entry?.answer).toBeUndefined();
    expect((await store.findByReference(PAYOUT_REFERENCE))?.idempotencyKey).toBe('owner-1');
  });

  it('lets one of two calls answered at once with one reference keep it, and holds the other in doubt', async () => {
    jest.spyOn(Logger.prototype, 'error').mockImplementation(() => undefined);
    // A store a network away: each answer's check of its reference is over before either is
    // written, so both find it free.
    const slow = async <T>(answer: () => Promise<T>) => {
      await new Promise((resolve) => setTimeout(resolve, 30));
      return answer();
    };
    const remote: PaymentsJournalStore = {
      create: (entry) => slow(() => store.create(entry)),
      replace: (entry) => slow(() => store.replace(entry)),
      get: (key) => slow(() => store.get(key)),
      findByReference: (reference) => slow(() => store.findByReference(reference)),
      list: (query) => slow(() => store.list(query)),
    };
    const payments = client({ journal: remote });
    await Promise.all(
      ['twin-1', 'twin-2'].map((key) => payments.payouts.mpesa(PAYOUT, { idempotencyKey: key })),
    );
    // Checked again once the callers have their answers: close() waits for it.
    await payments.close();
    const entries = await Promise.all(['twin-1', 'twin-2'].map((key) => store.get(key)));
    const holder = await store.findByReference(PAYOUT_REFERENCE);
    expect(entries.filter((entry) => entry?.reference === PAYOUT_REFERENCE)).toEqual([holder]);
    const other = entries.find((entry) => entry !== holder);
    expect(other).toMatchObject({ state: 'in_doubt' });
    expect(other?.reference).toBeUndefined();
    expect(other?.answer).toBeUndefined();
    expect(other?.reason).toContain(holder?.idempotencyKey);
  });

  it('answers an executed call and journals it when the store cannot tell who holds its reference', async () => {
    const warned = jest.spyOn(Logger.prototype, 'warn').mockImplementation(() => undefined);
    const throwing: PaymentsJournalStore = {
      create: (entry) => store.create(entry),
      replace: (entry) => store.replace(entry),
      get: (key) => store.get(key),
      findByReference: () => {
        throw new Error('pool closed');
      },
      list: (query) => store.list(query),
    };
    const answer = await client({ journal: throwing }).payouts.mpesa(PAYOUT, {
      idempotencyKey: 'unchecked-1',
    });
    expect(answer.transactionReference).toBe(PAYOUT_REFERENCE);
    // A look-up that never answers holds the answer back for a while, not for ever.
    const silent: PaymentsJournalStore = {
      ...throwing,
      findByReference: () => new Promise(() => undefined),
    };
    const late = await client({ journal: silent }).payouts.mpesa(PAYOUT, {
      idempotencyKey: 'unchecked-2',
    });
    expect(late.transactionReference).toBe(PAYOUT_REFERENCE);
    for (const key of ['unchecked-1', 'unchecked-2']) {
      expect(await store.get(key)).toMatchObject({
        state: 'accepted',
        reference: PAYOUT_REFERENCE,
      });
    }
    expect(warned).not.toHaveBeenCalled();
  });

  it('journals the amount as sent: the decimal a sum stands for, as the wire and the ledger carry it', async () => {
    const payments = client();
    await payments.payouts.mpesa({ ...PAYOUT, amount: 10.1 + 0.2 }, { idempotencyKey: 'sum-1' });
    expect(posts()[0].json).toMatchObject({ amount: 10.3 });
    expect(await store.get('sum-1')).toMatchObject({ amount: 10.3 });
  });

  it('answers a repeated key from the journal: replayed, nothing sent, no personal data', async () => {
    const payments = client();
    const first = await payments.payouts.mpesa(PAYOUT, { idempotencyKey: 'salary-2' });
    const again = await payments.payouts.mpesa(PAYOUT, { idempotencyKey: 'salary-2' });

    expect(posts()).toHaveLength(1);
    expect(again).toMatchObject({
      replayed: true,
      success: true,
      transactionReference: first.transactionReference,
      status: first.status,
      message: first.message,
      amount: PAYOUT.amount,
    });
    expect(first.replayed).toBeUndefined();
    expect(JSON.stringify(again._raw)).not.toContain('0712345678');
  });

  it('keeps no phone number or name an accepting answer echoes, nor replays one', async () => {
    const panAfrican = OPERATION_CASES.find((c) => c.operation === 'payouts.panAfrican')!;
    const request = panAfrican.request as { accountHolderName: string; phoneNumber: string };
    server.fallback = () => ({
      status: 200,
      body: {
        ...successBody('payout'),
        message: `Sent to ADA OBI (+234 803 123 4567, account 0123456789) by 08031234567`,
        trackingId: 'ada-obi-2348031234567',
        reference: '08031234567',
      },
    });
    const payments = client();
    const first = await payments.payouts.panAfrican(request as never, { idempotencyKey: 'pa-1' });
    const again = await payments.payouts.panAfrican(request as never, { idempotencyKey: 'pa-1' });

    expect(first.message).toContain('ADA OBI');
    // Read without what is random or a keyed hash (a call's UUID, the fingerprints), whose
    // letters may spell `ada` by chance: the fields that hold text are what is checked.
    const {
      calls,
      fingerprint: _fingerprint,
      payee: _payee,
      ...entry
    } = (await store.get('pa-1'))!;
    const kept = JSON.stringify({ ...entry, calls: calls.map(({ callId: _id, ...call }) => call) });
    for (const text of [/ada/i, /obi/i, /803\D?123\D?4567/, /0123456789/]) {
      expect(kept).not.toMatch(text);
      expect(JSON.stringify({ ...again, raw: again._raw })).not.toMatch(text);
    }
    expect(again).toMatchObject({
      replayed: true,
      message: expect.stringContaining('Sent to'),
      status: first.status,
      transactionReference: first.transactionReference,
    });
    expect(posts()).toHaveLength(1);
  });

  it('replays a checkout URL whole, whatever it holds: a masked link would not open', async () => {
    const request = CARD.request as { phoneNumber: string };
    const checkoutUrl = `https://pay.example.com/checkout?msisdn=254${request.phoneNumber.slice(-9)}&sig=abc`;
    server.fallback = () => ({
      status: 200,
      body: { ...successBody('card'), checkout_url: checkoutUrl },
    });
    const payments = client();
    await payments.collections.card(CARD.request, { idempotencyKey: 'c-url' });
    const again = await payments.collections.card(CARD.request, { idempotencyKey: 'c-url' });

    expect(again).toMatchObject({ replayed: true, checkoutUrl });
  });

  it('tells its own callers (payout runs) when a call goes to the wire: after the write-ahead, once', async () => {
    /** The in-memory store, remembering the entry it was last given. */
    class WatchedJournal extends InMemoryPaymentsJournal {
      latest?: PaymentsJournalEntry;
      override create(entry: PaymentsJournalEntry) {
        this.latest = entry;
        return super.create(entry);
      }
      override replace(entry: PaymentsJournalEntry) {
        this.latest = entry;
        return super.replace(entry);
      }
    }
    const watched = new WatchedJournal();
    const payments = client({ journal: watched });
    const seen: { key?: string; state?: string; requestsSoFar: number }[] = [];
    const onWire = () =>
      seen.push({
        key: watched.latest?.idempotencyKey,
        state: watched.latest?.state,
        requestsSoFar: server.requests.length,
      });
    const options: InternalCallOptions = { idempotencyKey: 'wire-1', [ON_WIRE]: onWire };

    await payments.payouts.mpesa(PAYOUT, options);
    expect(seen).toEqual([{ key: 'wire-1', state: 'started', requestsSoFar: 0 }]);
    expect(posts()).toHaveLength(1);

    // Answered from the journal, or refused before sending: nothing goes to the wire.
    await payments.payouts.mpesa(PAYOUT, options);
    await rejection(
      payments.payouts.mpesa({ ...PAYOUT, amount: -1 }, { ...options, idempotencyKey: 'wire-2' }),
    );
    expect(seen).toHaveLength(1);
    expect(posts()).toHaveLength(1);
  });

  it('replays a card collection with its checkout URL', async () => {
    const payments = client();
    const first = await payments.collections.card(CARD.request, { idempotencyKey: 'c-1' });
    const again = await payments.collections.card(CARD.request, { idempotencyKey: 'c-1' });

    expect(posts()).toHaveLength(1);
    expect(again.checkoutUrl).toBe(first.checkoutUrl);
    expect(again.replayed).toBe(true);
  });

  it('sends a refused call again under its key (it never executed)', async () => {
    server.reply({ status: 400, body: { success: false, status: 400, message: 'bad number' } });
    const payments = client();
    const error = await rejection(payments.payouts.mpesa(PAYOUT, { idempotencyKey: 'salary-3' }));
    expect(error).toMatchObject({ code: 'SERVICE_ERROR', mayHaveExecuted: false });
    expect(await store.get('salary-3')).toMatchObject({
      state: 'refused',
      reason: 'SERVICE_ERROR (HTTP 400): not executed',
      calls: [
        { outcome: 'refused', mayHaveExecuted: false, httpStatus: 400, code: 'SERVICE_ERROR' },
      ],
    });

    await payments.payouts.mpesa(PAYOUT, { idempotencyKey: 'salary-3' });

    expect(posts()).toHaveLength(2);
    expect(await store.get('salary-3')).toMatchObject({ state: 'accepted', version: 4 });
    expect((await store.get('salary-3'))?.calls).toHaveLength(2);
  });

  it('holds a payout answered 303 in doubt, not refused: the same key is not sent again', async () => {
    server.reply({ status: 303, headers: { Location: 'https://service.example/done' } });
    const payments = client();
    await expect(
      payments.payouts.mpesa(PAYOUT, { idempotencyKey: 'salary-303' }),
    ).rejects.toMatchObject({ code: 'SERVICE_ERROR', status: 303, mayHaveExecuted: true });

    await expect(
      payments.payouts.mpesa(PAYOUT, { idempotencyKey: 'salary-303' }),
    ).rejects.toMatchObject({ code: 'IN_DOUBT', entry: { state: 'in_doubt' } });
    expect(posts()).toHaveLength(1);
  });

  it('stops a key whose call may have executed: IN_DOUBT with the entry, until resend: true', async () => {
    server.reply({ status: 500, body: { message: 'upstream' } });
    const payments = client();
    await expect(
      payments.payouts.mpesa(PAYOUT, { idempotencyKey: 'salary-4' }),
    ).rejects.toMatchObject({ code: 'SERVICE_ERROR', mayHaveExecuted: true });

    const error = await rejection(payments.payouts.mpesa(PAYOUT, { idempotencyKey: 'salary-4' }));

    expect(error).toBeInstanceOf(PaymentsJournalError);
    expect(error).toBeInstanceOf(ServiceAPIError);
    expect(error).toMatchObject({
      code: 'IN_DOUBT',
      mayHaveExecuted: true,
      attempts: 0,
      idempotencyKey: 'salary-4',
      entry: { state: 'in_doubt', reason: 'SERVICE_ERROR (HTTP 500): may have executed' },
    });
    expect(posts()).toHaveLength(1);
    expect(new PaymentsExceptionFilter().toResponse(error as PaymentsJournalError)).toMatchObject({
      statusCode: 409,
      code: 'IN_DOUBT',
      mayHaveExecuted: true,
    });

    const resent = await payments.payouts.mpesa(PAYOUT, {
      idempotencyKey: 'salary-4',
      resend: true,
    });
    expect(resent.replayed).toBeUndefined();
    expect(posts()).toHaveLength(2);
    expect((await store.get('salary-4'))?.calls.map((call) => call.resend)).toEqual([
      undefined,
      true,
    ]);
  });

  it('takes no call option from Object.prototype: a polluted resend or idempotencyKey is none', async () => {
    server.reply({ status: 500, body: { message: 'upstream' } });
    const payments = client();
    await expect(
      payments.payouts.mpesa(PAYOUT, { idempotencyKey: 'salary-9' }),
    ).rejects.toMatchObject({ mayHaveExecuted: true });
    const polluted = Object.prototype as Record<string, unknown>;
    try {
      polluted.resend = true;
      polluted.idempotencyKey = 'salary-9';
      await expect(
        payments.payouts.mpesa(PAYOUT, { idempotencyKey: 'salary-9' }),
      ).rejects.toMatchObject({ code: 'IN_DOUBT' });
      server.reply({ status: 200, body: successBody('payout') });
      const other = await payments.payouts.mpesa(PAYOUT, {});
      expect(Object.hasOwn(other, 'replayed')).toBe(false);
    } finally {
      delete polluted.resend;
      delete polluted.idempotencyKey;
    }
    expect(posts()).toHaveLength(2);
    expect(posts()[1].headers['idempotency-key']).not.toBe('salary-9');
  });

  it('refuses a failed key before sending: a new attempt needs a new key', async () => {
    const payments = client();
    await payments.payouts.mpesa(PAYOUT, { idempotencyKey: 'salary-5' });
    server.fallback = (request) =>
      request.method === 'GET'
        ? { status: 200, body: statusRecord(PAYOUT_REFERENCE, 'failed', PAYOUT.amount) }
        : { status: 200, body: successBody('payout') };
    const summary = await payments.reconciler.reconcile();
    expect(summary).toMatchObject({ checked: 1, changed: 1, lookupFailures: 0 });
    expect(summary.totals.failed).toEqual({ KES: { count: 1, amount: PAYOUT.amount } });

    const error = await rejection(payments.payouts.mpesa(PAYOUT, { idempotencyKey: 'salary-5' }));

    expect(error).toMatchObject({ code: 'ALREADY_FAILED', mayHaveExecuted: false });
    expect((error as Error).message).toMatch(/new idempotencyKey/);
    expect(posts()).toHaveLength(1);
  });

  it('refuses another request under a known key, across clients sharing the journal', async () => {
    await client().payouts.mpesa(PAYOUT, { idempotencyKey: 'salary-6' });
    // A second instance: its own in-process key memory is empty, the journal is shared.
    const error = await rejection(
      client().payouts.mpesa({ ...PAYOUT, amount: 5000 }, { idempotencyKey: 'salary-6' }),
    );

    expect(error).toBeInstanceOf(PaymentsValidationError);
    expect((error as PaymentsValidationError).errors).toEqual([
      expect.objectContaining({ field: 'idempotencyKey', rule: 'reused' }),
    ]);
    expect(posts()).toHaveLength(1);
  });

  it('sends one request for one key called twice at once; the other stops IN_PROGRESS', async () => {
    server.fallback = () => ({ status: 200, body: successBody('payout'), delayMs: 200 });
    const payments = client();
    const results = await Promise.allSettled([
      payments.payouts.mpesa(PAYOUT, { idempotencyKey: 'salary-7' }),
      payments.payouts.mpesa(PAYOUT, { idempotencyKey: 'salary-7' }),
    ]);

    expect(posts()).toHaveLength(1);
    expect(results.map((result) => result.status).sort()).toEqual(['fulfilled', 'rejected']);
    const stopped = results.find((result) => result.status === 'rejected');
    const { reason } = stopped as PromiseRejectedResult;
    expect(reason).toMatchObject({ code: 'IN_PROGRESS', mayHaveExecuted: true });
    // After a crash the same entry stops a retry: the error says until when.
    const { deadlineAt } = (reason as PaymentsJournalError).entry!;
    expect((reason as Error).message).toContain(
      `or its process died mid-send: it counts as in doubt after its deadline (${deadlineAt})`,
    );
  });

  it('sends nothing when the journal cannot be written: JOURNAL_UNAVAILABLE, not executed', async () => {
    const broken: PaymentsJournalStore = {
      create: () => Promise.reject(new Error('disk full')),
      replace: () => Promise.reject(new Error('disk full')),
      get: () => Promise.reject(new Error('disk full')),
      findByReference: () => Promise.reject(new Error('disk full')),
      list: () => Promise.reject(new Error('disk full')),
    };
    const error = await rejection(
      client({ journal: broken }).payouts.mpesa(PAYOUT, { idempotencyKey: 'salary-8' }),
    );

    expect(error).toBeInstanceOf(PaymentsJournalError);
    expect(error).toMatchObject({ code: 'JOURNAL_UNAVAILABLE', mayHaveExecuted: false });
    expect(server.requests).toHaveLength(0);
    expect(new PaymentsExceptionFilter().toResponse(error as PaymentsJournalError)).toMatchObject({
      statusCode: 503,
    });
  });

  it('refuses every call of an outage without Node warning of a listener leak (their undos wait)', () => {
    // Node prints its warnings on the process's stderr, which a jest test does not see: a child's.
    const child = spawnSync(
      process.execPath,
      ['-r', 'ts-node/register/transpile-only', '-e', OUTAGE_OF_25_CALLS],
      { cwd: join(__dirname, '..'), encoding: 'utf8', timeout: 60_000 },
    );
    expect(/^codes: (.*)$/m.exec(child.stdout)?.[1]).toBe(
      Array(25).fill('JOURNAL_UNAVAILABLE').join(','),
    );
    expect(child.stderr).not.toContain('MaxListenersExceededWarning');
  });

  it('neither replays nor refuses a key on the entry of another its store answers (keys cut short)', async () => {
    /** A store on a VARCHAR(64) key column: keys that share their first 64 characters are one. */
    const cutting = new InMemoryPaymentsJournal();
    const holderOf = async (key: string) =>
      (await cutting.list()).find((held) => held.idempotencyKey.slice(0, 64) === key.slice(0, 64));
    const truncating: PaymentsJournalStore = {
      create: async (entry) => {
        const holder = await holderOf(entry.idempotencyKey);
        return holder ? { created: false, entry: holder } : cutting.create(entry);
      },
      replace: (next) => cutting.replace(next),
      get: holderOf,
      findByReference: (reference) => cutting.findByReference(reference),
      list: (query) => cutting.list(query),
    };
    const payments = client({ journal: truncating });
    const prefix = `order-${'x'.repeat(70)}`;
    await payments.payouts.mpesa(PAYOUT, { idempotencyKey: `${prefix}-1` });

    const error = await rejection(
      payments.payouts.mpesa(PAYOUT, { idempotencyKey: `${prefix}-2` }),
    );

    expect(error).toMatchObject({ code: 'JOURNAL_UNAVAILABLE', mayHaveExecuted: false });
    expect((error as Error).message).not.toContain('replayed');
    expect(posts()).toHaveLength(1);
    await expect(payments.reconciler.get(`${prefix}-2`)).rejects.toMatchObject({
      code: 'STORE_FAILED',
    });
  });

  it('answers from what the key holds when its store takes the same request for its own insert', async () => {
    const held = new InMemoryPaymentsJournal();
    /** An insert conditioned on "the key absent, or held with the same fingerprint". */
    const lenient: PaymentsJournalStore = {
      create: async (entry) => {
        const there = await held.get(entry.idempotencyKey);
        return there?.fingerprint === entry.fingerprint
          ? { created: true, entry: there }
          : held.create(entry);
      },
      replace: (next) => held.replace(next),
      get: (key) => held.get(key),
      findByReference: (reference) => held.findByReference(reference),
      list: (query) => held.list(query),
    };
    const payments = client({ journal: lenient });
    const first = await payments.payouts.mpesa(PAYOUT, { idempotencyKey: 'salary-lenient' });

    const again = await payments.payouts.mpesa(PAYOUT, { idempotencyKey: 'salary-lenient' });

    expect(again).toMatchObject({
      replayed: true,
      transactionReference: first.transactionReference,
    });
    expect(posts()).toHaveLength(1);
  });

  it('refuses a call, unsent and typed, on an entry its store gives back without its empty list of calls', async () => {
    const held = new InMemoryPaymentsJournal();
    /** A serialiser that leaves empty lists out, as some compacting encoders do. */
    const compacting = (entry: PaymentsJournalEntry | undefined) => {
      if (entry?.calls.length !== 0) return entry;
      const { calls: _calls, ...rest } = entry;
      return rest as PaymentsJournalEntry;
    };
    const dropping: PaymentsJournalStore = {
      create: async (entry) => {
        const answer = await held.create(entry);
        return { ...answer, entry: compacting(answer.entry)! };
      },
      replace: (next) => held.replace(next),
      get: async (key) => compacting(await held.get(key)),
      findByReference: (reference) => held.findByReference(reference),
      list: (query) => held.list(query),
    };
    // A key held by a payout run's takeover: in doubt, with no send of its own.
    await held.create(journalEntry('salary-held-key', { state: 'in_doubt', calls: [] }));
    const payments = client({ journal: dropping });

    const error = await rejection(
      payments.payouts.mpesa(PAYOUT, { idempotencyKey: 'salary-held-key' }),
    );

    expect(error).toMatchObject({
      name: 'PaymentsJournalError',
      code: 'JOURNAL_UNAVAILABLE',
      mayHaveExecuted: false,
    });
    expect(posts()).toHaveLength(0);
    await expect(payments.reconciler.get('salary-held-key')).rejects.toMatchObject({
      code: 'STORE_FAILED',
    });
  });

  it('tells an entry of another payout under a key from one of the same payout (payout runs)', async () => {
    const payments = client();
    const PAN_AFRICAN = OPERATION_CASES.find((c) => c.operation === 'payouts.panAfrican')!;
    const MERCHANT = OPERATION_CASES.find((c) => c.operation === 'payouts.merchant')!;
    const operation = (name: string) =>
      Object.values(OPERATIONS).find((each) => each.name === name) as PaymentsOperation<
        object,
        unknown
      >;
    for (const [known, edited] of [
      // Another Paybill for the same sum, from the same company phone.
      [MERCHANT, { businessAccount: '999991', businessNumber: 'ACC-2' }],
      // Another bank account for the same sum, the same phone number.
      [PAN_AFRICAN, { accountNumber: '9999999999', accountHolderName: 'Someone Else' }],
      [MPESA_PAYOUT, { phoneNumber: '0799991234' }],
      [MPESA_PAYOUT, { amount: PAYOUT.amount + 1 }],
    ] as const) {
      const key = `edited-${known.operation}-${Object.keys(edited).join('-')}`;
      const held = await payments.payouts.holdKey(
        operation(known.operation),
        known.request,
        key,
        'in_doubt',
        'spec',
      );
      const same = { ...(known.request as object) };
      expect(payments.payouts.journalsAnotherRequest(operation(known.operation), same, held)).toBe(
        false,
      );
      const other = { ...(known.request as object), ...edited };
      expect(payments.payouts.journalsAnotherRequest(operation(known.operation), other, held)).toBe(
        true,
      );
    }
    expect(posts()).toHaveLength(0);
  });

  it('gives the app copies of the entries a store hands out: changing one changes no replay', async () => {
    /** A store that keeps the objects it is given and hands them out, as the contract allows. */
    const objects = new Map<string, PaymentsJournalEntry>();
    const holding: PaymentsJournalStore = {
      create: (entry) => {
        const there = objects.get(entry.idempotencyKey);
        if (there) return Promise.resolve({ created: false, entry: there });
        objects.set(entry.idempotencyKey, entry);
        return Promise.resolve({ created: true, entry });
      },
      replace: (next) => {
        if (objects.get(next.idempotencyKey)?.version !== next.version - 1) {
          return Promise.resolve(false);
        }
        objects.set(next.idempotencyKey, next);
        return Promise.resolve(true);
      },
      get: (key) => Promise.resolve(objects.get(key)),
      findByReference: (reference) =>
        Promise.resolve([...objects.values()].find((entry) => entry.reference === reference)),
      list: () => Promise.resolve([...objects.values()]),
    };
    const payments = client({ journal: holding });
    const first = await payments.payouts.mpesa(PAYOUT, { idempotencyKey: 'salary-held' });
    await payments.reconciler.reconcile();
    // An app that tidies entries for its own log.
    const tidied = [
      await payments.reconciler.get('salary-held'),
      ...(await payments.reconciler.entries()),
    ];
    for (const entry of tidied) {
      delete (entry as Partial<Mutable<PaymentsJournalEntry>>).answer;
      (entry as Mutable<PaymentsJournalEntry>).fingerprint = 'tidied';
    }

    const again = await payments.payouts.mpesa(PAYOUT, { idempotencyKey: 'salary-held' });

    expect(tidied).toHaveLength(2);
    expect(again).toMatchObject({ replayed: true, status: first.status, message: first.message });
    expect(objects.get('salary-held')).toMatchObject({ answer: expect.any(Object) });
    expect(posts()).toHaveLength(1);
  });

  it('counts a started entry past its deadline as in doubt (its process died)', async () => {
    const payments = client();
    await payments.payouts.mpesa(PAYOUT, { idempotencyKey: 'salary-9' });
    const accepted = (await store.get('salary-9'))!;
    // What a process killed mid-send leaves: `started`, its deadline gone by.
    const { reference: _reference, answer: _answer, ...intent } = accepted;
    await store.replace({
      ...intent,
      state: 'started',
      version: accepted.version + 1,
      deadlineAt: new Date(Date.now() - 1000).toISOString(),
    });

    expect(await payments.reconciler.inDoubt()).toEqual([
      expect.objectContaining({ idempotencyKey: 'salary-9', state: 'in_doubt' }),
    ]);
    await expect(
      payments.payouts.mpesa(PAYOUT, { idempotencyKey: 'salary-9' }),
    ).rejects.toMatchObject({ code: 'IN_DOUBT' });
    const summary = await payments.reconciler.reconcile();
    expect(summary).toMatchObject({ checked: 1, changed: 1 });
    expect(summary.inDoubt).toEqual([
      expect.objectContaining({
        idempotencyKey: 'salary-9',
        reason: expect.stringContaining('deadline') as string,
      }),
    ]);
    expect((await store.get('salary-9'))?.state).toBe('in_doubt');
    expect(posts()).toHaveLength(1);
  });

  it('sums amounts of up to 4 decimals exactly, in any currency or none', async () => {
    const at = new Date().toISOString();
    const amounts: [number, string | undefined][] = [
      [15000.5, 'UGX'],
      [15000.5, 'UGX'],
      [100.005, 'KES'],
      [100.0049, 'KES'],
      [10.1, 'KES'],
      [0.01, 'KES'],
      [1.005, undefined],
      [1.005, undefined],
    ];
    for (const [index, [amount, currency]] of amounts.entries()) {
      await store.create({
        idempotencyKey: `sum-${index}`,
        operation: 'transfers.send',
        account: 'default',
        fingerprint: `f${index}`,
        state: 'refused',
        version: 1,
        startedAt: at,
        updatedAt: at,
        deadlineAt: at,
        calls: [{ callId: `c${index}`, startedAt: at }],
        amount,
        ...(currency === undefined ? {} : { currency }),
      });
    }

    const summary = await client().reconciler.reconcile();

    expect(summary.totals).toEqual({
      refused: {
        UGX: { count: 2, amount: 30001 },
        KES: { count: 4, amount: 210.1199 },
        unknown: { count: 2, amount: 2.01 },
      },
    });
    expect(summary.byOperation).toEqual({ 'transfers.send': summary.totals });
  });

  it('sums money in and money out apart by operation, beside the totals of both', async () => {
    const payments = client();
    let sent = 0;
    server.fallback = (request) =>
      request.method === 'GET'
        ? { status: 200, body: statusRecord(request.path.split('/').pop()!, 'pending', 0) }
        : {
            status: 200,
            body: {
              ...successBody(request.path.includes('withdrawal') ? 'payout' : 'collection'),
              // One transaction per call: a reference two calls were given is neither's.
              transaction_reference: `9BD10000000${(sent += 1)}eW`,
            },
          };
    const collection = MPESA_COLLECTION.request as { amount: number };
    await payments.collections.mpesa(MPESA_COLLECTION.request, {
      idempotencyKey: 'in-1',
    });
    await payments.payouts.mpesa(PAYOUT, { idempotencyKey: 'out-1' });
    await payments.payouts.mpesa({ ...PAYOUT, amount: 250.25 }, { idempotencyKey: 'out-2' });

    const summary = await payments.reconciler.reconcile();

    expect(summary.totals).toEqual({
      accepted: { KES: { count: 3, amount: collection.amount + PAYOUT.amount + 250.25 } },
    });
    expect(summary.byOperation).toEqual({
      'collections.mpesa': { accepted: { KES: { count: 1, amount: collection.amount } } },
      'payouts.mpesa': { accepted: { KES: { count: 2, amount: PAYOUT.amount + 250.25 } } },
    });
  });

  it('reconcile settles accepted entries by look-up, and leaves one the record contradicts', async () => {
    const payments = client();
    await payments.payouts.mpesa(PAYOUT, { idempotencyKey: 'salary-10' });
    server.fallback = (request) =>
      request.method === 'GET'
        ? { status: 200, body: statusRecord(PAYOUT_REFERENCE, 'success', 999) }
        : { status: 200, body: successBody('payout') };
    let summary = await payments.reconciler.reconcile();
    expect(summary).toMatchObject({ checked: 1, changed: 0 });
    expect((await store.get('salary-10'))?.state).toBe('accepted');

    server.fallback = (request) =>
      request.method === 'GET'
        ? { status: 200, body: statusRecord(PAYOUT_REFERENCE, 'pending', PAYOUT.amount) }
        : { status: 200, body: successBody('payout') };
    summary = await payments.reconciler.reconcile();
    expect((await store.get('salary-10'))?.state).toBe('accepted');

    server.fallback = (request) =>
      request.method === 'GET'
        ? { status: 200, body: statusRecord(PAYOUT_REFERENCE, 'success', PAYOUT.amount) }
        : { status: 200, body: successBody('payout') };
    summary = await payments.reconciler.reconcile();
    expect(summary).toMatchObject({ checked: 1, changed: 1 });
    expect(summary.totals).toEqual({ succeeded: { KES: { count: 1, amount: PAYOUT.amount } } });
    expect(await store.get('salary-10')).toMatchObject({
      state: 'succeeded',
      settledBy: 'status',
      settledStatus: 'success',
    });
    // Settled: the key is answered from the journal.
    const again = await payments.payouts.mpesa(PAYOUT, { idempotencyKey: 'salary-10' });
    expect(again.replayed).toBe(true);
    expect(posts()).toHaveLength(1);
  });

  it("settles an entry failed from a record whose parties' names are far longer than its reason", async () => {
    const payments = client();
    await payments.payouts.mpesa(PAYOUT, { idempotencyKey: 'salary-11' });
    const failed = statusRecord(PAYOUT_REFERENCE, 'failed', PAYOUT.amount);
    server.fallback = () => ({
      status: 200,
      body: {
        ...failed,
        transaction_details: {
          ...failed.transaction_details,
          payer: 'Ali '.repeat(3_000),
          receiver: 'i'.repeat(12_000),
          reason: 'DS timeout: Ali (ali@mail.example) cannot be reached',
        },
      },
    });
    await expect(payments.reconciler.reconcile()).resolves.toMatchObject({
      checked: 1,
      changed: 1,
    });
    expect(await store.get('salary-11')).toMatchObject({
      state: 'failed',
      settledReason: 'DS timeout: [personal data] ([personal data]) cannot be reached',
    });
  });

  it('tells a second execution of a call from a forger’s mix of two calls', async () => {
    const payments = client();
    await payments.payouts.mpesa(PAYOUT, { idempotencyKey: 'salary-11' });
    server.fallback = () => ({
      status: 200,
      body: { ...successBody('payout'), transaction_reference: 'OTHER0000001eR' },
    });
    await payments.payouts.mpesa(PAYOUT, { idempotencyKey: 'salary-12' });
    const event = {
      idempotencyKey: 'salary-11',
      outcome: 'succeeded',
      amount: PAYOUT.amount,
      kind: 'payout',
      by: 'webhook',
    } as const;

    // Same key, amount and kind, a reference no entry holds: the service ran the call twice.
    const second = await payments.reconciler.settle({ ...event, reference: 'TWICE000000001' });
    expect(second).toMatchObject({ result: 'second-execution' });
    // The reference of another call under this key: a mix, refused.
    const mixed = await payments.reconciler.settle({ ...event, reference: 'OTHER0000001eR' });
    expect(mixed).toMatchObject({ result: 'contradicted' });
    // Another amount is never the same call.
    const other = await payments.reconciler.settle({
      ...event,
      reference: 'TWICE000000001',
      amount: PAYOUT.amount + 1,
    });
    expect(other).toMatchObject({ result: 'contradicted' });
    // None of them settled the entry.
    expect(await store.get('salary-11')).toMatchObject({
      state: 'accepted',
      reference: PAYOUT_REFERENCE,
    });
  });

  it('settles no entry from a record that cannot be its call: refused, older, another currency', async () => {
    const payments = client();
    server.reply({ status: 400, body: { success: false, status: 400, message: 'bad number' } });
    await rejection(payments.payouts.mpesa(PAYOUT, { idempotencyKey: 'salary-13' }));
    server.reply({ status: 502 });
    await rejection(payments.payouts.mpesa(PAYOUT, { idempotencyKey: 'salary-14' }));
    expect((await store.get('salary-14'))?.state).toBe('in_doubt');
    const event = {
      outcome: 'failed',
      reference: 'GENUINE00001eW',
      amount: PAYOUT.amount,
      kind: 'payout',
      by: 'webhook',
    } as const;

    // Every send of salary-13 was refused, and this record cannot say it executed after all.
    expect(
      await payments.reconciler.settle({ ...event, idempotencyKey: 'salary-13' }),
    ).toMatchObject({
      result: 'contradicted',
      why: expect.stringContaining('the entry was refused by the service'),
    });
    expect((await store.get('salary-13'))?.state).toBe('refused');
    // A genuine record of an older transaction, paired with the key of a call in doubt.
    const older = new Date(Date.now() - 60 * 60 * 1000).toISOString();
    expect(
      await payments.reconciler.settle({
        ...event,
        idempotencyKey: 'salary-14',
        createdAt: older,
      }),
    ).toMatchObject({ result: 'contradicted', why: expect.stringContaining('before the call') });
    expect(
      await payments.reconciler.settle({ ...event, idempotencyKey: 'salary-14', currency: 'UGX' }),
    ).toMatchObject({ result: 'contradicted', why: expect.stringContaining('UGX') });
    expect((await store.get('salary-14'))?.state).toBe('in_doubt');
    // Its own execution, created after the call started, settles it.
    expect(
      await payments.reconciler.settle({
        ...event,
        idempotencyKey: 'salary-14',
        currency: 'KES',
        createdAt: new Date().toISOString(),
      }),
    ).toMatchObject({ result: 'settled' });
    expect((await store.get('salary-14'))?.state).toBe('failed');
  });

  it("settles a lost answer's entry by key alone only with a record of its own payee", async () => {
    const payments = client();
    // Two payouts of one amount to two people, both executed, both answers lost.
    server.reply({ status: 502 });
    await rejection(payments.payouts.mpesa(PAYOUT, { idempotencyKey: 'salary-amina' }));
    server.reply({ status: 502 });
    await rejection(
      payments.payouts.mpesa(
        { ...PAYOUT, phoneNumber: '0712340000' },
        { idempotencyKey: 'salary-felix' },
      ),
    );
    expect(await store.get('salary-amina')).toMatchObject({
      state: 'in_doubt',
      payee: expect.any(String),
    });
    expect(JSON.stringify(await store.get('salary-amina'))).not.toContain('712345678');
    const felixFailed = {
      reference: 'FELIX0000001eW',
      outcome: 'failed',
      amount: PAYOUT.amount,
      currency: 'KES',
      kind: 'payout',
      createdAt: new Date().toISOString(),
      phoneNumber: '+254712340000',
      by: 'webhook',
    } as const;

    // Felix's genuine failure posted under Amina's key: another phone number, so not her call.
    expect(
      await payments.reconciler.settle({ ...felixFailed, idempotencyKey: 'salary-amina' }),
    ).toMatchObject({ result: 'contradicted', why: expect.stringContaining('phone number') });
    expect(await store.get('salary-amina')).toMatchObject({ state: 'in_doubt' });
    // Each genuine record, written however the service writes the number, settles its own call.
    expect(
      await payments.reconciler.settle({ ...felixFailed, idempotencyKey: 'salary-felix' }),
    ).toMatchObject({ result: 'settled' });
    expect(
      await payments.reconciler.settle({
        ...felixFailed,
        idempotencyKey: 'salary-amina',
        reference: 'AMINA0000001eW',
        outcome: 'succeeded',
        phoneNumber: '254712345678',
      }),
    ).toMatchObject({ result: 'settled' });
    expect(await store.get('salary-amina')).toMatchObject({
      state: 'succeeded',
      reference: 'AMINA0000001eW',
    });
  });

  it('settles nothing by key alone while the call is being sent: its reference is not known yet', async () => {
    const payments = client();
    const forged = payoutWebhook('salary-20', 'FORGED000001eW');
    let whileSending: Promise<unknown> | undefined;
    server.fallback = () => {
      whileSending = payments.reconciler.settle(forged);
      return { status: 200, body: successBody('payout') };
    };
    await payments.payouts.mpesa(PAYOUT, { idempotencyKey: 'salary-20' });

    expect(await whileSending).toMatchObject({ result: 'in-flight' });
    // Once the answer gave the call's reference, the same event settles nothing either: another
    // reference under the key, same amount, is taken for a second execution (payment.duplicate).
    expect(await payments.reconciler.settle(forged)).toMatchObject({
      result: 'second-execution',
    });
    expect(await store.get('salary-20')).toMatchObject({
      state: 'accepted',
      reference: PAYOUT_REFERENCE,
    });
  });

  it('settles no entry by key alone from a record without the amount or currency to compare', async () => {
    const payments = client();
    server.reply({ status: 502 });
    await rejection(payments.payouts.mpesa(PAYOUT, { idempotencyKey: 'salary-21' }));
    const event = {
      idempotencyKey: 'salary-21',
      reference: 'GENUINE00002eW',
      outcome: 'succeeded',
      kind: 'payout',
      by: 'webhook',
    } as const;

    expect(await payments.reconciler.settle({ ...event, currency: 'KES' })).toMatchObject({
      result: 'contradicted',
      why: expect.stringContaining('no amount') as string,
    });
    expect(await payments.reconciler.settle({ ...event, amount: PAYOUT.amount })).toMatchObject({
      result: 'contradicted',
      why: expect.stringContaining('no currency') as string,
    });
    expect((await store.get('salary-21'))?.state).toBe('in_doubt');
    expect(
      await payments.reconciler.settle({ ...event, amount: PAYOUT.amount, currency: 'KES' }),
    ).toMatchObject({ result: 'settled' });
  });

  it('lets a person resolve an entry in doubt, with a note, and the key then follows it', async () => {
    const payments = client();
    server.reply({ status: 502 });
    await rejection(payments.payouts.mpesa(PAYOUT, { idempotencyKey: 'salary-15' }));
    server.reply({ status: 502 });
    await rejection(payments.payouts.mpesa(PAYOUT, { idempotencyKey: 'salary-16' }));

    await expect(
      payments.reconciler.resolve('salary-15', { outcome: 'refused', note: '' }),
    ).rejects.toMatchObject({
      name: 'PaymentsValidationError',
      errors: [{ field: 'note', rule: 'isNotEmpty' }],
      message: expect.stringContaining('note is required'),
    });
    await expect(
      payments.reconciler.resolve('salary-15', {
        outcome: 'failed',
        refrence: 'ABC123',
        nots: 'ops',
      } as never),
    ).rejects.toMatchObject({
      name: 'PaymentsValidationError',
      errors: [
        { field: 'refrence', rule: 'whitelist' },
        { field: 'nots', rule: 'whitelist' },
      ],
    });
    const noEntry = await rejection(
      payments.reconciler.resolve('nobody', { outcome: 'failed', note: 'ops' }),
    );
    expect(noEntry).toBeInstanceOf(PaymentsReconcilerError);
    expect(
      new PaymentsExceptionFilter().toResponse(noEntry as PaymentsReconcilerError),
    ).toMatchObject({ statusCode: 409, code: 'REFUSED', idempotencyKey: 'nobody' });
    expect(noEntry).toMatchObject({
      idempotencyKey: 'nobody',
      message: expect.stringContaining('no entry'),
    });

    // A reference the look-up cannot carry is the person's mistake, named as such.
    await expect(
      payments.reconciler.resolve('salary-16', {
        outcome: 'succeeded',
        reference: '../../balances?x=1',
        note: 'ops',
      }),
    ).rejects.toMatchObject({ name: 'PaymentsValidationError' });

    // Checked with the service: salary-15 never executed; salary-16 did, and succeeded.
    const refused = await payments.reconciler.resolve('salary-15', {
      outcome: 'refused',
      note: 'Amina (ops): not in the dashboard on 25 Nov',
    });
    expect(refused).toMatchObject({ state: 'refused', settledBy: 'manual' });
    await payments.reconciler.resolve('salary-16', {
      outcome: 'succeeded',
      reference: PAYOUT_REFERENCE,
      note: 'Amina (ops): dashboard shows it paid',
    });
    await expect(
      payments.reconciler.resolve('salary-16', { outcome: 'failed', note: 'again' }),
    ).rejects.toThrow('succeeded already');

    // The refused key is sent again without resend; the succeeded one is answered from the journal.
    const before = posts().length;
    await payments.payouts.mpesa(PAYOUT, { idempotencyKey: 'salary-15' });
    const replayed = await payments.payouts.mpesa(PAYOUT, { idempotencyKey: 'salary-16' });
    expect(posts()).toHaveLength(before + 1);
    expect(replayed).toMatchObject({ replayed: true, transactionReference: PAYOUT_REFERENCE });
    expect(await store.get('salary-16')).toMatchObject({
      state: 'succeeded',
      settledBy: 'manual',
      note: 'Amina (ops): dashboard shows it paid',
    });
  });

  it("checks a reference a person gives with the service's record before the journal takes it", async () => {
    const payments = client();
    server.reply({ status: 502 });
    await rejection(payments.payouts.mpesa(PAYOUT, { idempotencyKey: 'salary-22' }));
    const resolution = {
      outcome: 'succeeded',
      reference: PAYOUT_REFERENCE,
      note: 'ops: typed from the dashboard',
    } as const;

    // The service's record says otherwise, is of another amount, or cannot be read.
    for (const [answer, refusal] of [
      [
        { status: 200, body: statusRecord(PAYOUT_REFERENCE, 'failed', PAYOUT.amount) },
        'says failed',
      ],
      [{ status: 200, body: statusRecord(PAYOUT_REFERENCE, 'success', 1) }, 'amount'],
      [{ status: 503 }, 'could not be checked'],
      // Unknown to the service is its answer: refused, not "try again".
      [
        { status: 404, body: { success: false, message: 'transaction not found', status: 404 } },
        'unknown to the service',
      ],
      // The same in the body of an HTTP 200; the service's generic 400 says nothing of it.
      [
        { status: 200, body: { success: false, message: 'transaction not found', status: 404 } },
        'unknown to the service',
      ],
      [
        {
          status: 400,
          body: { success: false, message: 'could not fetch, try again', status: 400 },
        },
        'could not be checked',
      ],
    ] as const) {
      server.reply(answer);
      await expect(payments.reconciler.resolve('salary-22', resolution)).rejects.toThrow(refusal);
    }
    server.reply({ status: 404, body: { success: false, message: 'not found', status: 404 } });
    await expect(payments.reconciler.resolve('salary-22', resolution)).rejects.toMatchObject({
      code: 'REFUSED',
    });
    expect((await store.get('salary-22'))?.state).toBe('in_doubt');

    // The fallback answers the reference as the service's successful record of this payout.
    expect(await payments.reconciler.resolve('salary-22', resolution)).toMatchObject({
      state: 'succeeded',
      reference: PAYOUT_REFERENCE,
      settledBy: 'manual',
    });
  });

  it('resolves an executed outcome only with a reference the service bears out, given or its own', async () => {
    const payments = client();
    // salary-23: in doubt, no reference (the answer was lost after the service executed it).
    server.reply({ status: 502 });
    await rejection(payments.payouts.mpesa(PAYOUT, { idempotencyKey: 'salary-23' }));
    for (const outcome of ['failed', 'succeeded'] as const) {
      await expect(
        payments.reconciler.resolve('salary-23', { outcome, note: 'ops: a guess' }),
      ).rejects.toThrow('has no reference: a call that ' + outcome);
    }
    expect(await store.get('salary-23')).toMatchObject({ state: 'in_doubt' });

    // salary-24: accepted with its reference, whose record at the service says success: a
    // person's "failed" without a reference is checked against that record, and refused.
    await payments.payouts.mpesa(PAYOUT, { idempotencyKey: 'salary-24' });
    const lookUpsBefore = server.requests.filter((request) => request.method === 'GET').length;
    await expect(
      payments.reconciler.resolve('salary-24', { outcome: 'failed', note: 'ops: a guess' }),
    ).rejects.toThrow('says succeeded, not failed');
    expect(server.requests.filter((request) => request.method === 'GET')).toHaveLength(
      lookUpsBefore + 1,
    );
    expect(await store.get('salary-24')).toMatchObject({ state: 'accepted' });

    // While the service's record of its own reference is not final, a person's finding stands
    // (the record outranks it once final): an entry is never left with no way out.
    server.reply({ status: 200, body: statusRecord(PAYOUT_REFERENCE, 'pending', PAYOUT.amount) });
    expect(
      await payments.reconciler.resolve('salary-24', {
        outcome: 'failed',
        note: 'ops: support confirmed it failed, ticket 5120',
      }),
    ).toMatchObject({ state: 'failed', settledBy: 'manual', reference: PAYOUT_REFERENCE });
  });

  it("lets the service's record of the entry's reference outrank a person's resolution", async () => {
    const payments = client();
    await payments.payouts.mpesa(PAYOUT, { idempotencyKey: 'salary-23' });
    await payments.reconciler.resolve('salary-23', {
      outcome: 'succeeded',
      note: 'customer says the money arrived',
    });
    const failed = {
      idempotencyKey: 'salary-23',
      outcome: 'failed',
      amount: PAYOUT.amount,
      currency: 'KES',
      kind: 'payout',
      by: 'webhook',
    } as const;

    // Another reference under the key is no record of this call: it outranks nothing.
    expect(
      await payments.reconciler.settle({ ...failed, reference: 'OTHER0000023eW' }),
    ).not.toMatchObject({ result: 'settled' });
    expect((await store.get('salary-23'))?.state).toBe('succeeded');
    expect(
      await payments.reconciler.settle({ ...failed, reference: PAYOUT_REFERENCE }),
    ).toMatchObject({ result: 'settled' });
    expect(await store.get('salary-23')).toMatchObject({
      state: 'failed',
      settledBy: 'webhook',
      reference: PAYOUT_REFERENCE,
    });
  });

  it("looks up a person's resolution taken while the record was pending, until the service's final record confirms or outranks it", async () => {
    const payments = client();
    const pending = { status: 200, body: statusRecord(PAYOUT_REFERENCE, 'pending', PAYOUT.amount) };
    const gets = () => server.requests.filter((request) => request.method === 'GET').length;
    for (const [key, outcome, final, settled] of [
      // The service then paid what a person said failed: the key must not invite a new payment.
      ['pending-1', 'failed', 'success', 'succeeded'],
      // The service then declined what a person said succeeded.
      ['pending-2', 'succeeded', 'failed', 'failed'],
    ] as const) {
      server.reply({ status: 200, body: successBody('payout') });
      await payments.payouts.mpesa(PAYOUT, { idempotencyKey: key });
      server.reply(pending);
      await payments.reconciler.resolve(key, { outcome, note: 'ops: support said so' });
      expect(await store.get(key)).toMatchObject({ state: outcome, settledBy: 'manual' });

      // Still pending: looked up, left as the person resolved it.
      server.reply(pending);
      expect(await payments.reconciler.reconcile()).toMatchObject({ checked: 1, changed: 0 });
      expect(await store.get(key)).toMatchObject({ state: outcome, settledBy: 'manual' });

      server.reply({ status: 200, body: statusRecord(PAYOUT_REFERENCE, final, PAYOUT.amount) });
      expect(await payments.reconciler.reconcile()).toMatchObject({ checked: 1, changed: 1 });
      expect(await store.get(key)).toMatchObject({ state: settled, settledBy: 'status' });
      // Final and the service's: not looked up again.
      const before = gets();
      expect(await payments.reconciler.reconcile()).toMatchObject({ checked: 0 });
      expect(gets()).toBe(before);
      store.clear();
    }

    // Borne out by the final record: confirmed, kept as the person's, not looked up again.
    server.reply({ status: 200, body: successBody('payout') });
    await payments.payouts.mpesa(PAYOUT, { idempotencyKey: 'pending-3' });
    server.reply(pending);
    await payments.reconciler.resolve('pending-3', { outcome: 'failed', note: 'ops: declined' });
    server.reply({ status: 200, body: statusRecord(PAYOUT_REFERENCE, 'failed', PAYOUT.amount) });
    expect(await payments.reconciler.reconcile()).toMatchObject({ checked: 1 });
    expect(await store.get('pending-3')).toMatchObject({
      state: 'failed',
      settledBy: 'manual',
      settledStatus: 'failed',
    });
    const before = gets();
    expect(await payments.reconciler.reconcile()).toMatchObject({ checked: 0 });
    expect(gets()).toBe(before);
  });

  it("stops looking up a person's resolution the service's record does not bear out: other figures at once, no final record after 72 h", async () => {
    const errors = jest.spyOn(Logger.prototype, 'error').mockImplementation(() => undefined);
    const payments = client();
    const pending = { status: 200, body: statusRecord(PAYOUT_REFERENCE, 'pending', PAYOUT.amount) };
    const gets = () => server.requests.filter((request) => request.method === 'GET').length;
    const resolvedWhilePending = async (key: string) => {
      server.reply({ status: 200, body: successBody('payout') });
      await payments.payouts.mpesa(PAYOUT, { idempotencyKey: key });
      server.reply(pending);
      await payments.reconciler.resolve(key, { outcome: 'succeeded', note: 'ops: paid, ticket 9' });
    };
    const notLookedUpAgain = async () => {
      const before = gets();
      expect(await payments.reconciler.reconcile()).toMatchObject({ checked: 0 });
      expect(gets()).toBe(before);
    };

    // A final record of another sum: no confirmation will come.
    await resolvedWhilePending('unconfirmed-1');
    server.reply({
      status: 200,
      body: statusRecord(PAYOUT_REFERENCE, 'success', PAYOUT.amount + 1),
    });
    expect(await payments.reconciler.reconcile()).toMatchObject({ checked: 1, changed: 1 });
    expect(await store.get('unconfirmed-1')).toMatchObject({
      state: 'succeeded',
      settledBy: 'manual',
      unconfirmed: expect.stringContaining('amount') as string,
    });
    expect(errors).toHaveBeenCalledWith(expect.stringContaining('unconfirmed-1'));
    await notLookedUpAgain();
    store.clear();

    // Unknown to the service, or still pending: looked up for 72 hours, then left for a look.
    const unknown = { status: 404, body: { success: false, status: 404, message: 'not found' } };
    for (const [key, answer, said] of [
      ['unconfirmed-2', unknown, `knows no ${PAYOUT_REFERENCE}`],
      ['unconfirmed-3', pending, 'still pending'],
    ] as const) {
      await resolvedWhilePending(key);
      server.reply(answer);
      expect(await payments.reconciler.reconcile()).toMatchObject({ checked: 1, changed: 0 });
      expect((await store.get(key))?.unconfirmed).toBeUndefined();
      // The same, 72 hours after the resolution (a later change of the entry does not count).
      const resolved = (await store.get(key))!;
      await store.replace({
        ...resolved,
        version: resolved.version + 1,
        resolvedAt: new Date(Date.now() - PAYMENTS_CONFIRMATION_WINDOW_MS - 1000).toISOString(),
      });
      server.reply(answer);
      expect(await payments.reconciler.reconcile()).toMatchObject({ checked: 1, changed: 1 });
      expect(await store.get(key)).toMatchObject({
        state: 'succeeded',
        unconfirmed: expect.stringContaining(said) as string,
      });
      await notLookedUpAgain();
      store.clear();
    }
  });

  it.each(['pending', 'success'])(
    'refuses a resolution whose %s record is of another sum: it is no record of the call',
    async (status) => {
      const payments = client();
      await payments.payouts.mpesa(PAYOUT, { idempotencyKey: `other-sum-${status}` });
      server.reply({
        status: 200,
        body: statusRecord(PAYOUT_REFERENCE, status, PAYOUT.amount + 1),
      });
      await expect(
        payments.reconciler.resolve(`other-sum-${status}`, {
          outcome: 'succeeded',
          note: 'ops: a guess',
        }),
      ).rejects.toMatchObject({
        code: 'REFUSED',
        message: expect.stringContaining('amount') as string,
      });
      expect(await store.get(`other-sum-${status}`)).toMatchObject({ state: 'accepted' });
    },
  );

  it.each([
    ['pending', { status: 200, body: statusRecord('OTHER0000031eW', 'pending', PAYOUT.amount) }],
    ['unknown', { status: 404, body: { success: false, status: 404, message: 'not found' } }],
  ] as const)(
    'resolves a call executed more than once only on a final record: %s is refused',
    async (_label, answer) => {
      const payments = client();
      await payments.payouts.mpesa(PAYOUT, { idempotencyKey: 'several-1' });
      await executedMoreThanOnce(store, 'several-1', ['OTHER0000031eW']);
      server.reply(answer);
      await expect(
        payments.reconciler.resolve('several-1', {
          outcome: 'succeeded',
          reference: 'OTHER0000031eW',
          note: 'ops: paid',
        }),
      ).rejects.toMatchObject({ code: 'REFUSED' });
      expect(await store.get('several-1')).toMatchObject({ state: 'in_doubt' });
    },
  );

  it('gives a store of your own entries it may add to, as a database driver does (_id)', async () => {
    const documents = new InMemoryPaymentsJournal();
    const ids: unknown[] = [];
    const addsId = (entry: PaymentsJournalEntry) => {
      (entry as { _id?: string })._id = `doc-${entry.version}`;
      ids.push((entry as { _id?: string })._id);
      return entry;
    };
    const driverLike: PaymentsJournalStore = {
      create: (entry) => documents.create(addsId(entry)),
      replace: (next) => documents.replace(addsId(next)),
      get: (key) => documents.get(key),
      findByReference: (reference) => documents.findByReference(reference),
      list: (query) => documents.list(query),
    };
    const payments = client({ journal: driverLike });
    await payments.payouts.mpesa(PAYOUT, { idempotencyKey: 'salary-driver' });

    expect(ids).toEqual(['doc-1', 'doc-2']);
    expect(await documents.get('salary-driver')).toMatchObject({ state: 'accepted' });
  });

  it('lists entries by state and time', async () => {
    const payments = client();
    const before = new Date();
    await payments.payouts.mpesa(PAYOUT, { idempotencyKey: 'l-1' });
    await payments.payouts.mpesa({ ...PAYOUT, amount: 20 }, { idempotencyKey: 'l-2' });

    expect((await payments.reconciler.unsettled()).map((e) => e.idempotencyKey)).toEqual([
      'l-1',
      'l-2',
    ]);
    expect(await payments.reconciler.entries({ state: 'succeeded' })).toEqual([]);
    expect(await payments.reconciler.entries({ since: new Date(Date.now() + 60_000) })).toEqual([]);
    expect(await payments.reconciler.entries({ since: before.toISOString() })).toHaveLength(2);
    await expect(payments.reconciler.entries({ since: 'not a date' })).rejects.toMatchObject({
      name: 'PaymentsValidationError',
      errors: [{ field: 'since', rule: 'isDate' }],
    });
    await expect(payments.reconciler.reconcile({ concurrency: 0 })).rejects.toMatchObject({
      name: 'PaymentsValidationError',
      errors: [{ field: 'concurrency', rule: 'isPositiveInteger' }],
    });
    for (const since of [
      null,
      true,
      0,
      'Nov 1 2099',
      'yesterday',
      '2026-13-01',
      '2026-02-31',
      '2026-02-28T24:00',
    ]) {
      await expect(payments.reconciler.entries({ since: since as never })).rejects.toMatchObject({
        name: 'PaymentsValidationError',
        errors: [{ field: 'since', rule: 'isDate' }],
      });
    }
    expect(await payments.reconciler.entries({ since: '2000-01-01' })).toHaveLength(2);
    expect(await payments.reconciler.entries({ since: '2000-01-01T00:00:00+03:00' })).toHaveLength(
      2,
    );
    // One reading whatever the server's time zone: a date and time without an offset is UTC, as
    // a date alone is; an offset of hours alone or without a colon; a Date of another realm.
    const day = before.toISOString().slice(0, 10);
    const zone = process.env.TZ;
    process.env.TZ = 'Etc/GMT+12';
    try {
      for (const since of [
        day,
        `${day}T00:00`,
        `${day} 00:00:00.000`,
        `${day}T03:00+03`,
        `${day}T03:00+0300`,
        `${day}t00:00z`,
        runInNewContext(`new Date(${Date.parse(`${day}T00:00:00Z`)})`) as Date,
      ]) {
        expect([since, await payments.reconciler.entries({ since })]).toEqual([
          since,
          expect.arrayContaining([expect.anything(), expect.anything()]),
        ]);
      }
    } finally {
      if (zone === undefined) delete process.env.TZ;
      else process.env.TZ = zone;
    }
    for (const state of ['in-doubt', 'IN_DOUBT', null, 7, [], ['succeeded', 'bogus']]) {
      await expect(payments.reconciler.entries({ state: state as never })).rejects.toMatchObject({
        name: 'PaymentsValidationError',
        errors: [{ field: 'state', rule: 'isIn' }],
      });
    }
    await expect(
      payments.reconciler.entries({ states: ['in_doubt'] } as never),
    ).rejects.toMatchObject({
      name: 'PaymentsValidationError',
      errors: [{ field: 'states', rule: 'whitelist' }],
    });
    await expect(payments.reconciler.reconcile({ sinse: before } as never)).rejects.toMatchObject({
      name: 'PaymentsValidationError',
      errors: [{ field: 'sinse', rule: 'whitelist' }],
    });
    for (const [call, field] of [
      [() => payments.reconciler.entries(null as never), 'filter'],
      [() => payments.reconciler.reconcile(null as never), 'options'],
      // An empty list has no unknown key, and would reconcile everything.
      [() => payments.reconciler.reconcile([] as never), 'options'],
      [() => payments.reconciler.entries([] as never), 'filter'],
      // A date given for `{ since }` has no unknown own key either.
      [() => payments.reconciler.entries(new Date() as never), 'filter'],
      [() => payments.reconciler.reconcile(new Date() as never), 'options'],
      [() => payments.reconciler.resolve('l-1', [] as never), 'resolution'],
      [() => payments.reconciler.resolve('l-1', null as never), 'resolution'],
    ] as const) {
      await expect(call()).rejects.toMatchObject({
        name: 'PaymentsValidationError',
        errors: [{ field, rule: 'isObject' }],
      });
    }
    // A field that cannot be read is the caller's bad argument, not the store failing (a 503).
    const unreadable = {
      get since(): string {
        throw new Error('unreadable');
      },
    };
    for (const [call, field, rule] of [
      [() => payments.reconciler.entries(unreadable), 'filter', 'isReadable'],
      [() => payments.reconciler.reconcile(unreadable), 'options', 'isReadable'],
      [
        () =>
          payments.reconciler.resolve('l-1', {
            outcome: 'refused',
            get note(): string {
              throw new Error('unreadable');
            },
          }),
        'resolution',
        'isReadable',
      ],
      [
        () => payments.reconciler.resolve({ toString: () => 'l-1' } as never, RESOLUTION),
        'idempotencyKey',
        'isString',
      ],
      // A number is not the key '123' the journal may hold: "no entry" would be a wrong answer.
      [() => payments.reconciler.get(123 as never), 'idempotencyKey', 'isString'],
      [() => payments.reconciler.get(''), 'idempotencyKey', 'isString'],
    ] as const) {
      await expect(call()).rejects.toMatchObject({
        name: 'PaymentsValidationError',
        errors: [{ field, rule }],
      });
    }
  });

  it('a client without a journal says so from its reconciler, and sends as before', async () => {
    const payments = createPaymentsClient({
      apiUsername: 'u',
      apiPassword: 'journal-spec-password',
      baseUrl: server.url,
      maxRetries: 0,
    });
    clients.push(payments);
    expect(payments.reconciler.enabled).toBe(false);
    await expect(payments.reconciler.inDoubt()).rejects.toMatchObject({
      name: 'PaymentsReconcilerError',
      code: 'NO_JOURNAL',
    });
    await expect(payments.reconciler.inDoubt()).rejects.toThrow(/journal option/);
    await payments.payouts.mpesa(PAYOUT, { idempotencyKey: 'no-journal' });
    await payments.payouts.mpesa(PAYOUT, { idempotencyKey: 'no-journal' });
    expect(posts()).toHaveLength(2);
  });

  it("records an answered call's end once the store is back, after its caller was answered: the reference is not lost", async () => {
    const warnings = jest.spyOn(Logger.prototype, 'warn').mockImplementation(() => undefined);
    let down = false;
    const flaky: PaymentsJournalStore = {
      create: (entry) => store.create(entry),
      get: (key) => store.get(key),
      // Redis gone as the answer came, for longer than the caller's attempts (about 1.25 s).
      replace: (entry) =>
        down ? Promise.reject(new Error('connection lost')) : store.replace(entry),
      findByReference: (reference) => store.findByReference(reference),
      list: (query) => store.list(query),
    };
    const payments = client({ journal: flaky });
    server.fallback = () => {
      down = true;
      return { status: 200, body: successBody('payout') };
    };
    const answered = await payments.payouts.mpesa(PAYOUT, { idempotencyKey: 'late-1' });
    expect(answered.transactionReference).toBe(PAYOUT_REFERENCE);
    expect(await store.get('late-1')).toMatchObject({ state: 'started' });
    expect(warnings.mock.calls.join('\n')).toContain('tries again in the background');

    down = false;
    await waitFor(
      async () => ((await store.get('late-1'))?.state === 'accepted' ? true : undefined),
      'the late write',
    );
    expect(await store.get('late-1')).toMatchObject({ reference: PAYOUT_REFERENCE });
  });

  it("stops recording a send's end in the background at close", async () => {
    jest.spyOn(Logger.prototype, 'warn').mockImplementation(() => undefined);
    const replaced: string[] = [];
    const down: PaymentsJournalStore = {
      create: (entry) => store.create(entry),
      get: (key) => store.get(key),
      replace: (entry) => (replaced.push(entry.idempotencyKey), Promise.reject(new Error('down'))),
      findByReference: (reference) => store.findByReference(reference),
      list: (query) => store.list(query),
    };
    const payments = client({ journal: down });
    await payments.payouts.mpesa(PAYOUT, { idempotencyKey: 'late-2' });
    const tried = replaced.length;
    await payments.close();
    // Its schedule (about 107 s) was stopped, not sat out: no write after the close.
    await new Promise((resolve) => setTimeout(resolve, 2_500));
    expect(replaced.length).toBeLessThanOrEqual(tried + 1);
  });

  it('stops the undo of a failed write-ahead at close: nothing reaches the store after it closed', async () => {
    const calls: string[] = [];
    let releaseRead!: () => void;
    const readUnderWay = new Promise<void>((resolve) => (releaseRead = resolve));
    const down = () => Promise.reject(new Error('connection lost'));
    const failing: PaymentsJournalStore = {
      create: () => (calls.push('create'), down()),
      // The undo's first read hangs until the test lets it fail.
      get: () => (calls.push('get'), readUnderWay.then(down)),
      replace: () => (calls.push('replace'), down()),
      findByReference: () => Promise.resolve(undefined),
      list: () => Promise.resolve([]),
      close: () => (calls.push('close'), Promise.resolve()),
    };
    const payments = client({ journal: failing });
    expect(await rejection(payments.payouts.mpesa(PAYOUT, { idempotencyKey: 'k' }))).toMatchObject({
      code: 'JOURNAL_UNAVAILABLE',
    });
    expect(calls).toEqual(['create', 'get']);

    let closed = false;
    const closing = payments.close().then(() => (closed = true));
    await new Promise((resolve) => setImmediate(resolve));
    // The read under way is waited for: the store is not closed under it.
    expect(closed).toBe(false);
    releaseRead();
    await closing;

    // No retry after the close: its schedule (250 ms, 1 s, 3 s) was stopped, not sat out.
    expect(calls).toEqual(['create', 'get', 'close']);
    expect(posts()).toHaveLength(0);
  });

  it('refuses a call made after close() as CLIENT_CLOSED, before the journal (its store is closed)', async () => {
    const writes: string[] = [];
    let storeClosed = false;
    const closable: PaymentsJournalStore = {
      create: (entry) => {
        writes.push('create');
        return storeClosed
          ? Promise.reject(new Error('Connection is closed.'))
          : store.create(entry);
      },
      replace: (entry) => store.replace(entry),
      get: (key) => store.get(key),
      findByReference: (reference) => store.findByReference(reference),
      list: (query) => store.list(query),
      close: () => ((storeClosed = true), Promise.resolve()),
    };
    const payments = client({ journal: closable });
    await payments.close();

    const error = await rejection(payments.payouts.mpesa(PAYOUT, { idempotencyKey: 'late' }));

    expect(error).toMatchObject({ code: 'CLIENT_CLOSED', mayHaveExecuted: false, attempts: 0 });
    expect(writes).toEqual([]);
    expect(await store.get('late')).toBeUndefined();
    expect(posts()).toHaveLength(0);
  });

  it('sends nothing when the journal write ends after the call could still finish by its deadline', async () => {
    // The deadline: timeout 1 s, no retries, plus the 5 s margin. The write ends after 6.2 s, as
    // for a process held up between the write and the send: the entry counts as in doubt by
    // then, and a person may send it again.
    const slow: PaymentsJournalStore = {
      create: (entry) =>
        new Promise((resolve) => setTimeout(resolve, 6_200)).then(() => store.create(entry)),
      replace: (entry) => store.replace(entry),
      get: (key) => store.get(key),
      findByReference: (reference) => store.findByReference(reference),
      list: (query) => store.list(query),
    };
    const payments = createPaymentsClient({
      apiUsername: 'u',
      apiPassword: 'journal-spec-password',
      baseUrl: server.url,
      maxRetries: 0,
      timeout: 1_000,
      journal: slow,
    });
    clients.push(payments);

    const error = await rejection(payments.payouts.mpesa(PAYOUT, { idempotencyKey: 'held-up' }));

    expect(error).toMatchObject({ code: 'TIMEOUT', attempts: 0, mayHaveExecuted: false });
    expect(posts()).toHaveLength(0);
    expect(await store.get('held-up')).toMatchObject({ state: 'refused' });
  }, 20_000);

  it('rejects with a PaymentsReconcilerError, its cause kept, when the store fails', async () => {
    const down = new Error('connection lost');
    const failing: PaymentsJournalStore = {
      create: () => Promise.reject(down),
      replace: () => Promise.reject(down),
      get: () => Promise.reject(down),
      findByReference: () => Promise.reject(down),
      list: () => Promise.reject(down),
    };
    const payments = client({ journal: failing });
    const failures: [unknown, string | undefined][] = [
      [await rejection(payments.reconciler.inDoubt()), undefined],
      [await rejection(payments.reconciler.get('k')), 'k'],
      [await rejection(payments.reconciler.reconcile()), undefined],
      [await rejection(payments.reconciler.resolve('k', { outcome: 'refused', note: 'ops' })), 'k'],
    ];
    for (const [failed, idempotencyKey] of failures) {
      expect(failed).toBeInstanceOf(PaymentsReconcilerError);
      expect(failed).toMatchObject({ code: 'STORE_FAILED', cause: down, idempotencyKey });
      // The store's own message stays in its error, the cause: it is not ours to repeat.
      expect((failed as Error).message).not.toContain('connection lost');
      expect(new PaymentsExceptionFilter().toResponse(failed as PaymentsReconcilerError)).toEqual({
        statusCode: 503,
        error: 'Service Unavailable',
        message: (failed as Error).message,
        code: 'STORE_FAILED',
        ...(idempotencyKey === undefined ? {} : { idempotencyKey }),
      });
    }
  });

  it('refuses a journal that is not a store, naming the option', () => {
    expect(() =>
      createPaymentsClient({
        apiUsername: 'u',
        apiPassword: 'journal-spec-password',
        journal: { create: () => Promise.resolve() } as unknown as PaymentsJournalStore,
      }),
    ).toThrow(
      /journal must be a PaymentsJournalStore \(missing replace, get, findByReference, list\)/,
    );
  });

  it('fingerprints with a key: another password or secret gives another fingerprint', async () => {
    await client().payouts.mpesa(PAYOUT, { idempotencyKey: 'fp-1' });
    const error = await rejection(
      client({ password: 'another-password-1' }).payouts.mpesa(PAYOUT, { idempotencyKey: 'fp-1' }),
    );
    expect(error).toMatchObject({ errors: [expect.objectContaining({ rule: 'reused' })] });
    // The same request journaled by an instance of another password (a typo in one deploy):
    // the refusal says so, where another request under the key does not.
    expect((error as PaymentsValidationError).message).toContain(
      'journaled by an instance whose apiPassword or journalFingerprintSecret differs',
    );
    const other = await rejection(
      client().payouts.mpesa({ ...PAYOUT, amount: PAYOUT.amount + 1 }, { idempotencyKey: 'fp-1' }),
    );
    expect((other as PaymentsValidationError).message).not.toContain('apiPassword');
  });
});

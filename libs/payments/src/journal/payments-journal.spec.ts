import { Logger } from '@nestjs/common';
import {
  executedMoreThanOnce,
  payoutIntent,
  testJournal,
} from '../../spec-support/journal-entries';
import { waitFor } from '../../spec-support/wait-for';
import { ServiceAPIError } from '../errors';
import { InMemoryPaymentsJournal } from './in-memory-payments-journal';
import { awaitsConfirmation, PaymentsJournal } from './payments-journal';
import type { JournalDecision, JournalSendRef, JournalSettlement } from './payments-journal';
import { PAYMENTS_CONFIRMATION_WINDOW_MS } from './payments-journal.interfaces';
import type { PaymentsJournalEntry } from './payments-journal.interfaces';

/** A payout of 500 KES journaled under `key` and sent, on a clock the caller moves. */
async function sent(key: string) {
  const clock = { nowMs: Date.parse('2026-11-27T08:00:00Z') };
  const store = new InMemoryPaymentsJournal();
  const journal = testJournal(store, () => clock.nowMs);
  const decision = await begunSend(journal, payoutIntent(key));
  return { journal, store, decision, clock };
}

/** {@link sent}, its deadline passed without an answer. */
async function sentPastItsDeadline(key: string) {
  const begun = await sent(key);
  begun.clock.nowMs += 5000;
  return begun;
}

/** The error of a payout the service answered `status` after `attempts` attempts. */
function answeredByTheService(
  key: string,
  status: number,
  { mayHaveExecuted = false, attempts = 1 } = {},
): ServiceAPIError {
  return new ServiceAPIError(status === 409 ? 'conflict' : 'refused', {
    operation: 'payouts.mpesa',
    idempotencyKey: key,
    code: 'SERVICE_ERROR',
    attempts,
    status,
    mayHaveExecuted,
  });
}

/** The error of a payout the service refused with `status` (never executed). */
const refusedByTheService = (key: string, status: number) => answeredByTheService(key, status);

/** A send the service answered 409 (the key held): may have executed, as the client reads it. */
const keyHeldByTheService = (key: string) =>
  answeredByTheService(key, 409, { mayHaveExecuted: true });

/**
 * A send whose first attempt timed out and whose retry the service answered 409: it held the key
 * for that first attempt, which may have paid.
 */
const keyHeldAfterARetry = (key: string) =>
  answeredByTheService(key, 409, { mayHaveExecuted: true, attempts: 2 });

/**
 * A store whose next `create` or `replace` (as `lose` says) runs twice: its answer was lost with
 * the connection, and ioredis sent the command again on the next one.
 */
class ResendingStore extends InMemoryPaymentsJournal {
  lose: 'create' | 'replace' | undefined;

  override async create(entry: PaymentsJournalEntry) {
    if (this.lose !== 'create') return super.create(entry);
    this.lose = undefined;
    await super.create(entry);
    return super.create(entry);
  }

  override async replace(next: PaymentsJournalEntry) {
    if (this.lose !== 'replace') return super.replace(next);
    this.lose = undefined;
    await super.replace(next);
    return super.replace(next);
  }
}

/**
 * A store that, while `failing`, lets a `replace` land and then rejects (the answer lost), and
 * rejects the undo of an unsent call (marked `JOURNAL_UNAVAILABLE`) without writing it.
 */
class LandsThenFails extends InMemoryPaymentsJournal {
  failing = false;

  override async replace(next: PaymentsJournalEntry) {
    if (!this.failing) return super.replace(next);
    if (next.calls.some((call) => call.code === 'JOURNAL_UNAVAILABLE')) {
      throw new Error('the store is down');
    }
    await super.replace(next);
    throw new Error('the answer was lost');
  }
}

/**
 * A store under which a write lands right after the `n`-th read from now (`get`, `list` or
 * `findByReference`): another instance's, between two reads of a settle.
 */
class RacedStore extends InMemoryPaymentsJournal {
  private race: { reads: number; write: () => Promise<void> } | undefined;

  /** `write` after the `reads`-th read from now. */
  writeAfter(reads: number, write: () => Promise<void>): void {
    this.race = { reads, write };
  }

  /** Whether the write was made. */
  get wrote(): boolean {
    return this.race === undefined;
  }

  private async raced<T>(read: Promise<T>): Promise<T> {
    const answer = await read;
    const race = this.race;
    if (race !== undefined && (race.reads -= 1) === 0) {
      this.race = undefined;
      await race.write();
    }
    return answer;
  }

  override get(key: string) {
    return this.raced(super.get(key));
  }

  override list(query?: Parameters<InMemoryPaymentsJournal['list']>[0]) {
    return this.raced(super.list(query));
  }

  override findByReference(reference: string) {
    return this.raced(super.findByReference(reference));
  }
}

/**
 * A store whose reference reads go as `reads` says, in turn: one that fails (`throws`), one of a
 * replica behind that finds nothing (`behind`), or one held until a promise settles.
 */
class ScriptedReads extends InMemoryPaymentsJournal {
  readonly reads: ('throws' | 'behind' | Promise<void>)[] = [];

  override async findByReference(reference: string) {
    const read = this.reads.shift();
    if (read === 'throws') throw new Error('Command timed out');
    if (read === 'behind') return undefined;
    await read;
    return super.findByReference(reference);
  }
}

/** The error of a payout whose send timed out after it was sent: it may have executed. */
const timedOut = (key: string) =>
  new ServiceAPIError('timeout', {
    operation: 'payouts.mpesa',
    idempotencyKey: key,
    code: 'TIMEOUT',
    attempts: 1,
    mayHaveExecuted: true,
  });

/** The request the accepted sends of these cases were made of. */
const PAYOUT_REQUEST = { phoneNumber: '0712345678', amount: 500, narration: 'Salary' };

/**
 * The service's record of a succeeded payout of 500 KES `reference`, for the entry of `key`, with
 * `changes` over it.
 */
const recordOf = (key: string, reference: string, changes: Partial<JournalSettlement> = {}) =>
  ({
    idempotencyKey: key,
    reference,
    outcome: 'succeeded',
    amount: 500,
    currency: 'KES',
    kind: 'payout',
    by: 'webhook',
    ...changes,
  }) as const;

/** `intent` begun on `journal`, which must decide to send it. */
async function begunSend(
  journal: PaymentsJournal,
  intent: ReturnType<typeof payoutIntent>,
): Promise<Extract<JournalDecision, { send: true }>> {
  const decision = await journal.begin(intent);
  if (!decision.send) throw new Error(`${intent.idempotencyKey} was not sent`);
  return decision;
}

/** Settles `key` by the record of `reference`, which must leave it `succeeded` on it. */
async function expectSettledSucceeded(
  journal: PaymentsJournal,
  store: InMemoryPaymentsJournal,
  key: string,
  reference: string,
): Promise<void> {
  expect(await journal.settle(recordOf(key, reference))).toMatchObject({ result: 'settled' });
  expect(await store.get(key)).toMatchObject({ state: 'succeeded', reference });
}

/** Records that the service accepted `sent` with `reference`. */
function acceptedAs(journal: PaymentsJournal, sent: JournalSendRef, reference: string) {
  return journal.accepted(sent, { success: true, transactionReference: reference }, PAYOUT_REQUEST);
}

describe('PaymentsJournal', () => {
  afterEach(() => jest.restoreAllMocks());

  it.each([1, 2])(
    'raises no second execution for a record whose own call is answered after read %i of the settle',
    async (reads) => {
      const store = new RacedStore();
      const journal = testJournal(store);
      // B paid and settled; A, the same payout under another key, is being sent.
      const paid = await begunSend(journal, payoutIntent('payee-b'));
      await acceptedAs(journal, paid, 'BBBB00000001eW');
      const sending = await begunSend(journal, payoutIntent('payee-a'));
      // A forger posts A's genuine record under B's key; A's answer lands between the journal's reads.
      store.writeAfter(reads, () => acceptedAs(journal, sending, 'AAAA00000001eW'));
      const result = await journal.settle(recordOf('payee-b', 'AAAA00000001eW'));
      expect(store.wrote).toBe(true);
      expect(result.result).toBe('contradicted');
      expect(await store.get('payee-b')).toMatchObject({ reference: 'BBBB00000001eW' });
    },
  );

  it.each([
    [undefined, 1],
    [undefined, 2],
    [undefined, 3],
    ['never-journaled', 1],
    ['never-journaled', 2],
    ['never-journaled', 3],
    ['never-journaled', 4],
  ])(
    'hands an event named by key %s to the call being sent whose answer is written after read %i',
    async (idempotencyKey, reads) => {
      const store = new RacedStore();
      const journal = testJournal(store);
      const sending = await begunSend(journal, payoutIntent('keyless-1'));
      store.writeAfter(reads, () => acceptedAs(journal, sending, 'KEYL00000001eW'));
      const result = await journal.settle({
        ...recordOf('keyless-1', 'KEYL00000001eW'),
        idempotencyKey,
      });
      expect(store.wrote).toBe(true);
      // Never `no-entry`: handled keyless, the event would claim the call's own delivery.
      expect(result).toMatchObject({
        result: expect.stringMatching(/^(in-flight|settled)$/),
        entry: expect.objectContaining({ idempotencyKey: 'keyless-1' }),
      });
    },
  );

  it.each([1, 2, 3])(
    "books no other call's record to an entry in doubt when that call is answered after read %i",
    async (reads) => {
      const store = new RacedStore();
      const journal = testJournal(store);
      // `doubted`'s send timed out, no reference; `sending`, the same payout, is on the wire.
      const doubted = await begunSend(journal, payoutIntent('doubted-2'));
      await journal.failed(doubted, timedOut('doubted-2'));
      const sending = await begunSend(journal, payoutIntent('sending-1'));
      // A forger posts the sent call's genuine record under the doubted key.
      store.writeAfter(reads, () => acceptedAs(journal, sending, 'SENT00000001eW'));
      const result = await journal.settle(recordOf('doubted-2', 'SENT00000001eW'));
      expect(store.wrote).toBe(true);
      expect(result.result).toMatch(/^(contradicted|in-flight)$/);
      const entry = await store.get('doubted-2');
      expect(entry).toMatchObject({ state: 'in_doubt' });
      expect(entry?.reference).toBeUndefined();
      expect(await store.get('sending-1')).toMatchObject({ reference: 'SENT00000001eW' });
    },
  );

  it('settles by a reference two entries hold only the one that held it first, when the store could not tell at the answer', async () => {
    const errors = jest.spyOn(Logger.prototype, 'error').mockImplementation(() => undefined);
    const store = new ScriptedReads();
    const journal = testJournal(store);
    const first = await begunSend(journal, payoutIntent('holder-1'));
    await acceptedAs(journal, first, 'HELD00000001eW');
    // The service answers another call with the first's answer; the store fails the check.
    const second = await begunSend(journal, payoutIntent('second-2'));
    store.reads.push('throws');
    await acceptedAs(journal, second, 'HELD00000001eW');
    await journal.close();
    expect(await store.get('second-2')).toMatchObject({
      state: 'accepted',
      reference: 'HELD00000001eW',
    });

    // The record of the reference, under the later entry's key: a look-up, or its webhook.
    const result = await journal.settle({
      ...recordOf('second-2', 'HELD00000001eW'),
      by: 'status',
    });
    expect(result).toMatchObject({ result: 'contradicted', wrote: true });
    const later = await store.get('second-2');
    expect(later).toMatchObject({ state: 'in_doubt' });
    expect(later?.reference).toBeUndefined();
    expect(later?.answer).toBeUndefined();
    expect(later?.reason).toContain('holder-1');
    expect(errors).toHaveBeenCalledWith(expect.stringContaining('second-2'));
    await expectSettledSucceeded(journal, store, 'holder-1', 'HELD00000001eW');
    expect(await journal.settle(recordOf('second-2', 'HELD00000001eW'))).toMatchObject({
      result: 'contradicted',
    });
    expect((await store.get('second-2'))?.state).toBe('in_doubt');
  });

  it("settles an entry by its own reference's record when the store cannot tell who holds it", async () => {
    const store = new ScriptedReads();
    const journal = testJournal(store);
    const sent = await begunSend(journal, payoutIntent('unsure-1'));
    await acceptedAs(journal, sent, 'OWNR00000001eW');
    await journal.close();
    // The reference index fails: the webhook of the entry's own reference is not held up by it.
    store.reads.push('throws', 'throws');
    await expectSettledSucceeded(journal, store, 'unsure-1', 'OWNR00000001eW');
    await expect(journal.settle(recordOf('unsure-1', 'OWNR00000001eW'))).resolves.toMatchObject({
      result: 'unchanged',
    });
  });

  it('lets go of a reference another entry held first even when the entry was settled before its check ended', async () => {
    jest.spyOn(Logger.prototype, 'error').mockImplementation(() => undefined);
    const store = new ScriptedReads();
    const journal = testJournal(store);
    const first = await begunSend(journal, payoutIntent('holder-3'));
    await acceptedAs(journal, first, 'HELD00000003eW');
    const second = await begunSend(journal, payoutIntent('second-4'));
    // Both checks before the write find it free (the answers came at once); the one after is slow,
    // and the settlement's own check finds it free too.
    let release = () => undefined as void;
    const held = new Promise<void>((resolve) => (release = resolve));
    store.reads.push('behind', held, 'behind');
    await acceptedAs(journal, second, 'HELD00000003eW');
    expect(await journal.settle(recordOf('second-4', 'HELD00000003eW'))).toMatchObject({
      result: 'settled',
    });
    release();
    await journal.close();

    const later = await store.get('second-4');
    expect(later).toMatchObject({ state: 'in_doubt' });
    expect(later?.reference).toBeUndefined();
    expect(later?.settledBy).toBeUndefined();
    expect(later?.reason).toContain('holder-3');
    expect(await store.get('holder-3')).toMatchObject({ reference: 'HELD00000003eW' });
  });

  it('holds an event named by no key, or an unknown one, while a call it may be is being sent', async () => {
    const { journal, store, decision } = await sent('sending-1');
    for (const idempotencyKey of [undefined, 'never-journaled']) {
      const event = { ...recordOf('sending-1', 'SEND00000001eW'), idempotencyKey };
      // Its answer will give the call its reference: the event is that call's, not keyless.
      expect(await journal.settle(event)).toMatchObject({
        result: 'in-flight',
        entry: expect.objectContaining({ idempotencyKey: 'sending-1' }),
      });
    }
    // Another payout's record (another amount) is no call's being sent.
    expect(
      await journal.settle({
        ...recordOf('x', 'OTHR00000001eW'),
        idempotencyKey: undefined,
        amount: 7,
      }),
    ).toEqual({ result: 'no-entry' });
    await acceptedAs(journal, decision, 'SEND00000001eW');
    const again = { ...recordOf('sending-1', 'SEND00000001eW'), idempotencyKey: undefined };
    expect(await journal.settle(again)).toMatchObject({
      result: 'settled',
      entry: expect.objectContaining({ idempotencyKey: 'sending-1', state: 'succeeded' }),
    });
    expect((await store.get('sending-1'))?.state).toBe('succeeded');
  });

  it("reopens an entry settled on another reference than the service's answer gives", async () => {
    const errors = jest.spyOn(Logger.prototype, 'error').mockImplementation(() => undefined);
    // The answer is late (a stalled process): past the deadline the entry reads in doubt, and an
    // event names it by key with a genuine record of another transaction.
    const { journal, store, decision } = await sentPastItsDeadline('salary-1');
    const settled = await journal.settle({
      idempotencyKey: 'salary-1',
      reference: 'OTHER0000001eW',
      outcome: 'succeeded',
      amount: 500,
      currency: 'KES',
      kind: 'payout',
      by: 'webhook',
    });
    expect(settled).toMatchObject({ result: 'settled' });

    await journal.accepted(
      decision,
      { success: true, status: 'pending', transactionReference: 'REAL00000001eW' },
      PAYOUT_REQUEST,
    );

    const entry = await store.get('salary-1');
    expect(entry).toMatchObject({
      state: 'in_doubt',
      reference: 'REAL00000001eW',
      otherExecutions: ['OTHER0000001eW'],
    });
    expect(entry?.reason).toContain('OTHER0000001eW');
    expect(entry?.settledBy).toBeUndefined();
    expect(errors).toHaveBeenCalledWith(expect.stringContaining('REAL00000001eW'));
    // The settled reference stays the entry's: found by it, never free to settle another entry.
    expect((await store.findByReference('OTHER0000001eW'))?.idempotencyKey).toBe('salary-1');
  });

  describe('more than one execution under a key: every reference kept, settled only by a person', () => {
    /** A send stalled past its deadline, and a resend under its key that was accepted as `ref`. */
    async function stalledAndResent(key: string, reference: string) {
      const begun = await sentPastItsDeadline(key);
      const resent = await begunSend(begun.journal, payoutIntent(key, { resend: true }));
      await acceptedAs(begun.journal, resent, reference);
      expect(await begun.store.get(key)).toMatchObject({ state: 'accepted', reference });
      return begun;
    }

    it('settles no other call by a record that may be the unknown execution of a call executed more than once', async () => {
      jest.spyOn(Logger.prototype, 'error').mockImplementation(() => undefined);
      // `twice-9` was resent over a stalled send and accepted; the stalled send then ended in
      // doubt: one of its executions has no known reference.
      const { journal, store, decision } = await stalledAndResent('twice-9', 'RESENT000009eW');
      await journal.failed(decision, timedOut('twice-9'));
      expect(await store.get('twice-9')).toMatchObject({ state: 'in_doubt', otherExecutions: [] });
      // `lost-9`, the same payout, lost its answer.
      const lost = await begunSend(journal, payoutIntent('lost-9'));
      await journal.failed(lost, timedOut('lost-9'));

      // A record of the same figures, under `lost-9`'s key: it may as well be `twice-9`'s first.
      const result = await journal.settle({
        ...recordOf('lost-9', 'FIRST0000009eW'),
        by: 'status',
      });

      expect(result).toMatchObject({ result: 'contradicted', undecided: true });
      expect(result).toMatchObject({
        why: expect.stringContaining('twice-9, executed more than once'),
      });
      const entry = await store.get('lost-9');
      expect(entry).toMatchObject({ state: 'in_doubt' });
      expect(entry?.reference).toBeUndefined();
      // A record of one of its own known references is no other call's.
      expect(
        await journal.settle({ ...recordOf('lost-9', 'RESENT000009eW'), by: 'status' }),
      ).toMatchObject({ result: 'contradicted' });
      expect((await store.get('lost-9'))?.reference).toBeUndefined();
    });

    it('keeps in doubt an entry a record settles when two of its sends ended as ones that may have executed', async () => {
      const errors = jest.spyOn(Logger.prototype, 'error').mockImplementation(() => undefined);
      const { journal, store, decision } = await sent('twice-3');
      // The first answer is lost, then the resend's too: either send, or both, may have paid.
      await journal.failed(decision, new Error('socket hang up'));
      const resent = await begunSend(journal, payoutIntent('twice-3', { resend: true }));
      await journal.failed(resent, new Error('socket hang up'));

      expect(await journal.settle(recordOf('twice-3', 'FIRST0000003eW'))).toMatchObject({
        result: 'settled',
      });

      const entry = await store.get('twice-3');
      expect(entry).toMatchObject({
        state: 'in_doubt',
        reference: 'FIRST0000003eW',
        otherExecutions: [],
      });
      expect(entry?.reason).toContain('more than one transaction may have executed');
      expect(errors).toHaveBeenCalledWith(expect.stringContaining('twice-3'));
      expect(await journal.settle(recordOf('twice-3', 'SECOND000003eW'))).toMatchObject({
        result: 'second-execution',
      });
      await expect(journal.begin(payoutIntent('twice-3', { resend: true }))).rejects.toMatchObject({
        code: 'IN_DOUBT',
      });
    });

    /** The first send under `key` timed out after it left; then a resend under it. */
    async function timedOutThenResent(key: string) {
      const begun = await sent(key);
      await begun.journal.failed(begun.decision, new Error('socket hang up'));
      const resent = await begunSend(begun.journal, payoutIntent(key, { resend: true }));
      return { ...begun, resent };
    }

    it('settles an entry whose resend the service answered 409: it held the key, the resend ran nothing', async () => {
      const { journal, store, resent } = await timedOutThenResent('held-409');
      await journal.failed(resent, keyHeldByTheService('held-409'));
      await expectSettledSucceeded(journal, store, 'held-409', 'ONCE00000409eW');
    });

    it('keeps in doubt an entry whose resend ends in doubt after a record settled it', async () => {
      jest.spyOn(Logger.prototype, 'error').mockImplementation(() => undefined);
      const { journal, store, resent, clock } = await timedOutThenResent('late-resend');
      // The resend stalls past its deadline, and the record of one of the two sends settles it.
      clock.nowMs += 5000;
      expect(await journal.settle(recordOf('late-resend', 'FIRST0000004eW'))).toMatchObject({
        result: 'settled',
      });
      await journal.failed(resent, new Error('socket hang up'));
      expect(await store.get('late-resend')).toMatchObject({
        state: 'in_doubt',
        reference: 'FIRST0000004eW',
        otherExecutions: [],
      });
    });

    it('keeps in doubt a resend accepted over a send that ended in doubt, until a person resolves it', async () => {
      jest.spyOn(Logger.prototype, 'error').mockImplementation(() => undefined);
      const { journal, store, resent } = await timedOutThenResent('resent-accepted');
      await acceptedAs(journal, resent, 'SECOND000005eW');
      expect(await store.get('resent-accepted')).toMatchObject({
        state: 'in_doubt',
        reference: 'SECOND000005eW',
        otherExecutions: [],
      });
      // Resolved refused first, the timed-out send no longer counts: the next send stands alone.
      const { journal: other, store: otherStore, decision } = await sent('resolved-first');
      await other.failed(decision, new Error('socket hang up'));
      await other.resolve('resolved-first', { outcome: 'refused', note: 'ops: not in the ledger' });
      const again = await begunSend(other, payoutIntent('resolved-first'));
      await acceptedAs(other, again, 'ONLY00000005eW');
      expect(await otherStore.get('resolved-first')).toMatchObject({
        state: 'accepted',
        reference: 'ONLY00000005eW',
      });
    });

    it('keeps in doubt, closed to a plain retry, an entry whose resend over a send in doubt the service refused', async () => {
      const { journal, store, resent } = await timedOutThenResent('refused-resend');
      // The resend ran nothing; the send before it may have paid.
      await journal.failed(resent, refusedByTheService('refused-resend', 400));

      const entry = await store.get('refused-resend');
      expect(entry).toMatchObject({ state: 'in_doubt' });
      expect(entry?.reason).toMatch(/earlier send under the key may have executed.*HTTP 400/);
      await expect(journal.begin(payoutIntent('refused-resend'))).rejects.toMatchObject({
        code: 'IN_DOUBT',
      });
      // Resolved refused by a person first, the same 4xx leaves the key refused, open to a retry.
      const { journal: other, store: otherStore, decision } = await sent('refused-after-person');
      await other.failed(decision, new Error('socket hang up'));
      await other.resolve('refused-after-person', { outcome: 'refused', note: 'ops: not there' });
      const again = await begunSend(other, payoutIntent('refused-after-person'));
      await other.failed(again, refusedByTheService('refused-after-person', 400));
      expect(await otherStore.get('refused-after-person')).toMatchObject({ state: 'refused' });
    });

    it('keeps in doubt an entry a record without a reference settles, when a person weighed an earlier send that may have executed', async () => {
      jest.spyOn(Logger.prototype, 'error').mockImplementation(() => undefined);
      const { journal, store, decision } = await sent('weighed-1');
      await journal.failed(decision, new Error('socket hang up'));
      // A person looks too early and resolves it refused; the call goes again, its answer lost too.
      await journal.resolve('weighed-1', { outcome: 'refused', note: 'ops: not in the dashboard' });
      expect((await store.get('weighed-1'))?.calls[0]).toMatchObject({ weighed: true });
      const again = await begunSend(journal, payoutIntent('weighed-1'));
      await journal.failed(again, new Error('socket hang up'));

      // The record may be the first send's, which the person misjudged: both may have paid.
      expect(await journal.settle(recordOf('weighed-1', 'FIRST0000006eW'))).toMatchObject({
        result: 'settled',
      });
      expect(await store.get('weighed-1')).toMatchObject({
        state: 'in_doubt',
        reference: 'FIRST0000006eW',
        otherExecutions: [],
      });
    });

    it("counts a send that ended after a person's resolution on an instance whose clock runs ahead", async () => {
      jest.spyOn(Logger.prototype, 'error').mockImplementation(() => undefined);
      const store = new InMemoryPaymentsJournal();
      const senderNow = Date.parse('2026-11-27T08:00:00Z');
      const sender = testJournal(store, () => senderNow);
      // A minute ahead, the person's instance sees the send in flight past its deadline.
      const operator = testJournal(store, () => senderNow + 60_000);
      const stalled = await begunSend(sender, payoutIntent('skewed-1'));
      await operator.resolve('skewed-1', { outcome: 'refused', note: 'ops: past its deadline' });
      const retried = await begunSend(sender, payoutIntent('skewed-1'));
      await acceptedAs(sender, retried, 'RETRY0000001eW');
      // The stalled send's answer comes at last, lost: it may have paid as well as the retry.
      await sender.failed(stalled, new Error('socket hang up'));

      const entry = await store.get('skewed-1');
      expect(entry).toMatchObject({ state: 'in_doubt', reference: 'RETRY0000001eW' });
      expect(entry?.calls.some((call) => call.weighed)).toBe(false);
    });

    it('keeps a send that may have executed among 20 sends answered 409: a later accepted resend is in doubt', async () => {
      jest.spyOn(Logger.prototype, 'error').mockImplementation(() => undefined);
      const { journal, store, decision } = await sent('held-20');
      await journal.failed(decision, refusedByTheService('held-20', 400));
      const lost = await begunSend(journal, payoutIntent('held-20'));
      await journal.failed(lost, new Error('socket hang up'));
      for (let resend = 0; resend < 18; resend += 1) {
        const held = await begunSend(journal, payoutIntent('held-20', { resend: true }));
        await journal.failed(held, keyHeldByTheService('held-20'));
      }
      const last = await begunSend(journal, payoutIntent('held-20', { resend: true }));
      await acceptedAs(journal, last, 'LAST00000020eW');

      const entry = await store.get('held-20');
      expect(entry).toMatchObject({ state: 'in_doubt', reference: 'LAST00000020eW' });
      // No send ran nothing but the first: all are kept, beyond the bound of 20.
      expect(entry?.calls).toHaveLength(21);
      expect(
        entry?.calls.filter((call) => call.code === undefined && call.outcome === 'in_doubt'),
      ).toHaveLength(1);
    });

    it('counts a send answered 409 after a retried attempt: its first attempt may have paid', async () => {
      jest.spyOn(Logger.prototype, 'error').mockImplementation(() => undefined);
      for (const [key, end] of [
        ['held-retried-1', 'refused'],
        ['held-retried-2', 'accepted'],
      ] as const) {
        const { journal, store, decision } = await sent(key);
        await journal.failed(decision, keyHeldAfterARetry(key));
        const resent = await begunSend(journal, payoutIntent(key, { resend: true }));
        if (end === 'refused') await journal.failed(resent, refusedByTheService(key, 429));
        else await acceptedAs(journal, resent, 'RESENT000409eW');
        expect(await store.get(key)).toMatchObject({ state: 'in_doubt' });
        await expect(journal.begin(payoutIntent(key))).rejects.toMatchObject({ code: 'IN_DOUBT' });
      }
    });

    it('puts in doubt an entry a person resolved on a reference when a send in flight then ends in doubt', async () => {
      jest.spyOn(Logger.prototype, 'error').mockImplementation(() => undefined);
      const { journal, store, resent, clock } = await timedOutThenResent('found-1');
      clock.nowMs += 5000;
      // The resend stalls; a person finds one payout in the dashboard and resolves on it.
      await journal.resolve(
        'found-1',
        { outcome: 'succeeded', reference: 'FOUND0000001eW', note: 'ops: one in the dashboard' },
        { ...recordOf('found-1', 'FOUND0000001eW'), status: 'success', by: 'status' },
      );
      // Which send made that payout cannot be told: the stalled one, ending in doubt, may be a second.
      await journal.failed(resent, new Error('socket hang up'));
      expect(await store.get('found-1')).toMatchObject({
        state: 'in_doubt',
        reference: 'FOUND0000001eW',
        otherExecutions: [],
      });
    });

    it('settles a resent entry by its record when the send before never ended (its process died)', async () => {
      // A person found the first send never reached the service, then resent: one execution.
      const { journal, store } = await sentPastItsDeadline('once-3');
      const resent = await begunSend(journal, payoutIntent('once-3', { resend: true }));
      await journal.failed(resent, new Error('socket hang up'));

      await expectSettledSucceeded(journal, store, 'once-3', 'ONLY00000003eW');
    });

    it.each([
      ['its write before the send failed', 'JOURNAL_UNAVAILABLE'],
      ['its deadline came before the send', 'TIMEOUT'],
    ] as const)(
      'keeps in doubt a key whose resend over a send that never ended was not sent: %s',
      async (_case, code) => {
        const { journal, store } = await sentPastItsDeadline('unsent-1');
        const resent = await begunSend(journal, payoutIntent('unsent-1', { resend: true }));
        await journal.failed(
          resent,
          new ServiceAPIError('not sent', {
            operation: 'payouts.mpesa',
            idempotencyKey: 'unsent-1',
            code,
            attempts: 0,
            mayHaveExecuted: false,
          }),
        );
        const entry = await store.get('unsent-1');
        expect(entry).toMatchObject({ state: 'in_doubt' });
        expect(entry?.reason).toContain('never ended');
        // Nothing goes out under the key without a resend: the first send may have paid.
        await expect(journal.begin(payoutIntent('unsent-1'))).rejects.toMatchObject({
          code: 'IN_DOUBT',
        });
      },
    );

    it('takes the refusal of a resend the service answered over a send that never ended: the caller vouched for it', async () => {
      const { journal, store } = await sentPastItsDeadline('vouched-1');
      const resent = await begunSend(journal, payoutIntent('vouched-1', { resend: true }));
      await journal.failed(resent, refusedByTheService('vouched-1', 400));
      expect(await store.get('vouched-1')).toMatchObject({ state: 'refused' });
    });

    it("keeps in doubt a send's answer written after a later resend ended in doubt (the store down meanwhile)", async () => {
      const errors = jest.spyOn(Logger.prototype, 'error').mockImplementation(() => undefined);
      const { journal, store, decision } = await sentPastItsDeadline('late-1');
      const resent = await begunSend(journal, payoutIntent('late-1', { resend: true }));
      await journal.failed(resent, timedOut('late-1'));
      // The first send's answer, written only now.
      await acceptedAs(journal, decision, 'FIRST0000001eW');
      const entry = await store.get('late-1');
      expect(entry).toMatchObject({ state: 'in_doubt', reference: 'FIRST0000001eW' });
      expect(entry?.reason).toContain('more than one transaction may have executed');
      expect(errors).toHaveBeenCalledWith(expect.stringContaining('late-1'));
      await expect(journal.begin(payoutIntent('late-1', { resend: true }))).rejects.toMatchObject({
        code: 'IN_DOUBT',
      });
    });

    it('keeps the second reference when two sends are accepted, found by it, through settlements and the resolution', async () => {
      jest.spyOn(Logger.prototype, 'error').mockImplementation(() => undefined);
      const { journal, store, decision } = await stalledAndResent('twice-1', 'SECOND000001eW');
      await acceptedAs(journal, decision, 'FIRST0000001eW');
      const doubted = await store.get('twice-1');
      expect(doubted).toMatchObject({
        state: 'in_doubt',
        reference: 'SECOND000001eW',
        otherExecutions: ['FIRST0000001eW'],
      });
      expect((await store.findByReference('FIRST0000001eW'))?.idempotencyKey).toBe('twice-1');
      // It executed (twice): a third send is refused, even with resend.
      await expect(journal.begin(payoutIntent('twice-1', { resend: true }))).rejects.toMatchObject({
        code: 'IN_DOUBT',
        message: expect.stringContaining('SECOND000001eW') as string,
      });

      // The record of either transaction leaves the entry in doubt: a person looks at both.
      expect(await journal.settle(recordOf('twice-1', 'SECOND000001eW'))).toMatchObject({
        result: 'unchanged',
      });
      expect(await journal.settle(recordOf('twice-1', 'FIRST0000001eW'))).toMatchObject({
        result: 'second-execution',
      });
      // Named by its reference alone (the URL's key lost), the other execution is still this call's.
      const { idempotencyKey: _key, ...byReference } = recordOf('twice-1', 'FIRST0000001eW');
      expect(await journal.settle(byReference)).toMatchObject({ result: 'second-execution' });
      expect(await store.get('twice-1')).toEqual(doubted);

      const resolution = {
        outcome: 'succeeded',
        note: 'ops: both paid; 500 KES recovered from the payee, ticket 12',
      } as const;
      // Only on the service's final record of the execution it goes by.
      await expect(journal.resolve('twice-1', resolution)).rejects.toMatchObject({
        code: 'REFUSED',
      });
      const resolved = await journal.resolve('twice-1', resolution, {
        ...recordOf('twice-1', 'SECOND000001eW'),
        by: 'status',
        status: 'success',
      });
      expect(resolved).toMatchObject({
        state: 'succeeded',
        settledBy: 'manual',
        otherExecutions: ['FIRST0000001eW'],
      });
      expect((await store.findByReference('FIRST0000001eW'))?.idempotencyKey).toBe('twice-1');
      expect(await journal.settle(recordOf('twice-1', 'FIRST0000001eW'))).toMatchObject({
        result: 'second-execution',
      });
    });

    it('keeps an entry in doubt when a stalled send that may have executed ends after another was accepted', async () => {
      const errors = jest.spyOn(Logger.prototype, 'error').mockImplementation(() => undefined);
      const { journal, store, decision } = await stalledAndResent('twice-2', 'SECOND000002eW');
      await journal.failed(decision, new Error('socket hang up'));

      const entry = await store.get('twice-2');
      expect(entry).toMatchObject({
        state: 'in_doubt',
        reference: 'SECOND000002eW',
        otherExecutions: [],
      });
      expect(entry?.reason).toMatch(/SECOND000002eW.*may have executed/);
      expect(errors).toHaveBeenCalledWith(expect.stringContaining('twice-2'));
      expect(await journal.settle(recordOf('twice-2', 'SECOND000002eW'))).toMatchObject({
        result: 'unchanged',
      });
      expect((await store.get('twice-2'))?.state).toBe('in_doubt');
    });

    it('lets a person resolve on any of the executions, which becomes the reference; a record of another settles nothing after', async () => {
      const { journal, store, decision } = await stalledAndResent('twice-4', 'FIRST0000004eW');
      await acceptedAs(journal, decision, 'SECOND000004eW');
      // The first failed at the service, the second paid: the call succeeded, on the second.
      const resolved = await journal.resolve(
        'twice-4',
        { outcome: 'succeeded', reference: 'SECOND000004eW', note: 'ops: paid once, ticket 3' },
        { ...recordOf('twice-4', 'SECOND000004eW'), by: 'status', status: 'success' },
      );
      expect(resolved).toMatchObject({
        state: 'succeeded',
        reference: 'SECOND000004eW',
        otherExecutions: ['FIRST0000004eW'],
        settledStatus: 'success',
      });
      // The first's record, failed: reported, and the person's resolution stands.
      const failedFirst = { ...recordOf('twice-4', 'FIRST0000004eW'), outcome: 'failed' } as const;
      expect(await journal.settle(failedFirst)).toMatchObject({ result: 'second-execution' });
      expect(await store.get('twice-4')).toMatchObject({ state: 'succeeded' });
    });

    it("keeps a person's resolution of several executions against a record of one of them", async () => {
      const { journal, store, decision } = await stalledAndResent('twice-5', 'FIRST0000005eW');
      await acceptedAs(journal, decision, 'SECOND000005eW');
      const resolved = await journal.resolve(
        'twice-5',
        { outcome: 'succeeded', note: 'ops: the first paid, the second was reversed, ticket 8' },
        { ...recordOf('twice-5', 'FIRST0000005eW'), by: 'status', status: 'success' },
      );
      expect(awaitsConfirmation(resolved)).toBe(false);
      // A record of its reference that says otherwise does not overrule a person who weighed
      // every execution: reported, left as resolved.
      const failedFirst = { ...recordOf('twice-5', 'FIRST0000005eW'), outcome: 'failed' } as const;
      expect(await journal.settle(failedFirst)).toMatchObject({ result: 'unchanged' });
      expect(await store.get('twice-5')).toEqual(resolved);
    });

    it('resolves on a listed execution only while no other entry holds it, and lists it once', async () => {
      const { journal, store, decision } = await stalledAndResent('twice-8', 'FIRST0000008eW');
      await acceptedAs(journal, decision, 'SECOND000008eW');
      // Another entry held the second reference first.
      const holderEntry = (await store.get('twice-8'))!;
      await store.create({
        ...holderEntry,
        idempotencyKey: 'holder-8',
        version: 1,
        reference: 'HELD00000008eW',
        state: 'accepted',
        calls: [],
      });
      const twice = (await store.get('twice-8'))!;
      await store.replace({
        ...twice,
        version: twice.version + 1,
        otherExecutions: ['SECOND000008eW', 'HELD00000008eW'],
      });
      const record = (reference: string) =>
        ({ ...recordOf('twice-8', reference), by: 'status', status: 'success' }) as const;
      const note = { outcome: 'succeeded', note: 'ops' } as const;
      await expect(
        journal.resolve(
          'twice-8',
          { ...note, reference: 'HELD00000008eW' },
          record('HELD00000008eW'),
        ),
      ).rejects.toThrow('belongs to the journal entry holder-8');

      const resolved = await journal.resolve(
        'twice-8',
        { ...note, reference: 'SECOND000008eW' },
        record('SECOND000008eW'),
      );
      expect(resolved).toMatchObject({
        reference: 'SECOND000008eW',
        otherExecutions: ['FIRST0000008eW', 'HELD00000008eW'],
      });
    });

    it('lists a resolved execution once, as the reference, also for an entry that had none', async () => {
      const { journal, store } = await sent('twice-9');
      await executedMoreThanOnce(store, 'twice-9', ['X00000000009eW']);
      const resolved = await journal.resolve(
        'twice-9',
        { outcome: 'succeeded', reference: 'X00000000009eW', note: 'ops' },
        { ...recordOf('twice-9', 'X00000000009eW'), by: 'status', status: 'success' },
      );
      expect(resolved).toMatchObject({ reference: 'X00000000009eW', otherExecutions: [] });
    });

    it("never sends again, nor takes 'refused' for, an entry with other executions, even without a reference", async () => {
      const { journal, store } = await sent('twice-6');
      await executedMoreThanOnce(store, 'twice-6', ['OTHER0000006eW']);
      await expect(journal.begin(payoutIntent('twice-6', { resend: true }))).rejects.toMatchObject({
        code: 'IN_DOUBT',
      });
      await expect(
        journal.resolve('twice-6', { outcome: 'refused', note: 'ops: a guess' }),
      ).rejects.toMatchObject({ code: 'REFUSED' });
    });

    it("never sends again, nor takes 'refused' for, an entry the service accepted without a reference", async () => {
      const { journal, store, decision } = await sent('noref-1');
      await journal.accepted(decision, { success: true, message: 'queued' }, PAYOUT_REQUEST);
      expect(await store.get('noref-1')).toMatchObject({
        state: 'in_doubt',
        reason: 'the service accepted the call without a transaction reference',
      });
      await expect(journal.begin(payoutIntent('noref-1'))).rejects.toMatchObject({
        code: 'IN_DOUBT',
      });
      await expect(journal.begin(payoutIntent('noref-1', { resend: true }))).rejects.toMatchObject({
        code: 'IN_DOUBT',
        message: expect.stringContaining('accepted (without a transaction reference)') as string,
      });
      await expect(
        journal.resolve('noref-1', { outcome: 'refused', note: 'ops: a guess' }),
      ).rejects.toMatchObject({ code: 'REFUSED' });
      // Nothing was written by either refusal: one send, still in doubt.
      expect(await store.get('noref-1')).toMatchObject({ state: 'in_doubt', version: 2 });
      expect((await store.get('noref-1'))?.calls).toHaveLength(1);
    });

    it('keeps in doubt, never sends again, an entry the service accepted without a reference when a resend is then refused', async () => {
      jest.spyOn(Logger.prototype, 'error').mockImplementation(() => undefined);
      const { journal, store, decision: first, clock } = await sentPastItsDeadline('noref-2');
      // In doubt past its deadline: a resend is allowed, before the first send's answer comes.
      const second = await begunSend(journal, payoutIntent('noref-2', { resend: true }));
      await journal.accepted(first, { success: true, message: 'queued' }, PAYOUT_REQUEST);
      await journal.failed(second, refusedByTheService('noref-2', 400));
      expect(await store.get('noref-2')).toMatchObject({
        state: 'in_doubt',
        answer: expect.anything() as unknown,
      });
      clock.nowMs += 5000;
      await expect(journal.begin(payoutIntent('noref-2'))).rejects.toMatchObject({
        code: 'IN_DOUBT',
      });
      await expect(journal.begin(payoutIntent('noref-2', { resend: true }))).rejects.toMatchObject({
        code: 'IN_DOUBT',
      });
      expect((await store.get('noref-2'))?.calls).toHaveLength(2);
    });

    it('never sends again an entry stored refused although the service accepted a call under its key', async () => {
      const { journal, store, decision } = await sent('noref-3');
      await journal.accepted(decision, { success: true, message: 'queued' }, PAYOUT_REQUEST);
      // As an earlier version wrote it: the latest send's 4xx made the whole entry refused.
      const entry = (await store.get('noref-3'))!;
      await store.replace({ ...entry, state: 'refused', version: entry.version + 1 });
      await expect(journal.begin(payoutIntent('noref-3'))).rejects.toMatchObject({
        code: 'IN_DOUBT',
        message: expect.stringContaining('accepted (without a transaction reference)') as string,
      });
      expect((await store.get('noref-3'))?.calls).toHaveLength(1);
    });

    it('never takes an unsent leftover for the state of an entry the service executed', async () => {
      const errors = jest.spyOn(Logger.prototype, 'error').mockImplementation(() => undefined);
      jest.spyOn(Logger.prototype, 'warn').mockImplementation(() => undefined);
      const store = new LandsThenFails();
      const clock = { nowMs: Date.parse('2026-11-27T08:00:00Z') };
      const journal = testJournal(store, () => clock.nowMs);
      const first = await begunSend(journal, payoutIntent('twice-7'));
      clock.nowMs += 5000;
      const second = await begunSend(journal, payoutIntent('twice-7', { resend: true }));
      clock.nowMs += 5000;
      // A third send's write lands but its answer is lost, and its undo cannot be written.
      store.failing = true;
      await expect(journal.begin(payoutIntent('twice-7', { resend: true }))).rejects.toMatchObject({
        code: 'JOURNAL_UNAVAILABLE',
      });
      await waitFor(
        () =>
          errors.mock.calls.some(([line]) => String(line).includes('could not record'))
            ? true
            : undefined,
        'the undo to give up',
      );
      store.failing = false;
      await acceptedAs(journal, first, 'R7A0000001eW');
      await acceptedAs(journal, second, 'R7B0000001eW');
      expect(await store.get('twice-7')).toMatchObject({
        state: 'in_doubt',
        otherExecutions: ['R7B0000001eW'],
      });
      await expect(journal.begin(payoutIntent('twice-7'))).rejects.toMatchObject({
        code: 'IN_DOUBT',
      });
      // The leftover is written off as never sent; the entry stays as the service left it.
      expect((await store.get('twice-7'))?.calls.at(-1)).toMatchObject({
        outcome: 'refused',
        code: 'JOURNAL_UNAVAILABLE',
      });
      expect((await store.get('twice-7'))?.state).toBe('in_doubt');
    });
  });

  describe("a person's resolution the record does not bear out", () => {
    /** A payout accepted as `REF`, resolved succeeded while its record was pending. */
    async function resolvedWhilePending(key: string) {
      jest.spyOn(Logger.prototype, 'error').mockImplementation(() => undefined);
      const begun = await sent(key);
      await begun.journal.accepted(
        begun.decision,
        { success: true, transactionReference: `REF-${key}` },
        PAYOUT_REQUEST,
      );
      const resolved = await begun.journal.resolve(key, {
        outcome: 'succeeded',
        note: 'ops: paid',
      });
      expect(awaitsConfirmation(resolved)).toBe(true);
      return begun;
    }
    const finalRecord = (key: string, reference: string) =>
      ({ ...recordOf(key, reference), by: 'status', status: 'success' }) as const;

    it('measures its window from the resolution, whatever changed the entry since', async () => {
      const { journal, store, clock } = await resolvedWhilePending('window-1');
      clock.nowMs += PAYMENTS_CONFIRMATION_WINDOW_MS - 1000;
      const entry = (await store.get('window-1'))!;
      // A late end of another send touched the entry.
      await store.replace({
        ...entry,
        version: entry.version + 1,
        updatedAt: new Date(clock.nowMs).toISOString(),
      });
      clock.nowMs += 2000;
      expect(journal.confirmationLapsed((await store.get('window-1'))!)).toBe(true);
    });

    it('is confirmed by a final record that agrees later, which clears unconfirmed', async () => {
      const { journal, store } = await resolvedWhilePending('window-2');
      await journal.markUnconfirmed((await store.get('window-2'))!, 'still pending 72 h after');
      expect((await store.get('window-2'))?.unconfirmed).toBeDefined();

      await journal.settle(finalRecord('window-2', 'REF-window-2'));
      const confirmed = await store.get('window-2');
      expect(confirmed).toMatchObject({
        state: 'succeeded',
        settledBy: 'manual',
        settledStatus: 'success',
      });
      expect(confirmed?.unconfirmed).toBeUndefined();
    });

    it("is cleared when the entry is reopened; the person's note and resolvedAt stay", async () => {
      const { journal, store, decision } = await resolvedWhilePending('window-3');
      await journal.markUnconfirmed((await store.get('window-3'))!, 'still pending 72 h after');
      // The call's late answer names another reference: open again, in doubt.
      await acceptedAs(journal, decision, 'REF-late');
      const reopened = await store.get('window-3');
      expect(reopened?.state).toBe('in_doubt');
      expect(reopened?.unconfirmed).toBeUndefined();
      expect(reopened).toMatchObject({
        note: 'ops: paid',
        resolvedAt: expect.any(String) as string,
      });
    });
  });

  it('holds a key with no entry in doubt, so that a send under it is stopped; an entry there stays', async () => {
    const store = new InMemoryPaymentsJournal();
    const journal = testJournal(store);
    const held = await journal.hold(payoutIntent('taken-over'), 'in_doubt', 'its worker stopped');
    expect(held).toMatchObject({
      state: 'in_doubt',
      reason: 'its worker stopped',
      amount: 500,
      currency: 'KES',
      calls: [],
      fingerprint: journal.fingerprint('payouts.mpesa', payoutIntent('taken-over').encoded),
    });
    await expect(journal.begin(payoutIntent('taken-over'))).rejects.toMatchObject({
      code: 'IN_DOUBT',
    });

    const { journal: other, store: otherStore } = await sent('sent-first');
    const before = await otherStore.get('sent-first');
    expect(await other.hold(payoutIntent('sent-first'), 'in_doubt', 'too late')).toEqual(before);
    expect(await otherStore.get('sent-first')).toEqual(before);
  });

  it('keeps a held key a person settled refused closed to sends, unless the caller says resend', async () => {
    const store = new InMemoryPaymentsJournal();
    const journal = testJournal(store);
    await journal.hold(payoutIntent('held'), 'in_doubt', 'its worker stopped');
    await journal.resolve('held', { outcome: 'refused', note: 'not in the ledger; ticket 7' });

    // The stopped worker, should it only have stalled, wakes up and sends.
    const stalled = await journal.begin(payoutIntent('held')).catch((error: unknown) => error);
    expect(stalled).toMatchObject({
      code: 'ALREADY_REFUSED',
      mayHaveExecuted: false,
      entry: { state: 'refused', settledBy: 'manual' },
    });
    expect(await store.get('held')).toMatchObject({ state: 'refused', calls: [] });

    const meant = await journal.begin(payoutIntent('held', { resend: true }));
    expect(meant.send).toBe(true);
    // Any other refused entry (it was sent, and refused) is sent again as a retry.
    const { journal: other, decision } = await sent('refused-by-the-service');
    await other.failed(decision, refusedByTheService('refused-by-the-service', 400));
    expect((await other.begin(payoutIntent('refused-by-the-service'))).send).toBe(true);
  });

  describe('a webhook of a call the service refused (a service that executed, then answered 429)', () => {
    /** {@link recordOf}, created while the calls of these cases were being sent. */
    const sentRecordOf = (key: string, reference: string, changes: object = {}) =>
      recordOf(key, reference, { createdAt: '2026-11-27T08:00:01Z', ...changes });

    it.each([429, 401, 400])(
      'reopens the entry refused by a %d in doubt, settles it by the record, and answers the retry from it',
      async (status) => {
        const { journal, store, decision } = await sent(`refused-${status}`);
        await journal.failed(decision, refusedByTheService(`refused-${status}`, status));
        const errors = jest.spyOn(Logger.prototype, 'error').mockImplementation(() => undefined);

        const settled = await journal.settle(sentRecordOf(`refused-${status}`, 'EXEC0000001eW'));

        expect(settled).toMatchObject({
          result: 'settled',
          entry: { state: 'succeeded', reference: 'EXEC0000001eW', settledBy: 'webhook' },
        });
        expect(errors.mock.calls.map(([line]) => String(line)).join('\n')).toContain(
          `the service refused the call (HTTP ${status}), yet its record of EXEC0000001eW`,
        );
        // The run's retry after the 429 sends nothing: the service paid already.
        const retry = await journal.begin(payoutIntent(`refused-${status}`));
        expect(retry).toMatchObject({ send: false, entry: { reference: 'EXEC0000001eW' } });
        expect((await store.get(`refused-${status}`))?.calls).toHaveLength(1);
        errors.mockRestore();
      },
    );

    it('leaves it refused by a record another call holds, or created long after the refused send', async () => {
      const { journal, store, decision } = await sent('refused-held-ref');
      await journal.failed(decision, refusedByTheService('refused-held-ref', 401));
      // Another call of the same figures, accepted with its reference.
      const other = await journal.begin(payoutIntent('accepted-other'));
      if (!other.send) throw new Error('not sent');
      await journal.accepted(other, { success: true, transactionReference: 'HELD0000001eW' }, {});

      expect(await journal.settle(sentRecordOf('refused-held-ref', 'HELD0000001eW'))).toMatchObject(
        {
          result: 'contradicted',
          why: expect.stringContaining('belongs to the call accepted-other'),
        },
      );
      expect(
        await journal.settle(
          sentRecordOf('refused-held-ref', 'LATE0000001eW', { createdAt: '2026-11-30T08:00:00Z' }),
        ),
      ).toMatchObject({
        result: 'contradicted',
        why: expect.stringContaining('not created while it was being sent'),
      });
      expect(await store.get('refused-held-ref')).toMatchObject({ state: 'refused' });
      expect((await journal.begin(payoutIntent('refused-held-ref'))).send).toBe(true);
    });

    it('leaves it refused by a record of other figures, and one a person or a cancel refused', async () => {
      const { journal, store, decision } = await sent('refused-other');
      await journal.failed(decision, refusedByTheService('refused-other', 429));
      expect(
        await journal.settle(sentRecordOf('refused-other', 'EXEC0000002eW', { amount: 501 })),
      ).toMatchObject({ result: 'contradicted' });
      expect(await store.get('refused-other')).toMatchObject({ state: 'refused' });

      await journal.hold(payoutIntent('held-refused'), 'refused', 'the run was cancelled');
      expect(await journal.settle(sentRecordOf('held-refused', 'EXEC0000003eW'))).toMatchObject({
        result: 'contradicted',
        why: expect.stringContaining('never executed'),
      });
    });
  });

  describe("the payee: a lost answer's entry settles only by a record of its own phone number", () => {
    /** A payout to `phoneNumber` under `key` whose answer was lost, journaled with `payeeKey`. */
    async function lost(
      store: InMemoryPaymentsJournal,
      key: string,
      phoneNumber: string,
      accountNumber?: string,
    ) {
      const journal = journalWith(store, 2);
      const decision = await journal.begin({ ...payoutIntent(key), phoneNumber, accountNumber });
      if (!decision.send) throw new Error('the call was not sent');
      await journal.failed(decision, new Error('socket hang up'));
      return journal;
    }
    function journalWith(store: InMemoryPaymentsJournal, payeeKey: number) {
      return new PaymentsJournal(store, {
        account: 'default',
        fingerprintKey: Buffer.alloc(32, 1),
        payeeKey: Buffer.alloc(32, payeeKey),
      });
    }
    const record = (phoneNumber: string) =>
      ({
        idempotencyKey: 'salary-ng',
        reference: 'NG0000000001eW',
        outcome: 'succeeded',
        amount: 500,
        currency: 'KES',
        kind: 'payout',
        createdAt: new Date().toISOString(),
        phoneNumber,
        by: 'webhook',
      }) as const;

    it('tells apart two numbers that share their last nine digits (Nigeria)', async () => {
      const journal = await lost(new InMemoryPaymentsJournal(), 'salary-ng', '+2348031234567');
      expect(await journal.settle(record('+2347031234567'))).toMatchObject({
        result: 'contradicted',
      });
      expect(await journal.settle(record('08031234567'))).toMatchObject({ result: 'settled' });
    });

    it('does not compare a number the record masks', async () => {
      const journal = await lost(new InMemoryPaymentsJournal(), 'salary-ng', '+2348031234567');
      expect(await journal.settle(record('234803***4567'))).toMatchObject({ result: 'settled' });
    });

    it('settles by key alone no record that another lost call to the same number could own', async () => {
      const store = new InMemoryPaymentsJournal();
      // Two merchant payouts of one amount with one contact number, both answers lost.
      const journal = await lost(store, 'salary-ng', '+2348031234567');
      await lost(store, 'salary-ng-2', '+2348031234567');

      expect(await journal.settle(record('+2348031234567'))).toMatchObject({
        result: 'contradicted',
        undecided: true,
        why: expect.stringContaining('salary-ng-2 could as well be'),
      });
      // Kept for reconcile() and a person: it may be this call's own execution.
      const entry = await store.get('salary-ng');
      expect(entry).toMatchObject({ state: 'in_doubt' });
      expect(entry?.deferredEvents?.map((event) => event.reference)).toEqual([
        record('').reference,
      ]);
      const intent = { ...payoutIntent('salary-ng'), phoneNumber: '+2348031234567' };
      await expect(journal.begin({ ...intent, resend: true })).rejects.toMatchObject({
        code: 'IN_DOUBT',
      });
    });

    it("tells apart two calls to one contact number by the record's account number, when it is the call's own", async () => {
      const store = new InMemoryPaymentsJournal();
      // Two merchant payouts of one amount with one contact number, to two tills.
      const journal = await lost(store, 'salary-ng', '+2348031234567', '500 001');
      await lost(store, 'salary-ng-2', '+2348031234567', '500002');
      const ofAccount = (accountNumber: string) => ({
        ...record('+2348031234567'),
        accountNumber,
      });

      // An account number that is neither call's (what the service puts there for a payout is
      // not documented: its own id, say) tells nothing apart, and contradicts nothing.
      expect(await journal.settle(ofAccount('00000000-0000-4000-a000-000000000002'))).toMatchObject(
        { result: 'contradicted', undecided: true },
      );
      // The other call's: not this call's record to take.
      expect(await journal.settle(ofAccount('500002'))).toMatchObject({
        result: 'contradicted',
        undecided: true,
      });
      // Its own, however spaced: the other call is of another account.
      expect(await journal.settle(ofAccount('500001'))).toMatchObject({
        result: 'settled',
        entry: { state: 'succeeded', reference: record('').reference },
      });
      expect((await store.get('salary-ng'))?.payeeAccount).toMatch(/^[\w-]+\.[\w+/=]+$/);
      expect(JSON.stringify(await store.get('salary-ng'))).not.toContain('500001');
    });

    it("does not tell apart by the account a call journaled with another key's fingerprints (a rotated secret)", async () => {
      const store = new InMemoryPaymentsJournal();
      const journal = await lost(store, 'salary-ng', '+2348031234567', '500001');
      // The other call, to the same phone and account, journaled before a rotation of the key.
      const before = journalWith(store, 3);
      const decision = await before.begin({
        ...payoutIntent('salary-old'),
        phoneNumber: '+2348031234567',
        accountNumber: '500001',
      });
      if (!decision.send) throw new Error('not sent');
      await before.failed(decision, new Error('socket hang up'));

      expect(
        await journal.settle({ ...record('+2348031234567'), accountNumber: '500001' }),
      ).toMatchObject({
        result: 'contradicted',
        undecided: true,
        why: expect.stringContaining('salary-old could as well be'),
      });
    });

    it('asks again later while the other call that could own the record is being sent', async () => {
      const store = new InMemoryPaymentsJournal();
      const journal = await lost(store, 'salary-ng', '+2348031234567');
      await journal.begin({ ...payoutIntent('salary-ng-3'), phoneNumber: '+2348031234567' });

      expect(await journal.settle(record('+2348031234567'))).toMatchObject({
        result: 'in-flight',
        entry: { idempotencyKey: 'salary-ng-3' },
      });
      // Another number on the record: the call being sent is not a candidate.
      expect(await journal.settle(record('+2347031234567'))).toMatchObject({
        result: 'contradicted',
        why: expect.stringContaining('another phone number'),
      });
    });

    it('does not compare a fingerprint made with another key (a rotated secret)', async () => {
      const store = new InMemoryPaymentsJournal();
      await lost(store, 'salary-ng', '+2348031234567');
      const rotated = journalWith(store, 3);
      // Its own payee would not match under the new key: the entry is still settled.
      expect(await rotated.settle(record('+2348031234567'))).toMatchObject({ result: 'settled' });
    });
  });

  it('keeps a send that may have executed past any number of refused retries: its webhook still settles the entry', async () => {
    jest.spyOn(Logger.prototype, 'error').mockImplementation(() => undefined);
    const { journal, store, decision } = await sent('bound-1');
    await journal.failed(decision, refusedByTheService('bound-1', 429));
    const stalled = await begunSend(journal, payoutIntent('bound-1'));
    await journal.failed(
      stalled,
      new ServiceAPIError('lost', {
        operation: 'payouts.mpesa',
        idempotencyKey: 'bound-1',
        code: 'SERVICE_ERROR',
        attempts: 1,
        status: 503,
        mayHaveExecuted: true,
      }),
    );
    // A person takes it for never executed, and the retries are refused, more than the entry keeps.
    await journal.resolve('bound-1', { outcome: 'refused', note: 'ops: not in the statement' });
    for (let retry = 0; retry < 25; retry += 1) {
      const again = await begunSend(journal, payoutIntent('bound-1'));
      await journal.failed(again, refusedByTheService('bound-1', 429));
    }
    const entry = await store.get('bound-1');
    expect(entry?.calls).toHaveLength(20);
    expect(entry?.calls.filter((call) => call.outcome === 'in_doubt')).toHaveLength(1);
    // The person was wrong, the service is not.
    await expectSettledSucceeded(journal, store, 'bound-1', 'LATE00000001eW');
  });

  it("keeps a send answered 409 after a retried attempt past any number of refused retries: the key still is not 'never executed'", async () => {
    const { journal, store, decision } = await sent('bound-409');
    await journal.failed(decision, refusedByTheService('bound-409', 400));
    const held = await begunSend(journal, payoutIntent('bound-409'));
    await journal.failed(held, keyHeldAfterARetry('bound-409'));
    await journal.resolve('bound-409', { outcome: 'refused', note: 'ops: not in the dashboard' });
    for (let retry = 0; retry < 25; retry += 1) {
      const again = await begunSend(journal, payoutIntent('bound-409'));
      await journal.failed(again, refusedByTheService('bound-409', 400));
    }
    const entry = await store.get('bound-409');
    expect(entry?.calls).toHaveLength(20);
    expect(entry?.calls.filter((call) => call.httpStatus === 409)).toHaveLength(1);
    // Its genuine webhook still settles the entry: the person was wrong.
    await expectSettledSucceeded(journal, store, 'bound-409', 'HELD00000409eW');
  });

  it('records an answer it cannot mask without its free text, and does not reject', async () => {
    const { journal, store, decision } = await sent('salary-mask');
    const unreadable = {
      get phoneNumber(): string {
        throw new Error('a request field that cannot be read');
      },
    };

    await journal.accepted(
      decision,
      {
        success: true,
        status: 'SUCCESS',
        message: 'Sent to 0712345678',
        transactionReference: 'MASK1eW',
      },
      unreadable,
    );

    const entry = await store.get('salary-mask');
    expect(entry).toMatchObject({ state: 'accepted', reference: 'MASK1eW' });
    expect(entry?.answer).toEqual({
      success: true,
      status: 'SUCCESS',
      transaction_reference: 'MASK1eW',
    });
  });

  it('keeps up to 5 deferred references while the call is being sent, each once, and then none', async () => {
    const { journal, store, decision } = await sent('salary-9');
    for (const reference of ['R1', 'R1', 'R2', 'R3', 'R4', 'R5', 'R6']) {
      await journal.deferEvent('salary-9', reference, 'payout');
    }
    const kept = (await store.get('salary-9'))?.deferredEvents?.map((event) => event.reference);
    expect(kept).toEqual(['R1', 'R2', 'R3', 'R4', 'R5']);

    // The answer still lands over the entry's new version, and keeps what was deferred.
    await acceptedAs(journal, decision, 'REAL1eW');
    expect(await store.get('salary-9')).toMatchObject({ state: 'accepted', reference: 'REAL1eW' });
    expect((await store.get('salary-9'))?.deferredEvents).toHaveLength(5);

    // Once the entry has its reference, or its deadline passed, nothing more is deferred.
    const accepted = (await store.get('salary-9'))!;
    await store.replace({ ...accepted, version: accepted.version + 1, deferredEvents: [] });
    await journal.deferEvent('salary-9', 'R7', 'payout');
    expect((await store.get('salary-9'))?.deferredEvents).toEqual([]);
    const { journal: overdue, store: overdueStore } = await sentPastItsDeadline('salary-10');
    await overdue.deferEvent('salary-10', 'R8', 'payout');
    expect((await overdueStore.get('salary-10'))?.deferredEvents).toBeUndefined();
  });

  it("refuses a person's 'refused' while webhooks deferred during the send are not looked up", async () => {
    const { journal, store, decision } = await sent('deferred-1');
    await journal.deferEvent('deferred-1', 'DEFERRED0001eW', 'payout');
    await journal.failed(decision, new Error('socket hang up'));

    await expect(
      journal.resolve('deferred-1', { outcome: 'refused', note: 'ops: not in the dashboard' }),
    ).rejects.toMatchObject({
      code: 'REFUSED',
      message: expect.stringContaining('DEFERRED0001eW') as string,
    });
    expect(await store.get('deferred-1')).toMatchObject({ state: 'in_doubt' });
    // reconcile() drops a reference the service does not know; then the person may resolve.
    await journal.dropDeferredEvents('deferred-1', [{ reference: 'DEFERRED0001eW' }]);
    await journal.resolve('deferred-1', { outcome: 'refused', note: 'ops: not in the dashboard' });
    expect(await store.get('deferred-1')).toMatchObject({ state: 'refused' });
  });

  it('settles no entry, with its reference or without, by a record that leaves out its amount or currency', async () => {
    const { journal, store, decision } = await sent('figures-1');
    await acceptedAs(journal, decision, 'FIGURES00001eW');
    const { amount: _amount, ...noAmount } = recordOf('figures-1', 'FIGURES00001eW');
    const { currency: _currency, ...noCurrency } = recordOf('figures-1', 'FIGURES00001eW');

    expect(await journal.settle(noAmount)).toMatchObject({
      result: 'contradicted',
      why: expect.stringContaining('no amount') as string,
    });
    expect(await journal.settle(noCurrency)).toMatchObject({
      result: 'contradicted',
      why: expect.stringContaining('no currency') as string,
    });
    expect(await store.get('figures-1')).toMatchObject({ state: 'accepted' });
    await expectSettledSucceeded(journal, store, 'figures-1', 'FIGURES00001eW');
  });

  it('sends no resend while events deferred during the earlier send are not looked up; then starts without them', async () => {
    const { journal, store, decision } = await sent('salary-11');
    await journal.deferEvent('salary-11', 'OF-THE-FIRST-SEND', 'payout');
    await journal.failed(decision, new Error('socket hang up'));
    expect(await store.get('salary-11')).toMatchObject({ state: 'in_doubt' });

    for (const resend of [false, true]) {
      await expect(journal.begin(payoutIntent('salary-11', { resend }))).rejects.toMatchObject({
        code: 'IN_DOUBT',
        message: expect.stringContaining('OF-THE-FIRST-SEND') as string,
      });
    }
    // reconcile() found the service has no such transaction, and dropped it.
    await journal.dropDeferredEvents('salary-11', [{ reference: 'OF-THE-FIRST-SEND' }]);
    const again = await journal.begin(payoutIntent('salary-11', { resend: true }));

    expect(again.send).toBe(true);
    const entry = await store.get('salary-11');
    expect(entry).toMatchObject({ state: 'started' });
    expect(entry?.deferredEvents).toBeUndefined();
  });

  it("leaves the latest send's state to that send: an undo that outlived a retry under the key does not mark it unsent", async () => {
    jest.spyOn(Logger.prototype, 'warn').mockImplementation(() => undefined);
    /** A store whose first create lands but answers an error (Redis hung), and whose first replace hangs until released. */
    class HungStore extends InMemoryPaymentsJournal {
      creates = 0;
      replaces = 0;
      releaseFirstReplace!: () => void;
      override async create(entry: PaymentsJournalEntry) {
        const created = await super.create(entry);
        this.creates += 1;
        if (this.creates === 1) throw new Error('Command timed out');
        return created;
      }
      override replace(next: PaymentsJournalEntry): Promise<boolean> {
        this.replaces += 1;
        if (this.replaces > 1) return super.replace(next);
        // The undo's write: it runs only when Redis comes back, after the retry's writes.
        return new Promise((resolve) => {
          this.releaseFirstReplace = () => resolve(super.replace(next));
        });
      }
    }
    const store = new HungStore();
    const journal = testJournal(store);
    await expect(journal.begin(payoutIntent('salary-12'))).rejects.toMatchObject({
      code: 'JOURNAL_UNAVAILABLE',
    });
    // The caller retries on the same instance: its unsent call is known, and the retry is sent.
    const retry = await journal.begin(payoutIntent('salary-12'));
    expect(retry.send).toBe(true);
    if (!retry.send) return;
    await journal.failed(retry, new Error('socket hang up'));
    expect(await store.get('salary-12')).toMatchObject({ state: 'in_doubt' });

    store.releaseFirstReplace();
    await journal.close();

    const entry = await store.get('salary-12');
    expect(entry).toMatchObject({
      state: 'in_doubt',
      reason: 'an unexpected error: may have executed',
    });
    expect(entry?.calls.map((call) => call.outcome)).toEqual(['refused', 'in_doubt']);
  });

  it('sends again a key whose latest send another process knew unsent, and holds it in doubt to one that did not', async () => {
    jest.spyOn(Logger.prototype, 'warn').mockImplementation(() => undefined);
    /** A store whose create lands but answers an error, and whose undos of it fail (Redis hung). */
    class DownStore extends InMemoryPaymentsJournal {
      down = true;
      override async create(entry: PaymentsJournalEntry) {
        const created = await super.create(entry);
        if (this.down) throw new Error('Command timed out');
        return created;
      }
      override async replace(next: PaymentsJournalEntry) {
        if (this.down) throw new Error('Command timed out');
        return super.replace(next);
      }
    }
    const store = new DownStore();
    const told: string[] = [];
    const first = testJournal(store);
    await expect(
      first.begin({
        ...payoutIntent('salary-14'),
        unsentSends: { callIds: [], notSent: (callId) => told.push(callId) },
      }),
    ).rejects.toMatchObject({ code: 'JOURNAL_UNAVAILABLE', mayHaveExecuted: false });
    await first.close();
    const [callId] = told;
    expect(told).toEqual([expect.any(String)]);
    expect((await store.get('salary-14'))?.calls).toEqual([
      { callId, startedAt: expect.any(String) },
    ]);
    store.down = false;

    // Another process, not told, holds it in progress: the call may be out.
    await expect(testJournal(store).begin(payoutIntent('salary-14'))).rejects.toMatchObject({
      code: 'IN_PROGRESS',
    });
    // Another process told by the caller sends it, and the entry says the first never went out.
    const again = await testJournal(store).begin({
      ...payoutIntent('salary-14'),
      unsentSends: { callIds: ['another-call', callId], notSent: () => undefined },
    });
    expect(again.send).toBe(true);
    const entry = await store.get('salary-14');
    expect(entry).toMatchObject({ state: 'started' });
    expect(entry?.calls.map((call) => [call.callId === callId, call.outcome])).toEqual([
      [true, 'refused'],
      [false, undefined],
    ]);
  });

  it("marks unsent a refused key's retry whose replace landed but failed, and sends the key again", async () => {
    jest.spyOn(Logger.prototype, 'warn').mockImplementation(() => undefined);
    /** A store whose next replace lands but answers an error (Redis hung past the timeout). */
    class LateReplaceStore extends InMemoryPaymentsJournal {
      failNextReplace = false;
      override async replace(next: PaymentsJournalEntry) {
        const replaced = await super.replace(next);
        if (!this.failNextReplace) return replaced;
        this.failNextReplace = false;
        throw new Error('Command timed out');
      }
    }
    const store = new LateReplaceStore();
    const journal = testJournal(store);
    const first = await begunSend(journal, payoutIntent('salary-refused'));
    await journal.failed(first, refusedByTheService('salary-refused', 400));
    expect(await store.get('salary-refused')).toMatchObject({ state: 'refused' });

    store.failNextReplace = true;
    await expect(journal.begin(payoutIntent('salary-refused'))).rejects.toMatchObject({
      code: 'JOURNAL_UNAVAILABLE',
      mayHaveExecuted: false,
    });
    await journal.close();

    // The undo marked the landed send refused: other instances see no call in flight or in doubt.
    const entry = await store.get('salary-refused');
    expect(entry).toMatchObject({ state: 'refused' });
    expect(entry?.calls.map((call) => call.outcome)).toEqual(['refused', 'refused']);
    const again = await testJournal(store).begin(payoutIntent('salary-refused'));
    expect(again.send).toBe(true);
  });

  it('sends a call whose create landed but whose answer was lost and the command sent again', async () => {
    const store = new ResendingStore();
    const journal = testJournal(store);
    store.lose = 'create';
    const decision = await journal.begin(payoutIntent('salary-13'));
    expect(decision.send).toBe(true);
    // Another call under the key is still stopped: the entry is being sent.
    await expect(journal.begin(payoutIntent('salary-13'))).rejects.toMatchObject({
      code: 'IN_PROGRESS',
    });
  });

  it('sends a retry whose replace landed but whose answer was lost and the command sent again', async () => {
    const store = new ResendingStore();
    const journal = testJournal(store);
    const first = await begunSend(journal, payoutIntent('salary-18'));
    // A 429: never executed, sent again under the key (a payout run's item does so).
    await journal.failed(first, refusedByTheService('salary-18', 429));
    expect(await store.get('salary-18')).toMatchObject({ state: 'refused' });

    store.lose = 'replace';
    const retry = await journal.begin(payoutIntent('salary-18'));
    expect(retry.send).toBe(true);
    expect((await store.get('salary-18'))?.calls.map((call) => call.outcome)).toEqual([
      'refused',
      undefined,
    ]);
  });

  it("settles on the record of the call's own reference whatever the clocks say; by key alone, an older record is another's", async () => {
    const { journal, store, decision } = await sent('salary-14');
    await acceptedAs(journal, decision, 'OWN000000014eW');
    // The service's clock, or this instance's, is eleven minutes off.
    const created = new Date(Date.parse('2026-11-27T08:00:00Z') - 11 * 60_000).toISOString();
    const record = {
      outcome: 'succeeded' as const,
      amount: 500,
      currency: 'KES',
      kind: 'payout' as const,
      createdAt: created,
      by: 'webhook' as const,
    };
    expect(
      await journal.settle({ ...record, idempotencyKey: 'salary-14', reference: 'OWN000000014eW' }),
    ).toMatchObject({ result: 'settled' });
    expect(await store.get('salary-14')).toMatchObject({ state: 'succeeded' });

    const lost = await sentPastItsDeadline('salary-15');
    expect(
      await lost.journal.settle({
        ...record,
        idempotencyKey: 'salary-15',
        reference: 'ANY000000015eW',
      }),
    ).toMatchObject({ result: 'contradicted', why: expect.stringContaining('before the call') });
  });

  it('raises no second execution from a record a lost call to the same payee could own', async () => {
    const clock = { nowMs: Date.parse('2026-11-27T08:00:00Z') };
    const journal = testJournal(new InMemoryPaymentsJournal(), () => clock.nowMs);
    const withPayee = (key: string) => ({ ...payoutIntent(key), phoneNumber: '0712345678' });
    const answered = await journal.begin(withPayee('salary-16'));
    const lost = await journal.begin(withPayee('salary-17'));
    if (!answered.send || !lost.send) throw new Error('not sent');
    await acceptedAs(journal, answered, 'ANS000000016eW');
    const record = {
      idempotencyKey: 'salary-16',
      reference: 'LOST00000017eW',
      outcome: 'succeeded' as const,
      amount: 500,
      currency: 'KES',
      kind: 'payout' as const,
      phoneNumber: '254712345678',
      by: 'webhook' as const,
    };
    // The lost call is being sent: it may get this very reference from its answer.
    expect(await journal.settle(record)).toMatchObject({ result: 'contradicted' });

    await journal.failed(lost, new Error('socket hang up'));
    expect(await journal.settle(record)).toMatchObject({ result: 'contradicted' });

    await journal.resolve('salary-17', { outcome: 'refused', note: 'not in the statement' });
    expect(await journal.settle(record)).toMatchObject({ result: 'second-execution' });
  });

  it("compares amounts to half the currency's minor unit: 0.004 TND is another sum", async () => {
    const journal = testJournal(new InMemoryPaymentsJournal());
    const tnd = { ...payoutIntent('tnd-1'), amount: 1.234, currency: 'TND' };
    for (const key of ['tnd-1', 'tnd-2']) {
      const decision = await journal.begin({ ...tnd, idempotencyKey: key });
      if (!decision.send) throw new Error('not sent');
      await journal.accepted(
        decision,
        { success: true, transactionReference: `TND00000${key}` },
        PAYOUT_REQUEST,
      );
    }
    const record = (key: string, amount: number) => ({
      idempotencyKey: key,
      reference: `TND00000${key}`,
      outcome: 'succeeded' as const,
      amount,
      currency: 'TND',
      kind: 'payout' as const,
      by: 'webhook' as const,
    });
    expect(await journal.settle(record('tnd-1', 1.238))).toMatchObject({
      result: 'contradicted',
      why: expect.stringContaining('amount 1.234') as string,
    });
    expect(await journal.settle(record('tnd-2', 1.2341))).toMatchObject({ result: 'settled' });
  });

  it('compares an entry without a currency to 2 decimals, whatever currency the record names', async () => {
    const journal = testJournal(new InMemoryPaymentsJournal());
    const { currency: _none, ...kes } = payoutIntent('no-currency');
    const decision = await journal.begin(kes);
    if (!decision.send) throw new Error('not sent');
    await acceptedAs(journal, decision, 'NOCUR0000001eW');
    // XOF has no decimals: its half unit (0.5) must not stand for the entry's.
    expect(
      await journal.settle({
        idempotencyKey: 'no-currency',
        reference: 'NOCUR0000001eW',
        outcome: 'succeeded',
        amount: 500.49,
        currency: 'XOF',
        kind: 'payout',
        by: 'webhook',
      }),
    ).toMatchObject({ result: 'contradicted', why: expect.stringContaining('500.49') as string });
  });

  it('keeps a settlement the answer agrees with', async () => {
    const { journal, store, decision } = await sentPastItsDeadline('salary-2');
    await journal.settle({
      idempotencyKey: 'salary-2',
      reference: 'REAL00000002eW',
      outcome: 'succeeded',
      amount: 500,
      currency: 'KES',
      kind: 'payout',
      by: 'webhook',
    });
    await acceptedAs(journal, decision, 'REAL00000002eW');

    expect(await store.get('salary-2')).toMatchObject({
      state: 'succeeded',
      reference: 'REAL00000002eW',
      settledBy: 'webhook',
      calls: [{ outcome: 'accepted' }],
    });
  });
});

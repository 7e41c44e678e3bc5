import { randomUUID } from 'node:crypto';
import { Logger } from '@nestjs/common';
import type { Job } from 'bullmq';
import { InMemoryPaymentsJournal } from '../../journal/in-memory-payments-journal';
import { PaymentsJournal } from '../../journal/payments-journal';
import { payoutIntent } from '../../../spec-support/journal-entries';
import { engineContext, itemRecord, runRecord } from '../../../spec-support/payout-run-records';
import { InMemoryPayoutRunStore } from '../in-memory-payout-run.store';
import type { PayoutRunsPayments } from '../payout-runs-payments';
import type { PayoutRunStore } from '../payout-run.store';
import { BullMQPayoutRunEngine } from './bullmq-payout-run-engine';

/*
 * Drives BullMQPayoutRunEngine's real job handler (`process(runId, job)`) with jobs as BullMQ
 * hands them over: each take of a job counts up `attemptsStarted`, each take-back after a stall
 * `stalledCounter` (docs/payout-runs.md, "Engines").
 */

const KEY = 'run-r-a';
/** The items' payout (10 KES), whose sends stay within their deadline in these tests. */
const CLAIM_SPEC_PAYOUT = { amount: 10, budgetMs: 60_000 };
const JOB_ID = 'i-job-of-a';
const TIMESTAMP = 1_780_000_000_000;

function journalOf(store: InMemoryPaymentsJournal): PaymentsJournal {
  return new PaymentsJournal(store, {
    account: 'default',
    fingerprintKey: Buffer.alloc(32, 1),
    payeeKey: Buffer.alloc(32, 2),
  });
}

/**
 * One app instance's payments: its journal (shared or its own), and a "service" that records each
 * request that reaches the wire and answers with `answer()`.
 */
function paymentsOf(
  journal: PaymentsJournal,
  wire: string[],
  who: string,
  answer: () => Promise<{ transactionReference: string }>,
): PayoutRunsPayments {
  return {
    payouts: {
      // Every entry here is of its item's request.
      journalsAnotherRequest: () => false,
      mpesa: async (request: object, options: { idempotencyKey: string }) => {
        const decision = await journal.begin(
          payoutIntent(options.idempotencyKey, CLAIM_SPEC_PAYOUT),
        );
        if (!decision.send) {
          return { transactionReference: decision.entry.reference ?? '', replayed: true };
        }
        wire.push(who);
        try {
          const record = await answer();
          await journal.accepted(decision, { success: true, ...record }, request);
          return record;
        } catch (error) {
          await journal.failed(decision, error);
          throw error;
        }
      },
      holdKey: (
        _op: string,
        _request: object,
        key: string,
        state: 'in_doubt' | 'refused',
        reason: string,
      ) => journal.hold(payoutIntent(key, CLAIM_SPEC_PAYOUT), state, reason),
    },
    reconciler: {
      get: async (key: string) => {
        const entry = await journal.entryUnder(key);
        return entry && journal.view(entry);
      },
    },
  } as unknown as PayoutRunsPayments;
}

/** `this` of an engine instance for its job handler. */
function worker(store: PayoutRunStore, payments: PayoutRunsPayments) {
  const context = engineContext(store, payments);
  const self = {
    runs: new Map([['r', { runId: 'r', rate: 1, ceiling: 1 }]]),
    context,
    closed: false,
    afterItem: () => Promise.resolve(),
    setRate: () => Promise.resolve(),
  };
  const handler = (
    BullMQPayoutRunEngine.prototype as unknown as {
      process: (runId: string, job: Job) => Promise<void>;
    }
  ).process;
  return (job: Job) => handler.call(self, 'r', job);
}

/** The job of item `a` as its `attemptsStarted`-th take gets it, after `stalledCounter` stalls. */
function job(attemptsStarted: number, stalledCounter: number): Job {
  return {
    id: JOB_ID,
    timestamp: TIMESTAMP,
    attemptsStarted,
    stalledCounter,
    attemptsMade: attemptsStarted - 1 - stalledCounter,
    data: { itemId: 'a' },
  } as unknown as Job;
}

/** The claim the `attemptsStarted`-th take of the job wrote, after `stalledCounter` stalls. */
function claimOf(attemptsStarted: number, stalledCounter: number): string {
  return `bullmq:${JOB_ID}:${TIMESTAMP}:${attemptsStarted}:${stalledCounter}:${randomUUID()}`;
}

/** A run store holding item `a` left `sending` under `sendClaim`. */
async function leftSending(sendClaim: string): Promise<InMemoryPayoutRunStore> {
  const runStore = new InMemoryPayoutRunStore();
  await runStore.createRun(runRecord('r'), [
    itemRecord('r', 'a', 'sending', { idempotencyKey: KEY, sendClaim }),
  ]);
  return runStore;
}

const serviceAccepts = () => Promise.resolve({ transactionReference: 'REF0000000001eW' });

/** What reached the wire when worker B, with a journal of its own, ran `take` over `runStore`. */
async function sentBy(runStore: InMemoryPayoutRunStore, take: Job): Promise<string[]> {
  const wire: string[] = [];
  const payments = paymentsOf(journalOf(new InMemoryPaymentsJournal()), wire, 'B', serviceAccepts);
  await worker(runStore, payments)(take);
  return wire;
}

describe('BullMQPayoutRunEngine: who may send an item left sending', () => {
  beforeEach(() => {
    jest.spyOn(Logger.prototype, 'error').mockImplementation(() => undefined);
    jest.spyOn(Logger.prototype, 'warn').mockImplementation(() => undefined);
  });
  afterEach(() => jest.restoreAllMocks());

  it('lets one of two holders of a job (the first stalled, not dead) send its item, even with journals apart', async () => {
    const runStore = new InMemoryPayoutRunStore();
    await runStore.createRun(runRecord('r'), [
      itemRecord('r', 'a', 'queued', { idempotencyKey: KEY }),
    ]);
    const wire: string[] = [];
    let answerA = () => {};
    const onTheWire = new Promise<void>((resolve) => (answerA = resolve));
    const slowAnswer = () => onTheWire.then(serviceAccepts);
    // Each instance with a journal of its own: the run store alone must stop the second send.
    const journalOfA = journalOf(new InMemoryPaymentsJournal());
    const workerA = worker(runStore, paymentsOf(journalOfA, wire, 'A', slowAnswer));
    let processOfA: Promise<void> | undefined;
    // B took the job back after A's lock lapsed and read the item while it was still queued;
    // A's move to `sending` lands just before B's.
    const storeOfB = Object.create(runStore) as InMemoryPayoutRunStore;
    storeOfB.updateItem = async (...args: Parameters<InMemoryPayoutRunStore['updateItem']>) => {
      if (args[2].state === 'sending' && !processOfA) {
        processOfA = workerA(job(1, 0));
        while (!wire.includes('A')) await new Promise((resolve) => setImmediate(resolve));
      }
      return runStore.updateItem(...args);
    };
    const journalOfB = journalOf(new InMemoryPaymentsJournal());
    const workerB = worker(storeOfB, paymentsOf(journalOfB, wire, 'B', serviceAccepts));

    await workerB(job(2, 1));
    answerA();
    await processOfA;

    expect(wire).toEqual(['A']);
    expect(await runStore.getItem('r', 'a')).toMatchObject({ state: 'accepted' });
  });

  it('never sends an item whose sender lost the job to a stall, though a later take of the job failed', async () => {
    // A (the first take) wrote `sending` and stalled before its journal create; B (the second,
    // after the stall) failed in its takeover; C is the third take.
    const runStore = await leftSending(claimOf(1, 0));
    const shared = journalOf(new InMemoryPaymentsJournal());
    const wire: string[] = [];
    await worker(runStore, paymentsOf(shared, wire, 'C', serviceAccepts))(job(3, 1));
    expect(wire).toEqual([]);
    expect(await runStore.getItem('r', 'a')).toMatchObject({ state: 'in_doubt' });

    // A wakes up past its `sending` write: the journal holds the key, and A sends nothing.
    const payoutsOfA = paymentsOf(shared, wire, 'A', serviceAccepts).payouts as unknown as {
      mpesa: (request: object, options: { idempotencyKey: string }) => Promise<unknown>;
    };
    await expect(
      payoutsOfA.mpesa({ phoneNumber: '0712345678', amount: 10 }, { idempotencyKey: KEY }),
    ).rejects.toMatchObject({ code: 'IN_DOUBT' });
    expect(wire).toEqual([]);
  });

  it('sends, in the next take, an item its own earlier take left sending with no stall since', async () => {
    // The first take's `sending` write landed but failed, and the take ended (the job failed).
    const runStore = await leftSending(claimOf(1, 0));
    expect(await sentBy(runStore, job(2, 0))).toEqual(['B']);
    expect(await runStore.getItem('r', 'a')).toMatchObject({ state: 'accepted', sends: 2 });
  });

  it('takes no claim of another job, or of the old form, for an ended hold', async () => {
    for (const sendClaim of [
      `bullmq:other-job:${TIMESTAMP}:1:0:${randomUUID()}`,
      `bullmq:${JOB_ID}:${TIMESTAMP + 1}:1:0:${randomUUID()}`,
      `bullmq:${JOB_ID}:${TIMESTAMP}:0`,
      randomUUID(),
    ]) {
      const runStore = await leftSending(sendClaim);
      expect({ sendClaim, wire: await sentBy(runStore, job(2, 0)) }).toEqual({
        sendClaim,
        wire: [],
      });
      expect(await runStore.getItem('r', 'a')).toMatchObject({ state: 'in_doubt' });
    }
  });
});

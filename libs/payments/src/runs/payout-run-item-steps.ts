import { randomUUID } from 'node:crypto';
import { Logger } from '@nestjs/common';
import { ON_WIRE, REFUSALS_STAND, UNSENT_SENDS } from '../operation-runner';
import type { InternalCallOptions } from '../operation-runner';
import { PaymentsValidationError, failureNamed } from '../errors';
import { PAYMENTS_LOGGER_CONTEXT } from '../payments.constants';
import { ofAnotherAccount } from './payout-run-engine';
import type { PayoutRunEngineContext } from './payout-run-engine';
import {
  classifySendFailure,
  itemStateOfEntry,
  KEY_OF_ANOTHER_REQUEST,
  reachedTheWire,
} from './payout-run-item-outcome';
import { PAYOUT_RUN_KINDS } from './payout-run-kinds';
import type { PayoutRun, PayoutRunItemState } from './payout-run.interfaces';
import { OPEN_ITEM_STATES } from './payout-run.interfaces';
import { MAX_UNSENT_CALL_IDS } from './payout-run.store';
import type { PayoutRunItemChange, PayoutRunItemRecord } from './payout-run.store';
import type { PaymentsJournalEntry } from '../journal/payments-journal.interfaces';
import { toPayoutRun, toPayoutRunItem } from './payout-run-view';

/*
 * The steps of one item and one run that every engine takes the same way (docs/payout-runs.md,
 * "Item states" and "Engines"); an engine adds only how items are scheduled and paced.
 */

const logger = new Logger(PAYMENTS_LOGGER_CONTEXT);

/** States whose outcome the journal still has to tell: the run reads their entries. */
export const UNSETTLED_ITEM_STATES: readonly PayoutRunItemState[] = ['accepted', 'in_doubt'];

/**
 * What became of one send, and whether a request of it reached the wire (not answered from the
 * journal, stopped by it, or never sent): the embedded pacer learns answer times from those.
 */
export type PayoutRunSendResult = { readonly requested: boolean } &
  /** The item was not `queued` any more (another worker took it, or it was refused). */
  (
    | { readonly kind: 'skipped' }
    /**
     * Still `queued`, not sent: the run was not `running` when the item was to go (paused or
     * cancelled meanwhile). The engine holds it back, or refuses it when the run was cancelled.
     */
    | { readonly kind: 'held' }
    /**
     * Still `queued`, not sent: the run was created through another account (an app sharing the
     * store created it anew under this id). The engine lets the run go.
     */
    | { readonly kind: 'foreign' }
    | { readonly kind: 'accepted'; readonly item: PayoutRunItemRecord }
    /** `failed`, `refused` or `in_doubt`: the send ended and was not accepted. */
    | { readonly kind: 'settled'; readonly state: PayoutRunItemState }
    /** Not executed (a 429, or the client closing): the item is `queued` again, same key. */
    | { readonly kind: 'requeued'; readonly rateLimited: boolean; readonly retryAfterMs?: number }
  );

/** Pauses a run that is `running`, logging `why` at error level when this call paused it. */
async function pauseRun(
  context: PayoutRunEngineContext,
  runId: string,
  why: string,
): Promise<void> {
  const paused = await context.store.updateRun(runId, { state: 'paused' }, { states: ['running'] });
  if (paused) logger.error(`Payout run ${runId} paused: ${why}`);
}

/** Pauses a run whose sends keep ending in doubt (`PayoutRunOutageGuard`). */
function pauseForOutage(context: PayoutRunEngineContext, runId: string, latest: string) {
  return pauseRun(
    context,
    runId,
    `${context.outageGuard?.limit ?? 0} sends in a row reached the service and ended in doubt ` +
      `(the latest: ${latest}); it may be down. Settle the in-doubt items (their webhooks, ` +
      'reconcile() or a person), then resume() the run',
  );
}

/** Whether the stored run `runId` was created through another payment account. */
async function isOfAnotherAccount(
  context: PayoutRunEngineContext,
  runId: string,
): Promise<boolean> {
  const run = await context.store.getRun(runId);
  return run !== undefined && ofAnotherAccount(run, context.payments);
}

/**
 * Sends one `queued` item: `sending` is written before the call (which the journal writes ahead
 * again under the item's key), then the outcome. Of several workers holding the item, the one
 * whose `queued` → `sending` change wins sends it; the others get `skipped`.
 * `onWire` is called when its request goes to the wire, after those writes. `sendClaim` marks the
 * `sending` write as this send's (default a random one): an engine that can tell later whether
 * the send that wrote it has ended names it so ({@link takeOverPayoutRunItem}'s `senderEnded`).
 * @throws when the store fails: the item is left as it was written, the journal holds its send.
 */
export async function sendPayoutRunItem(
  context: PayoutRunEngineContext,
  runId: string,
  itemId: string,
  { onWire, sendClaim = randomUUID() }: { onWire?: () => void; sendClaim?: string } = {},
): Promise<PayoutRunSendResult> {
  const { store, payments } = context;
  const queued = await store.getItem(runId, itemId);
  if (queued?.state !== 'queued') return { kind: 'skipped', requested: false };
  // Read at each send, however long the engine has held the run: a run deleted and created anew
  // by another account's app under its id is that app's to pay.
  if (await isOfAnotherAccount(context, runId)) return { kind: 'foreign', requested: false };
  // Written before the call: a crash from here on leaves `sending`, which the journal resolves.
  // Only while the run is `running`, in the same atomic step: once pause() or cancel() stored
  // its state, no item of the run starts (docs/payout-runs.md, "Run states").
  let item = await store.updateItem(
    runId,
    itemId,
    { state: 'sending', sends: queued.sends + 1, sendClaim },
    ['queued'],
    ['running'],
  );
  if (!item) {
    const now = await store.getItem(runId, itemId);
    // The write landed, its answer was lost and the command ran again (a reconnect): the item is
    // this send's, and nobody else sends it.
    if (now?.state === 'sending' && now.sendClaim === sendClaim) item = now;
    else if (now?.state === 'queued') return { kind: 'held', requested: false };
    else return { kind: 'skipped', requested: false };
  }
  // The run may have been deleted and created anew by the other app between the read above and
  // this move: the item moved is then that app's, and goes back unsent.
  if (item.idempotencyKey !== queued.idempotencyKey || (await isOfAnotherAccount(context, runId))) {
    await store.updateItem(runId, itemId, { state: 'queued' }, ['sending']);
    return { kind: 'foreign', requested: false };
  }
  const { request } = item;
  if (request === undefined) throw new Error(`item ${itemId} has no request to send`);
  let response;
  // Sends of this call that never went out while the journal failed: kept on the item, beside
  // the earlier ones, for the next sender, which may be another instance (docs/payout-runs.md,
  // "Run states").
  const notSent: string[] = [];
  try {
    // A failure that may have executed is not retried: the item goes in doubt, since the service
    // may not honour Idempotency-Key (docs/payout-runs.md, "Exactly once per item").
    const options: InternalCallOptions = {
      idempotencyKey: item.idempotencyKey,
      retryAmbiguous: false,
      [UNSENT_SENDS]: {
        callIds: item.unsentCallIds ?? [],
        notSent: (callId: string) => notSent.push(callId),
      },
      [REFUSALS_STAND]: true,
      ...(onWire === undefined ? {} : { [ON_WIRE]: onWire }),
    };
    response = await PAYOUT_RUN_KINDS[item.operation].send(payments.payouts, request, options);
  } catch (error) {
    const failure = classifySendFailure(error, request);
    if (failure.kind === 'requeue') {
      const change: PayoutRunItemChange =
        notSent.length === 0
          ? { state: 'queued' }
          : {
              state: 'queued',
              unsentCallIds: [...(item.unsentCallIds ?? []), ...notSent].slice(
                -MAX_UNSENT_CALL_IDS,
              ),
            };
      await store.updateItem(runId, itemId, change, ['sending']);
      if (failure.pauseRun !== undefined) {
        await pauseRun(
          context,
          runId,
          `${failure.pauseRun}; item ${itemId} and the rest were not sent and stay queued. ` +
            'resume() the run once it answers',
        );
      }
      return {
        kind: 'requeued',
        requested: failure.rateLimited,
        rateLimited: failure.rateLimited,
        ...(failure.retryAfterMs === undefined ? {} : { retryAfterMs: failure.retryAfterMs }),
      };
    }
    const settled = await store.updateItem(
      runId,
      itemId,
      { state: failure.state, reason: failure.reason },
      ['sending'],
    );
    if (settled) context.emit({ event: 'item.settled', runId, item: toPayoutRunItem(settled) });
    const requested = reachedTheWire(error);
    if (requested && failure.state !== 'in_doubt') context.outageGuard?.answered(runId);
    if (requested && failure.state === 'in_doubt' && context.outageGuard?.inDoubt(runId)) {
      await pauseForOutage(context, runId, failure.reason);
    }
    return { kind: 'settled', state: failure.state, requested };
  }
  if (response.replayed !== true) context.outageGuard?.answered(runId);
  const accepted = await store.updateItem(
    runId,
    itemId,
    { state: 'accepted', reference: response.transactionReference },
    ['sending'],
  );
  return { kind: 'accepted', item: accepted ?? item, requested: response.replayed !== true };
}

/** Refuses a `queued` item of a cancelled run; never sent. */
export async function refuseCancelledPayoutRunItem(
  context: PayoutRunEngineContext,
  runId: string,
  itemId: string,
): Promise<void> {
  await closeKeyOfCancelledItem(context, runId, itemId);
  const refused = await context.store.updateItem(
    runId,
    itemId,
    { state: 'refused', reason: 'not sent: the run was cancelled' },
    ['queued'],
  );
  if (refused) context.emit({ event: 'item.settled', runId, item: toPayoutRunItem(refused) });
}

/**
 * Holds the key of a queued item of a cancelled run `refused` in the journal, with no send: the
 * run store may forget the run (a restart of the embedded store, its retention, a deleted run),
 * and a run created again with the same id and items would send it. The journal outlives them,
 * and answers such a send `ALREADY_REFUSED` (docs/payout-runs.md, "Creating a run again"). A key that
 * holds an entry already keeps it, closed when it is `refused` and never executed (a 429, a 401).
 * When the journal or the store cannot be read or written the cancel still stands in the run,
 * logged.
 */
async function closeKeyOfCancelledItem(
  context: PayoutRunEngineContext,
  runId: string,
  itemId: string,
): Promise<void> {
  try {
    const item = await context.store.getItem(runId, itemId);
    if (item?.state !== 'queued' || item.request === undefined) return;
    await context.payments.payouts.holdKey(
      PAYOUT_RUN_KINDS[item.operation].operation,
      item.request,
      item.idempotencyKey,
      'refused',
      `its payout run ${runId} was cancelled before it was sent`,
    );
  } catch (error) {
    // A stored request the rules refuse now (the defaults changed) could not be sent either.
    if (error instanceof PaymentsValidationError) return;
    logger.error(
      `Payout run ${runId}: the key of cancelled item ${itemId} could not be held in the journal ` +
        `(${failureNamed(error)}): a run created again with the same ` +
        'id and items after this one is forgotten would send it',
    );
  }
}

/**
 * Whether `entry` is the journal's entry of `item`: its reference is the one the item's send was
 * answered with, or the journal does not find it of another request (`journalsAnotherRequest`).
 * A run created again with an edited item (the same ids, so the same key) must not take the state
 * of the earlier request's entry: that payout went to someone else, or for another sum.
 */
function isEntryOfItem(
  context: PayoutRunEngineContext,
  item: PayoutRunItemRecord,
  entry: PaymentsJournalEntry,
): boolean {
  if (item.reference !== undefined) {
    if (entry.reference === item.reference) return true;
    if (entry.otherExecutions?.includes(item.reference) === true) return true;
  }
  return (
    item.request === undefined ||
    !context.payments.payouts.journalsAnotherRequest(
      PAYOUT_RUN_KINDS[item.operation].operation,
      item.request,
      entry,
    )
  );
}

/**
 * Reads the journal entry of an accepted or in-doubt item (its webhook or the reconciler settle
 * entries there) and moves the item along. Resolves `true` while the item is still unsettled.
 * An entry of another request under the item's key leaves the item in doubt, followed no more.
 */
export async function followPayoutRunItem(
  context: PayoutRunEngineContext,
  runId: string,
  itemId: string,
): Promise<boolean> {
  const { store, payments, statusLookups } = context;
  const item = await store.getItem(runId, itemId);
  if (!item || !UNSETTLED_ITEM_STATES.includes(item.state)) {
    statusLookups?.forget(runId, itemId);
    return false;
  }
  let entry = await payments.reconciler.get(item.idempotencyKey);
  if (entry && !isEntryOfItem(context, item, entry)) {
    statusLookups?.forget(runId, itemId);
    if (item.state === 'in_doubt' && item.reason === KEY_OF_ANOTHER_REQUEST) return false;
    const held = await store.updateItem(
      runId,
      itemId,
      { state: 'in_doubt', reason: KEY_OF_ANOTHER_REQUEST },
      [item.state],
    );
    if (held) context.emit({ event: 'item.settled', runId, item: toPayoutRunItem(held) });
    return false;
  }
  // Its webhook may be lost: looked up, long after it was sent, as reconcile() would.
  if (
    entry?.reference !== undefined &&
    (entry.state === 'accepted' || entry.state === 'in_doubt') &&
    statusLookups?.take(runId, itemId, item.updatedAt)
  ) {
    await payments.reconciler.lookUp(item.idempotencyKey);
    entry = await payments.reconciler.get(item.idempotencyKey);
  }
  const state = entry && itemStateOfEntry(entry);
  if (!entry || state === undefined || state === item.state) return true;
  const reason = reasonOfEntry(entry, state);
  const changed = await store.updateItem(
    runId,
    itemId,
    {
      state,
      ...(entry.reference === undefined ? {} : { reference: entry.reference }),
      ...(reason === undefined ? {} : { reason }),
    },
    [item.state],
  );
  if (!changed) return true;
  if (state !== 'accepted') {
    context.emit({ event: 'item.settled', runId, item: toPayoutRunItem(changed) });
  }
  if (UNSETTLED_ITEM_STATES.includes(state)) return true;
  statusLookups?.forget(runId, itemId);
  return false;
}

/**
 * Why an item is in `state` as its journal entry says: the entry's own reason, or for a `failed`
 * one what settled it ("failed: webhook, status failed"), so a failed item always says why.
 */
export function reasonOfEntry(
  entry: PaymentsJournalEntry,
  state: PayoutRunItemState,
): string | undefined {
  if (state === 'accepted' || state === 'succeeded') return undefined;
  if (entry.reason !== undefined) return entry.reason;
  if (state !== 'failed') return undefined;
  const by = entry.settledBy ?? 'the journal';
  const note = entry.settledBy === 'manual' && entry.note ? ` (${entry.note})` : '';
  const said = entry.settledReason ? `: ${entry.settledReason}` : '';
  return `failed: ${by}${entry.settledStatus ? `, status ${entry.settledStatus}` : ''}${said}${note}`;
}

/**
 * An item found `sending` by a worker that did not write it: the worker that did stopped mid-send
 * (killed, or its hold on the item lapsed: it may be alive and still about to send). It is
 * **never sent again**: the journal under its key says what happened (docs/payout-runs.md,
 * "Crashes with BullMQ"). Only an entry the service answered (`accepted`, `succeeded`,
 * `failed`), one already `in_doubt` or one a person resolved gives the item its state; any other
 * makes the item `in_doubt`. When the key has no entry, one is written `in_doubt` first: should
 * the worker only have stalled, it then finds the key held and never sends, and a person can
 * settle the entry (and so the item) with `PaymentsReconciler.resolve()`.
 *
 * With `senderEnded` (the engine's own send of it ended in a store failure, so nothing of it can
 * still go out), an item the journal holds nothing of, or `refused` other than by a person, was
 * not sent: it is `queued` again.
 */
export async function takeOverPayoutRunItem(
  context: PayoutRunEngineContext,
  item: PayoutRunItemRecord,
  { senderEnded = false }: { senderEnded?: boolean } = {},
): Promise<void> {
  const check =
    'check the payout in the ledger, then settle it with PaymentsReconciler.resolve(key, { outcome, note })';
  let entry = await context.payments.reconciler.get(item.idempotencyKey);
  if (
    senderEnded &&
    (!entry || (entry.state === 'refused' && itemStateOfEntry(entry) === undefined))
  ) {
    await context.store.updateItem(item.runId, item.itemId, { state: 'queued' }, ['sending']);
    return;
  }
  if (!entry && item.request !== undefined) {
    try {
      entry = await context.payments.payouts.holdKey(
        PAYOUT_RUN_KINDS[item.operation].operation,
        item.request,
        item.idempotencyKey,
        'in_doubt',
        `its worker stopped while sending it, before it journaled the send; the journal holds the key so that the worker, should it only have stalled, never sends it: ${check} (refused if it never executed)`,
      );
    } catch (error) {
      // The stored request no longer passes the rules here (the defaults changed since): the
      // worker's send would fail them too; the item goes in doubt without a held key.
      if (!(error instanceof PaymentsValidationError)) throw error;
    }
  }
  const journaled = entry && itemStateOfEntry(entry);
  let change: PayoutRunItemChange;
  if (entry && !isEntryOfItem(context, item, entry)) {
    change = { state: 'in_doubt', reason: KEY_OF_ANOTHER_REQUEST };
  } else if (entry && journaled !== undefined) {
    const reason = reasonOfEntry(entry, journaled);
    change = {
      state: journaled,
      ...(entry.reference === undefined ? {} : { reference: entry.reference }),
      ...(reason === undefined ? {} : { reason }),
    };
  } else {
    change = {
      state: 'in_doubt',
      reason: !entry
        ? `its worker stopped while sending it, before the journal entry was written; that worker may only have stalled and may still send it: ${check}`
        : entry.state === 'refused'
          ? `its worker stopped while sending it; the journal holds it refused (${entry.reason ?? 'not executed'}), yet that worker may only have stalled and may send it again: ${check}`
          : `${senderEnded ? "its send ended as the run's store failed, so its outcome was not recorded" : "its send has no recorded outcome (its worker stopped, or the run's store failed as it ended)"}: the journal holds it started, it may have executed; ${check}`,
    };
  }
  const changed = await context.store.updateItem(item.runId, item.itemId, change, ['sending']);
  if (changed && changed.state !== 'accepted') {
    context.emit({ event: 'item.settled', runId: item.runId, item: toPayoutRunItem(changed) });
  }
}

/** The run as callers read it, with the pace now; `undefined` when the store has no such run. */
export async function payoutRunSnapshot(
  context: PayoutRunEngineContext,
  runId: string,
  currentRatePerSecond: number | undefined,
): Promise<PayoutRun | undefined> {
  const record = await context.store.getRun(runId);
  if (!record) return undefined;
  const summary = await context.store.summary(runId);
  return toPayoutRun(record, summary, currentRatePerSecond ?? record.ratePerSecond);
}

/**
 * Marks the run finished once no item is queued, sending or accepted, and announces it once: of
 * several workers finishing it at once, the one whose `unfinished` update wins emits `completed`.
 * Resolves `true` when the run is finished (by this call or before).
 */
export async function finishPayoutRunIfDone(
  context: PayoutRunEngineContext,
  runId: string,
  currentRatePerSecond: number | undefined,
): Promise<boolean> {
  const { store } = context;
  const record = await store.getRun(runId);
  if (!record) return true;
  if (record.finishedAt !== undefined) return true;
  const { counts } = await store.summary(runId);
  if ([...OPEN_ITEM_STATES].some((state) => counts[state] > 0)) return false;
  const finished = await store.updateRun(
    runId,
    {
      finishedAt: new Date().toISOString(),
      ...(record.state === 'cancelled' ? {} : { state: 'completed' }),
    },
    { unfinished: true, states: [record.state] },
  );
  if (!finished) return (await store.getRun(runId))?.finishedAt !== undefined;
  const snapshot = await payoutRunSnapshot(context, runId, currentRatePerSecond);
  if (snapshot) {
    context.emit({ event: 'progress', run: snapshot });
    context.emit({ event: 'completed', run: snapshot });
  }
  return true;
}

/**
 * `progress` events of runs, at most one per run per `progressIntervalMs`, with the counts as
 * they are when it fires.
 */
export class PayoutRunProgressTimers {
  private readonly timers = new Map<string, NodeJS.Timeout>();
  private stopped = false;

  constructor(
    private readonly context: PayoutRunEngineContext,
    private readonly rateOf: (runId: string) => number | undefined,
  ) {}

  /** A `progress` event of the run soon, unless one is due already. */
  schedule(runId: string): void {
    if (this.stopped || this.timers.has(runId)) return;
    const timer = setTimeout(() => {
      this.timers.delete(runId);
      void payoutRunSnapshot(this.context, runId, this.rateOf(runId)).then(
        (snapshot) =>
          !this.stopped &&
          snapshot?.finishedAt === undefined &&
          snapshot &&
          this.context.emit({ event: 'progress', run: snapshot }),
        () => undefined,
      );
    }, this.context.progressIntervalMs);
    timer.unref();
    this.timers.set(runId, timer);
  }

  /**
   * No more `progress` at all (the engine closes): none scheduled by a send that ends after, nor
   * one whose snapshot is being read.
   */
  stop(): void {
    this.stopped = true;
    this.cancel();
  }

  /** No more `progress` of the run (it finished). */
  cancel(runId?: string): void {
    for (const [id, timer] of this.timers) {
      if (runId !== undefined && id !== runId) continue;
      clearTimeout(timer);
      this.timers.delete(id);
    }
  }
}

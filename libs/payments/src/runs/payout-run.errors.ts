import { PayoutRunExistsError } from './payout-run.store';
import { PayoutRunEngineClosedError } from './payout-run-engine';
import { PaymentsError } from '../errors';
import type {
  PayoutRunBalanceShortfall,
  PayoutRunItemProblem,
  PayoutRunState,
} from './payout-run.interfaces';

/**
 * The run was refused before any money moved: an item broke a rule (`problems`, every one of
 * every item), or the balance looked short (`shortfalls`, with both figures). Nothing was sent and
 * no run was kept.
 */
export class PayoutRunRefusedError extends PaymentsError {
  override readonly name = 'PayoutRunRefusedError';
  /** Always false: nothing was sent. */
  readonly mayHaveExecuted = false;

  constructor(
    readonly problems: readonly PayoutRunItemProblem[],
    readonly shortfalls: readonly PayoutRunBalanceShortfall[] = [],
  ) {
    const parts = [
      ...(problems.length > 0
        ? [`${new Set(problems.map((p) => p.itemId)).size} item(s) break a rule`]
        : []),
      ...shortfalls.map(
        (s) => `${s.currency} total ${s.required} exceeds the balance ${s.available}`,
      ),
    ];
    super(`The payout run was refused, nothing was sent: ${parts.join('; ')}`);
  }
}

/** No run has this id (in this store: the embedded one forgets runs on restart). */
export class PayoutRunNotFoundError extends PaymentsError {
  override readonly name = 'PayoutRunNotFoundError';

  constructor(readonly runId: string) {
    super(`No payout run ${runId}`);
  }
}

/** The run is not in a state that allows this (resume a completed run, pause a cancelled one). */
export class PayoutRunStateError extends PaymentsError {
  override readonly name = 'PayoutRunStateError';

  constructor(
    readonly runId: string,
    readonly state: PayoutRunState,
    action: string,
  ) {
    super(`The payout run ${runId} is ${state}: it cannot ${action}`);
  }
}

/**
 * A run with this `runId` exists with other items, or was created through another payment account
 * (an app of another `defaultUsername` sharing the store): creating it again would not be the
 * same payroll. Nothing was sent and the existing run is left as it is. `field` names what
 * differs. The items are compared as they would be sent, defaults applied: the same payroll on an
 * instance with another `defaultCallbackUrl`, `defaultUsername` or `walletType` differs too.
 * Creating the same payroll again under another `runId` would pay everyone again.
 */
export class PayoutRunConflictError extends PaymentsError {
  override readonly name = 'PayoutRunConflictError';
  /** Always false: this call sent nothing. */
  readonly mayHaveExecuted = false;

  constructor(
    readonly runId: string,
    readonly field: 'items' | 'account',
  ) {
    super(
      field === 'account'
        ? `A payout run ${runId} exists, created through another payment account (an app ` +
            'sharing this store): nothing was sent, and this app neither sends nor reads its ' +
            'items. Give each app its own store (keyPrefix) and engine prefix'
        : `A payout run ${runId} exists with other ${field} (as they would be sent: the client's ` +
            'defaults, such as defaultCallbackUrl, count): nothing was sent. If this is the same ' +
            'payroll, read that run (get, items) and do not create it under another runId, which would ' +
            'pay everyone again; if it is another payroll, give it its own runId',
    );
  }
}

/**
 * The run's store, journal or engine failed in `create()` after every check passed: the run may
 * have been stored, and when `mayHaveExecuted` is true it may have started paying. Call `create()`
 * again with this `runId` and the same items once the store is back: it answers the run, starts
 * it if it was not started, and pays nobody twice. **Never retry with another `runId`**: that is
 * another run, and it would pay everyone again. The store's own error is the `cause`.
 */
export class PayoutRunCreationError extends PaymentsError {
  override readonly name = 'PayoutRunCreationError';

  constructor(
    readonly runId: string,
    /** True once the run was handed to the engine: some of its payouts may have gone out. */
    readonly mayHaveExecuted: boolean,
    cause: unknown,
  ) {
    super(
      `The payout run ${runId} ${mayHaveExecuted ? 'may have started paying' : 'may have been stored, not started'}: ` +
        `${runCreationFailure(cause)}; ` +
        `call create() again with runId ${runId} and the same items, never with another runId`,
      { cause },
    );
  }
}

/** Why a creation failed, for {@link PayoutRunCreationError}'s message. */
function runCreationFailure(cause: unknown): string {
  if (cause instanceof PayoutRunExistsError) {
    return 'another creation of it was still writing it after 30 s';
  }
  if (cause instanceof PayoutRunEngineClosedError) return 'the app was shutting down';
  return 'its store, journal or engine failed';
}

/** What a {@link PayoutRunStoreError} interrupted: a read, or a change of the run. */
export type PayoutRunStoreAction = 'read' | 'pause' | 'resume' | 'cancel';

/**
 * The run's store (or engine) failed while reading the run or changing its state. A read paid
 * nothing: try again. A pause, resume or cancel may have been stored (`mayHaveExecuted`), and a
 * resume may have started sending: read the run with `get()` before trying again. The store's own
 * error is the `cause`, never the message.
 */
export class PayoutRunStoreError extends PaymentsError {
  override readonly name = 'PayoutRunStoreError';
  /** True for a pause, resume or cancel, which may have been stored; false for a read. */
  readonly mayHaveExecuted: boolean;

  constructor(
    readonly runId: string,
    readonly action: PayoutRunStoreAction,
    cause: unknown,
  ) {
    super(
      action === 'read'
        ? `The payout run ${runId} could not be read: its store failed; try again`
        : `The payout run ${runId} may or may not have been told to ${action}: its store or engine failed; read it with get() before trying again`,
      { cause },
    );
    this.mayHaveExecuted = action !== 'read';
  }
}

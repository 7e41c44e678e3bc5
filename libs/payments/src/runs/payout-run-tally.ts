import { addMinor, toMinorUnits, toTotals } from '../money';
import type { MinorTotal } from '../money';
import { PAYOUT_RUN_ITEM_STATES } from './payout-run.interfaces';
import type { PayoutRunItemState } from './payout-run.interfaces';
import type { PayoutRunSummary } from './payout-run.store';

/** An item's amount in minor units (validation refused amounts with more decimals). */
export function itemMinorUnits(item: { amount: number; currency: string }): number {
  return toMinorUnits(item.amount, item.currency) ?? Math.round(item.amount * 100);
}

/**
 * Counts and totals per state and currency of one run, in minor units, moved as items change: a
 * summary costs the number of currencies, not of items (docs/payout-runs.md, "Scale").
 */
export class PayoutRunTally {
  private readonly byState = new Map<PayoutRunItemState, Map<string, MinorTotal>>(
    PAYOUT_RUN_ITEM_STATES.map((state) => [state, new Map()]),
  );

  add(state: PayoutRunItemState, currency: string, minor: number): void {
    addMinor(this.byState.get(state) as Map<string, MinorTotal>, currency, minor);
  }

  move(from: PayoutRunItemState, to: PayoutRunItemState, currency: string, minor: number): void {
    if (from === to) return;
    addMinor(this.byState.get(from) as Map<string, MinorTotal>, currency, minor, -1);
    this.add(to, currency, minor);
  }

  summary(): PayoutRunSummary {
    return summaryOf((state) => this.byState.get(state) as Map<string, MinorTotal>);
  }
}

/** A summary from the minor-unit totals of each state. */
export function summaryOf(
  totalsOf: (state: PayoutRunItemState) => ReadonlyMap<string, MinorTotal>,
): PayoutRunSummary {
  const all = new Map<string, MinorTotal>();
  const counts = {} as Record<PayoutRunItemState, number>;
  const byState = {} as PayoutRunSummary['totals']['byState'];
  for (const state of PAYOUT_RUN_ITEM_STATES) {
    const totals = totalsOf(state);
    counts[state] = 0;
    for (const [currency, { count, minor }] of totals) {
      counts[state] += count;
      const sum = all.get(currency) ?? { count: 0, minor: 0n };
      all.set(currency, { count: sum.count + count, minor: sum.minor + minor });
    }
    byState[state] = toTotals(totals);
  }
  return {
    counts,
    totals: { all: toTotals(all), succeeded: { ...byState.succeeded }, byState },
  };
}

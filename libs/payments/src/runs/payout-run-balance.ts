import type { Balances, WalletBalance } from '../dto/lookups';
import { fromMinorUnits } from '../money';
import type { PayoutRunBalanceCheck, PayoutRunBalanceShortfall } from './payout-run.interfaces';
import { itemMinorUnits } from './payout-run-tally';
import type { PreparedPayoutRunItem } from './payout-run-validation';

/**
 * Compares the run's total per currency with the balance (docs/payout-runs.md, "Balance"). Totals
 * are summed in integer minor units, never rounded along the way ("Money"). An item is checked
 * against the wallet it is drawn from when that wallet holds its currency; an item drawn from a
 * wallet of another currency is converted by the service at a rate the balance does not give, so
 * its total is reported as unchecked rather than guessed.
 */
export function checkPayoutRunBalance(
  items: readonly PreparedPayoutRunItem[],
  balances: Balances,
): { check: PayoutRunBalanceCheck; shortfalls: PayoutRunBalanceShortfall[] } {
  const required = new Map<string, number>();
  const available = new Map<string, number>();
  const unchecked = new Map<string, number>();
  for (const item of items) {
    // An answer without the USD wallet says nothing of it: its items are unchecked, not passed.
    const wallet: WalletBalance | null | undefined =
      item.wallet === 'USD' ? balances.usd : balances.local;
    const minor = itemMinorUnits(item);
    if (wallet != null && wallet.currency === item.currency) {
      required.set(item.currency, (required.get(item.currency) ?? 0) + minor);
      available.set(item.currency, wallet.balance);
    } else {
      unchecked.set(item.currency, (unchecked.get(item.currency) ?? 0) + minor);
    }
  }
  const checked = [...required].map(([currency, minor]) => ({
    currency,
    required: fromMinorUnits(minor, currency),
    available: available.get(currency) ?? 0,
  }));
  return {
    check: {
      checked,
      unchecked: [...unchecked].map(([currency, minor]) => ({
        currency,
        required: fromMinorUnits(minor, currency),
      })),
    },
    shortfalls: checked.filter((line) => line.required > line.available),
  };
}

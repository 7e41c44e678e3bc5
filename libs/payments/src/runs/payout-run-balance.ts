import type { Balances, WalletBalance } from '../dto/lookups';
import type { PayoutRunBalanceCheck, PayoutRunBalanceShortfall } from './payout-run.interfaces';
import type { PreparedPayoutRunItem } from './payout-run-validation';

/** Sums of money to the cent, so that a total of many items reads as the sum an auditor adds. */
export function addMoney(a: number, b: number): number {
  return Math.round((a + b) * 100) / 100;
}

/**
 * Compares the run's total per currency with the balance (docs/payout-runs.md, "Balance"). An
 * item is checked against the wallet it is drawn from when that wallet holds its currency; an item
 * drawn from a wallet of another currency is converted by the service at a rate the balance does
 * not give, so its total is reported as unchecked rather than guessed.
 */
export function checkPayoutRunBalance(
  items: readonly PreparedPayoutRunItem[],
  balances: Balances,
): { check: PayoutRunBalanceCheck; shortfalls: PayoutRunBalanceShortfall[] } {
  const required = new Map<string, number>();
  const available = new Map<string, number>();
  const unchecked = new Map<string, number>();
  for (const item of items) {
    const wallet: WalletBalance = item.wallet === 'USD' ? balances.usd : balances.local;
    if (wallet.currency === item.currency) {
      required.set(item.currency, addMoney(required.get(item.currency) ?? 0, item.amount));
      available.set(item.currency, wallet.balance);
    } else {
      unchecked.set(item.currency, addMoney(unchecked.get(item.currency) ?? 0, item.amount));
    }
  }
  const checked = [...required].map(([currency, total]) => ({
    currency,
    required: total,
    available: available.get(currency) ?? 0,
  }));
  return {
    check: {
      checked,
      unchecked: [...unchecked].map(([currency, total]) => ({ currency, required: total })),
    },
    shortfalls: checked.filter((line) => line.required > line.available),
  };
}

/*
 * Money in integer minor units per currency (docs/payout-runs.md, "Money"): sums of
 * many amounts are exact only as integers, never as binary fractions rounded at each addition.
 */

/** ISO 4217 currencies whose minor unit is not 2 decimals; every other code has 2. */
const MINOR_UNITS: Readonly<Record<string, number>> = {
  BIF: 0,
  CLP: 0,
  DJF: 0,
  GNF: 0,
  ISK: 0,
  JPY: 0,
  KMF: 0,
  KRW: 0,
  PYG: 0,
  RWF: 0,
  UGX: 0,
  UYI: 0,
  VND: 0,
  VUV: 0,
  XAF: 0,
  XOF: 0,
  XPF: 0,
  BHD: 3,
  IQD: 3,
  JOD: 3,
  KWD: 3,
  LYD: 3,
  OMR: 3,
  TND: 3,
  CLF: 4,
  UYW: 4,
};

/** Decimals of the currency's minor unit (ISO 4217): 0 for UGX, 2 for KES, 3 for TND. */
export function minorUnitDigits(currency: string): number {
  return MINOR_UNITS[currency] ?? 2;
}

/**
 * The amount in the currency's minor units, or `undefined` when it has more decimals than the
 * currency has (1.005 KES): such an amount cannot be paid as given.
 */
export function toMinorUnits(amount: number, currency: string): number | undefined {
  return scaledExactly(amount, minorUnitDigits(currency));
}

/** Whether `amount` has at most `digits` decimals (and its units of 10^-digits are safe integers). */
export function hasAtMostDecimals(amount: number, digits: number): boolean {
  return scaledExactly(amount, digits) !== undefined;
}

/** `amount` × 10^digits when that is an integer as a decimal literal, else `undefined`. */
function scaledExactly(amount: number, digits: number): number | undefined {
  const scale = 10 ** digits;
  const scaled = amount * scale;
  const minor = Math.round(scaled);
  if (!Number.isSafeInteger(minor)) return undefined;
  // Less than one minor unit is no amount, however close to 0 (5e-324).
  if (minor === 0 && amount !== 0) return undefined;
  // The amount as a decimal literal must be the minor units exactly. The tolerance only absorbs
  // the binary representation of a decimal, a few units in the last place of the product
  // (0.1 * 100 is 10.000000000000002, 296815614.84 * 100 is 29681561483.999996), and never a
  // hundredth of a minor unit: 100.000000001 KES or 6000000000000.005 KES is refused.
  const tolerance = Math.min(0.01, Math.abs(scaled) * 4 * Number.EPSILON);
  return Math.abs(minor - scaled) <= tolerance ? minor : undefined;
}

/**
 * `amount` as the decimal of `decimals` places it stands for (`10 * 1.1` is 11, `0.01 + 8.04 +
 * 1.95` is 10), as the amount rules compare it and the wire sends it; as it is beyond 2^53 units.
 */
export function asDecimal(amount: number, decimals: number): number {
  const scale = 10 ** decimals;
  const scaled = Math.round(amount * scale);
  return Number.isSafeInteger(scaled) ? scaled / scale : amount;
}

/**
 * Integer units of 10^-digits back to an amount, as callers read it: the number nearest the exact
 * decimal, also for a sum past 2^53 units (kept as a bigint), which a number cannot hold to the unit.
 */
export function fromUnits(units: number | bigint, digits: number): number {
  if (typeof units === 'number' && !Number.isSafeInteger(units)) {
    return digits === 0 ? units : Number((units / 10 ** digits).toFixed(digits));
  }
  const whole = BigInt(units);
  if (digits === 0) return Number(whole);
  const magnitude = whole < 0n ? -whole : whole;
  const scale = 10n ** BigInt(digits);
  const fraction = (magnitude % scale).toString().padStart(digits, '0');
  return Number(`${whole < 0n ? '-' : ''}${magnitude / scale}.${fraction}`);
}

/** Minor units back to an amount, as callers read it. */
export function fromMinorUnits(minor: number | bigint, currency: string): number {
  return fromUnits(minor, minorUnitDigits(currency));
}

/** Count and sum in minor units of items in one currency: a bigint, exact past 2^53. */
export interface MinorTotal {
  count: number;
  minor: bigint;
}

/** Adds one item to `totals[currency]` (`sign` -1 takes it out again). */
export function addMinor(
  totals: Map<string, MinorTotal>,
  currency: string,
  minor: number,
  sign: 1 | -1 = 1,
): void {
  const total = totals.get(currency) ?? { count: 0, minor: 0n };
  total.count += sign;
  total.minor += BigInt(sign * minor);
  if (total.count === 0) totals.delete(currency);
  else totals.set(currency, total);
}

/** Totals in minor units as callers read them: `{ KES: { count, amount } }`. */
export function toTotals(
  totals: ReadonlyMap<string, MinorTotal>,
): Record<string, { count: number; amount: number }> {
  const out: Record<string, { count: number; amount: number }> = {};
  for (const [currency, { count, minor }] of totals) {
    out[currency] = { count, amount: fromMinorUnits(minor, currency) };
  }
  return out;
}

/**
 * Decimals a sum of journaled amounts is kept in: the currency's, or the finest a request may
 * carry (`decimals` of the amount rules: 4), whichever is finer. An amount of 1.005 KES (a transfer
 * or pan-African call may carry one) added in KES cents would round, and the total drift from the
 * entries an auditor adds up.
 */
export function summedDecimals(currency: string, finestRequestDecimals: number): number {
  return Math.max(minorUnitDigits(currency), finestRequestDecimals);
}

/** Summary statistics of repeated measurements. */

export function median(values: readonly number[]): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 === 1 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

/** Nearest-rank percentile of ascending `sorted`. */
export function percentile(sorted: Float64Array, p: number): number {
  if (sorted.length === 0) return Number.NaN;
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(sorted.length, Math.max(1, rank)) - 1];
}

/** Median and range of a set of values: the range shows how far one round can be trusted. */
export interface Spread {
  median: number;
  min: number;
  max: number;
  values: number[];
}

export function spread(values: readonly number[]): Spread {
  return {
    median: median(values),
    min: values.length === 0 ? Number.NaN : Math.min(...values),
    max: values.length === 0 ? Number.NaN : Math.max(...values),
    values: [...values],
  };
}

/**
 * `combine(x[i], y[i])` for every round i both ran: a ratio or difference within one round, so
 * drift of a shared machine between rounds cancels out.
 */
export function paired(
  x: readonly number[],
  y: readonly number[],
  combine: (x: number, y: number) => number,
): Spread {
  const length = Math.min(x.length, y.length);
  return spread(Array.from({ length }, (_, i) => combine(x[i], y[i])));
}

/**
 * A value from a delivery, fit for a log line: the reference and key come from whoever posted the
 * webhook, so control characters (forged log lines, terminal escapes) and length are bounded.
 */
export function forLog(value: string, max = 64): string {
  const printable = value.replace(/[^\x20-\x7e]/g, '?');
  return printable.length > max ? `${printable.slice(0, max)}...` : printable;
}

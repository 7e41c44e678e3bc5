import type { PayoutRunItem } from './payout-run.interfaces';

/** The CSV columns, in order: one row per item, the order the items were given. */
const CSV_COLUMNS: readonly (readonly [string, (item: PayoutRunItem) => string | number])[] = [
  ['item_id', (item) => item.itemId],
  ['operation', (item) => item.operation],
  ['state', (item) => item.state],
  ['amount', (item) => item.amount],
  ['currency', (item) => item.currency],
  ['reference', (item) => item.reference ?? ''],
  ['idempotency_key', (item) => item.idempotencyKey],
  ['sends', (item) => item.sends],
  ['reason', (item) => item.reason ?? ''],
];

/**
 * One CSV cell (RFC 4180 quoting). A text cell a spreadsheet would run as a formula (`=`, `+`,
 * `-`, `@`, tab, carriage return first) gets a leading `'`: item ids come from whoever wrote the
 * payroll file.
 */
function csvCell(value: string | number): string {
  if (typeof value === 'number') return String(value);
  const safe = /^[=+\-@\t\r]/.test(value) ? `'${value}` : value;
  return /[",\r\n]/.test(safe) ? `"${safe.replaceAll('"', '""')}"` : safe;
}

/** The items as CSV, with a header line, lines ended by CRLF. */
export function payoutRunCsv(items: readonly PayoutRunItem[]): string {
  const lines = [
    CSV_COLUMNS.map(([name]) => name).join(','),
    ...items.map((item) => CSV_COLUMNS.map(([, read]) => csvCell(read(item))).join(',')),
  ];
  return `${lines.join('\r\n')}\r\n`;
}

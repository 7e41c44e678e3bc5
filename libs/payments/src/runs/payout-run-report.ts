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
 * One CSV cell. A text cell a spreadsheet would run as a formula (`=`, `+`, `-`, `@`, tab or
 * carriage return first) gets a leading `'`; a cell holding a separator of any locale (`,` `;`
 * tab), a quote or a line break is quoted and guarded alike, since a spreadsheet that splits on
 * `;` would otherwise start a new cell inside it (`emp;=1+1`). Reasons and item ids come from
 * outside (the service, the payroll file).
 */
export function csvCell(value: string | number): string {
  if (typeof value === 'number') return String(value);
  const risky = /[",;\t\r\n]/.test(value);
  const safe = risky || /^[=+\-@]/.test(value) ? `'${value}` : value;
  return risky ? `"${safe.replaceAll('"', '""')}"` : safe;
}

/** The items as CSV, with a header line, lines ended by CRLF. */
export function payoutRunCsv(items: readonly PayoutRunItem[]): string {
  const lines = [
    CSV_COLUMNS.map(([name]) => name).join(','),
    ...items.map((item) => CSV_COLUMNS.map(([, read]) => csvCell(read(item))).join(',')),
  ];
  return `${lines.join('\r\n')}\r\n`;
}

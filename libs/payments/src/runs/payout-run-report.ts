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
 * carriage return first) gets a leading `'`, and so does one where such a character follows a
 * separator of any locale (`,` `;` tab), a quote or a line break, spaces between, since a
 * spreadsheet that splits on `;` would start a new cell there (`emp;=1+1`). A cell holding any of
 * those is quoted. Reasons and item ids come from outside (the service, the payroll file); a
 * reason such as `failed: webhook, status failed` is quoted, not guarded.
 */
export function csvCell(value: string | number): string {
  if (typeof value === 'number') return String(value);
  const safe = /(?:^|[",;\t\r\n])\s*[=+\-@\t\r]/.test(value) ? `'${value}` : value;
  return /[",;\t\r\n]/.test(value) ? `"${safe.replaceAll('"', '""')}"` : safe;
}

/** The items as CSV, with a header line, lines ended by CRLF. */
export function payoutRunCsv(items: readonly PayoutRunItem[]): string {
  const lines = [
    CSV_COLUMNS.map(([name]) => name).join(','),
    ...items.map((item) => CSV_COLUMNS.map(([, read]) => csvCell(read(item))).join(',')),
  ];
  return `${lines.join('\r\n')}\r\n`;
}

import type {
  PayoutRunBalanceShortfall,
  PayoutRunItemInput,
  PayoutRunItemProblem,
  PayoutRunOperation,
} from '@malipo/nestjs/runs';
import type { CsvRecord } from './payroll-csv';
import { CsvSyntaxError, parseCsv } from './payroll-csv';

/** The `kind` column's values and the payout each one sends. */
export const PAYROLL_KINDS = {
  mpesa: 'payouts.mpesa',
  'pan-african': 'payouts.panAfrican',
  merchant: 'payouts.merchant',
} as const satisfies Record<string, PayoutRunOperation>;

export type PayrollKind = keyof typeof PAYROLL_KINDS;

const KIND_NAMES = Object.keys(PAYROLL_KINDS) as PayrollKind[];

export interface PayrollColumn {
  readonly name: string;
  /** The kinds of row that use it. */
  readonly kinds: readonly PayrollKind[];
  /** In the rows of its kinds. */
  readonly required: 'yes' | 'no';
  readonly description: string;
}

/**
 * The columns a payroll file may have, in any order; only `itemId` and `kind` must be there. The
 * payout fields are those of the library's request DTOs (libs/payments/src/dto/payout-requests.ts),
 * under the same names, so the library's problems name a column. The page documents them from here.
 */
export const PAYROLL_COLUMNS: readonly PayrollColumn[] = [
  {
    name: 'itemId',
    kinds: KIND_NAMES,
    required: 'yes',
    description:
      'Your id of the row (employee or invoice number): unique in the file, printable ASCII without spaces. It makes the payout’s idempotency key.',
  },
  {
    name: 'kind',
    kinds: KIND_NAMES,
    required: 'yes',
    description: `${KIND_NAMES.join(', ')}.`,
  },
  {
    name: 'amount',
    kinds: KIND_NAMES,
    required: 'yes',
    description:
      'mpesa: KES 10 to 250,000. merchant: KES, more than 0. pan-african: in currency, more than 0. Digits and a decimal point only.',
  },
  {
    name: 'narration',
    kinds: KIND_NAMES,
    required: 'yes',
    description: 'What the payment is for.',
  },
  {
    name: 'phoneNumber',
    kinds: KIND_NAMES,
    required: 'yes',
    description:
      'mpesa: 0XXXXXXXXX or +254XXXXXXXXX. merchant: +254XXXXXXXXX. pan-African: + and the country code.',
  },
  {
    name: 'walletType',
    kinds: KIND_NAMES,
    required: 'no',
    description: 'The wallet paid from: local or USD. Empty: the app’s default.',
  },
  {
    name: 'allowDuplicate',
    kinds: KIND_NAMES,
    required: 'no',
    description:
      'yes to pay a receiver the same amount as an earlier row, on purpose. Otherwise such a row is refused.',
  },
  {
    name: 'username',
    kinds: ['pan-african', 'merchant'],
    required: 'no',
    description: 'The service account’s username. Empty: the app’s default.',
  },
  {
    name: 'businessAccount',
    kinds: ['merchant'],
    required: 'yes',
    description: 'Paybill or Till number (digits).',
  },
  {
    name: 'businessNumber',
    kinds: ['merchant'],
    required: 'yes',
    description: 'The account number at a Paybill, or N/A for a Till.',
  },
  {
    name: 'currency',
    kinds: ['pan-african'],
    required: 'yes',
    description: 'ISO 4217 code of amount (NGN, UGX...).',
  },
  {
    name: 'accountHolderName',
    kinds: ['pan-african'],
    required: 'yes',
    description: 'The receiver’s full name.',
  },
  {
    name: 'accountNumber',
    kinds: ['pan-african'],
    required: 'yes',
    description: 'Bank account or mobile-money number.',
  },
  {
    name: 'accountName',
    kinds: ['pan-african'],
    required: 'yes',
    description: 'bank or phone.',
  },
  {
    name: 'transactionChannel',
    kinds: ['pan-african'],
    required: 'yes',
    description: 'bank or phone; the network’s type.',
  },
  ...['networkCode', 'channelId', 'providerName', 'providerCode'].map((name): PayrollColumn => ({
    name,
    kinds: ['pan-african'],
    required: 'yes',
    description: 'From the network discovery of the receiver’s country.',
  })),
];

/** Not part of the payout request: they say what to send, not to whom. */
const ROW_COLUMNS = new Set(['itemId', 'kind', 'allowDuplicate']);

const COLUMN_BY_LOWER_NAME = new Map(PAYROLL_COLUMNS.map((c) => [c.name.toLowerCase(), c.name]));

/** A plain decimal: a spreadsheet's `1,500` or `1e3` is left to the library to refuse. */
const DECIMAL = /^-?\d+(\.\d+)?$/;

/** A problem of the file or of one row, with the lines it is on (none for the file as a whole). */
export interface PayrollProblem extends PayoutRunItemProblem {
  lines: number[];
}

/** Why a payroll file was refused: nothing was sent. */
export interface PayrollRefusal {
  message: string;
  problems: PayrollProblem[];
  shortfalls: PayoutRunBalanceShortfall[];
}

/** The file read into run items, and where each item came from. */
export interface PayrollFile {
  items: PayoutRunItemInput[];
  /** Maps the library's problems (by itemId, or `#<index>`) back to lines. */
  linesOf(problem: PayoutRunItemProblem): number[];
}

function fileProblem(field: string, rule: string, message: string, lines: number[] = []) {
  return { itemId: '-', field, rule, message, lines };
}

/** The header's column names as the page spells them, or the problems of the header. */
function readHeader(header: CsvRecord): { columns: string[]; problems: PayrollProblem[] } {
  const problems: PayrollProblem[] = [];
  const columns = header.cells.map((cell) => COLUMN_BY_LOWER_NAME.get(cell.toLowerCase()) ?? cell);
  columns.forEach((column, index) => {
    if (!COLUMN_BY_LOWER_NAME.has(column.toLowerCase())) {
      const hint = column.includes(';') ? ' (the separator must be a comma)' : '';
      problems.push(
        fileProblem(column, 'knownColumn', `${column} is not a column${hint}`, [header.line]),
      );
    } else if (columns.indexOf(column) !== index) {
      problems.push(
        fileProblem(column, 'unique', `the column ${column} appears twice`, [header.line]),
      );
    }
  });
  for (const required of ['itemId', 'kind']) {
    if (!columns.includes(required)) {
      problems.push(
        fileProblem(required, 'required', `the header has no ${required} column`, [header.line]),
      );
    }
  }
  return { columns, problems };
}

/** `yes`/`true` or nothing: any other value might mean either, so it is a problem. */
function allowDuplicate(cell: string | undefined): boolean | undefined {
  const value = (cell ?? '').toLowerCase();
  if (value === 'yes' || value === 'true') return true;
  if (value === '' || value === 'no' || value === 'false') return false;
  return undefined;
}

/**
 * Reads a payroll file into payout-run items. The payout fields go to the library as they are
 * (an empty cell is left out, so the app's defaults apply): its validation, the one of a single
 * call, judges them when the run is created. Only what the library cannot see is checked here:
 * the CSV itself, its header, and `allowDuplicate`.
 */
export function readPayrollCsv(
  text: string,
): { ok: true; file: PayrollFile } | { ok: false; problems: PayrollProblem[] } {
  let records: CsvRecord[];
  try {
    records = parseCsv(text);
  } catch (error) {
    if (!(error instanceof CsvSyntaxError)) throw error;
    return { ok: false, problems: [fileProblem('file', 'csv', error.message, [error.line])] };
  }
  const [header, ...rows] = records;
  if (header === undefined) {
    return { ok: false, problems: [fileProblem('file', 'required', 'the file is empty')] };
  }
  const { columns, problems } = readHeader(header);
  if (problems.length > 0) return { ok: false, problems };

  const linesById = new Map<string, number[]>();
  const items = rows.map((row, index): unknown => {
    if (row.cells.length !== columns.length) {
      problems.push({
        ...fileProblem(
          'file',
          'columnCount',
          `the line has ${row.cells.length} cells and the header ${columns.length}`,
          [row.line],
        ),
        itemId: `#${index}`,
      });
    }
    const cells = new Map(columns.map((column, at) => [column, row.cells[at] ?? '']));
    const itemId = cells.get('itemId') ?? '';
    if (itemId !== '') linesById.set(itemId, [...(linesById.get(itemId) ?? []), row.line]);
    const duplicate = allowDuplicate(cells.get('allowDuplicate'));
    if (duplicate === undefined) {
      problems.push({
        itemId: itemId || `#${index}`,
        field: 'allowDuplicate',
        rule: 'isBoolean',
        message: 'allowDuplicate must be yes or empty',
        lines: [row.line],
      });
    }
    const request: Record<string, string | number> = {};
    for (const [column, value] of cells) {
      if (ROW_COLUMNS.has(column) || value === '') continue;
      request[column] = column === 'amount' && DECIMAL.test(value) ? Number(value) : value;
    }
    const kind = cells.get('kind') ?? '';
    // An unknown kind gets no operation, which the library refuses with the item's other problems.
    const operation = Object.hasOwn(PAYROLL_KINDS, kind)
      ? PAYROLL_KINDS[kind as PayrollKind]
      : undefined;
    return {
      ...(itemId === '' ? {} : { itemId }),
      operation,
      request,
      ...(duplicate ? { allowDuplicate: true } : {}),
    };
  });
  if (problems.length > 0) return { ok: false, problems };

  return {
    ok: true,
    file: {
      // Not checked yet, whatever the type says: create() checks every item at run time, as it
      // must for any input, and refuses the run with every problem.
      items: items as PayoutRunItemInput[],
      linesOf: ({ itemId }) => {
        const lines = linesById.get(itemId);
        if (lines) return lines;
        const index = /^#(\d+)$/.exec(itemId);
        const row = index ? rows[Number(index[1])] : undefined;
        return row ? [row.line] : [];
      },
    },
  };
}

/**
 * The library's problems in the file's words: lines added, and `operation` (which the file
 * does not have) named as the `kind` column.
 */
export function payrollProblems(
  file: PayrollFile,
  problems: readonly PayoutRunItemProblem[],
): PayrollProblem[] {
  return problems.map((problem) => ({
    ...problem,
    ...(problem.field === 'operation'
      ? { field: 'kind', message: `kind must be one of ${KIND_NAMES.join(', ')}` }
      : {}),
    lines: file.linesOf(problem),
  }));
}

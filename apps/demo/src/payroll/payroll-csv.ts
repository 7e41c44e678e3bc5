/**
 * A CSV reader for payroll files (RFC 4180), written here because no CSV package is installed and
 * the grammar is small: cells separated by commas, records by CRLF or LF; a quoted cell may hold
 * commas, line breaks and doubled quotes (`""`). What spreadsheets add is tolerated: a byte-order
 * mark, blank or all-empty lines (skipped), spaces around unquoted cells (trimmed) and around quoted
 * ones (ignored). Anything else ambiguous is an error naming its line, not a guess: a wrong guess
 * here pays the wrong person.
 */

/** One record and the line of the file it starts on (1-based), to point people at it. */
export interface CsvRecord {
  readonly line: number;
  readonly cells: readonly string[];
}

/** The file is not valid CSV at `line`; nothing after it was read. */
export class CsvSyntaxError extends Error {
  override readonly name = 'CsvSyntaxError';

  constructor(
    readonly line: number,
    message: string,
  ) {
    super(message);
  }
}

const BYTE_ORDER_MARK = '\uFEFF';

function isBlank(char: string | undefined): boolean {
  return char === ' ' || char === '\t';
}

/** Every record of `text`, in order, without blank ones. @throws CsvSyntaxError */
export function parseCsv(text: string): CsvRecord[] {
  const records: CsvRecord[] = [];
  let position = text.startsWith(BYTE_ORDER_MARK) ? 1 : 0;
  let line = 1;

  const atLineEnd = (at: number): boolean =>
    at >= text.length || text[at] === '\n' || (text[at] === '\r' && text[at + 1] === '\n');

  /** A quoted cell from its opening quote; leaves `position` after the closing one. */
  const quotedCell = (): string => {
    const openedOn = line;
    let value = '';
    position += 1;
    for (;;) {
      const quote = text.indexOf('"', position);
      if (quote === -1) {
        throw new CsvSyntaxError(openedOn, 'a quoted cell is never closed: a quote is missing');
      }
      const chunk = text.slice(position, quote);
      value += chunk;
      line += chunk.split('\n').length - 1;
      position = quote + 1;
      if (text[position] !== '"') return value;
      value += '"';
      position += 1;
    }
  };

  while (position < text.length) {
    const recordLine = line;
    const cells: string[] = [];
    for (;;) {
      let start = position;
      while (isBlank(text[start])) start += 1;
      if (text[start] === '"') {
        position = start;
        cells.push(quotedCell());
        while (isBlank(text[position])) position += 1;
        if (text[position] !== ',' && !atLineEnd(position)) {
          throw new CsvSyntaxError(
            line,
            'text follows a closing quote: a quote inside a quoted cell must be doubled ("")',
          );
        }
      } else {
        let end = position;
        while (text[end] !== ',' && !atLineEnd(end)) end += 1;
        const raw = text.slice(position, end);
        if (raw.includes('"')) {
          throw new CsvSyntaxError(
            line,
            'a quote inside an unquoted cell: quote the whole cell and double its quotes ("")',
          );
        }
        cells.push(raw.trim());
        position = end;
      }
      if (text[position] !== ',') break;
      position += 1;
    }
    if (text[position] === '\r') position += 1;
    if (text[position] === '\n') {
      position += 1;
      line += 1;
    }
    if (cells.some((cell) => cell !== '')) records.push({ line: recordLine, cells });
  }
  return records;
}

import fc from 'fast-check';
import { CsvSyntaxError, parseCsv } from './payroll-csv';

const cellsOf = (text: string) => parseCsv(text).map((record) => record.cells);

/** A cell as RFC 4180 writes it: quoted, quotes doubled. */
const quoted = (cell: string) => `"${cell.replaceAll('"', '""')}"`;

describe('parseCsv', () => {
  it('reads records separated by CRLF or LF, with the line each starts on', () => {
    expect(parseCsv('a,b\r\nc,d\ne,f')).toEqual([
      { line: 1, cells: ['a', 'b'] },
      { line: 2, cells: ['c', 'd'] },
      { line: 3, cells: ['e', 'f'] },
    ]);
  });

  it('reads quoted cells with commas, doubled quotes and line breaks', () => {
    const records = parseCsv(
      'id,narration\r\n1,"Salary, March"\r\n2,"He said ""paid"""\r\n3,"two\r\nlines"\r\n4,x\r\n',
    );

    expect(records.map((r) => r.cells)).toEqual([
      ['id', 'narration'],
      ['1', 'Salary, March'],
      ['2', 'He said "paid"'],
      ['3', 'two\r\nlines'],
      ['4', 'x'],
    ]);
    // The record after a quoted line break starts a line later.
    expect(records.map((r) => r.line)).toEqual([1, 2, 3, 4, 6]);
  });

  it('keeps empty cells, at the end of a line too', () => {
    expect(cellsOf('a,,c,\n,,,x\n')).toEqual([
      ['a', '', 'c', ''],
      ['', '', '', 'x'],
    ]);
  });

  it('tolerates what spreadsheets write: a byte-order mark, blank and all-empty lines, spaces', () => {
    expect(parseCsv('\uFEFFa, b \n\n,,\n  "c" , d\n\n')).toEqual([
      { line: 1, cells: ['a', 'b'] },
      { line: 4, cells: ['c', 'd'] },
    ]);
  });

  it('keeps the spaces inside quotes', () => {
    expect(cellsOf('" a ",b')).toEqual([[' a ', 'b']]);
  });

  it.each([
    ['a quote never closed', 'id,n\n1,"open\n2,x\n', 2, /never closed/],
    ['text after a closing quote', 'id,n\n1,"a"b\n', 2, /follows a closing quote/],
    ['a quote inside an unquoted cell', 'id,n\n1,a"b\n', 2, /quote inside an unquoted cell/],
    [
      'an error after a quoted line break',
      'id,n\n1,"a\nb"\n2,x"y\n',
      4,
      /quote inside an unquoted cell/,
    ],
  ])('refuses %s, naming its line', (_name, text, line, message) => {
    let thrown: unknown;
    try {
      parseCsv(text);
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(CsvSyntaxError);
    expect(thrown).toMatchObject({ line, message: expect.stringMatching(message) });
  });

  it('reads back any cells written with RFC 4180 quoting', () => {
    const cell = fc.string({
      unit: fc.constantFrom('a', ' ', ',', '"', '\n', '\r', 'é', '\uFEFF'),
    });
    const table = fc.array(fc.array(cell, { minLength: 2, maxLength: 4 }), { maxLength: 5 });
    fc.assert(
      fc.property(table, fc.constantFrom('\r\n', '\n'), (rows, lineEnd) => {
        const text = rows.map((cells) => cells.map(quoted).join(',')).join(lineEnd);
        const expected = rows.filter((cells) => cells.some((c) => c !== ''));
        expect(cellsOf(text)).toEqual(expected);
      }),
    );
  });
});

import { parse } from 'csv-parse/sync';
import { plainAxis, specWith } from '../../test-support/crosstab-input';
import type { FieldDef } from '@quarry/query-language';
import type { AxisValue, GroupRow } from './axis-value';
import type { CrosstabSpec } from './crosstab-spec';
import { buildPivotTable } from './pivot-table';
import { renderCsv } from './render-csv';

const text = (name: string): FieldDef => ({ name, type: 'string' }) as FieldDef;

/** Labels a record could carry: line breaks, quotes, separators and every formula lead a spreadsheet runs. */
const HOSTILE: string[] = [
  'two\nlines',
  'carriage\rreturn',
  'crlf\r\nhere',
  '\rstarts with CR',
  'say "hi"',
  'a,b',
  '=HYPERLINK("http://evil.example","x")',
  '-2+3',
  '+1+2',
  '@x',
  '\tTAB',
  'plain',
];

/** What a reader must get back for a label: the label itself, with an apostrophe when it leads like a formula. */
const defused = (label: string) => (/^[=+\-@\t\r]/.test(label) ? `'${label}` : label);

function spec(over: Partial<CrosstabSpec> = {}): CrosstabSpec {
  return specWith({
    rows: [plainAxis(text('=cmd|"/c calc"!A1'))],
    columns: [plainAxis(text('col'))],
    totals: [
      { aggregation: 'Sum', field: { name: 'n', type: 'number' } as FieldDef, name: '-Sum, "n"', showAs: 'value' },
    ],
    ...over,
  });
}

/** Each hostile label is a row key and a column key; cell values are negative numbers and fractions. */
function groups(): GroupRow[] {
  const out: GroupRow[] = [];
  const value = (i: number) => -(i + 1) - 0.25;
  HOSTILE.forEach((r, i) => {
    out.push({ rowKey: [r], columnKey: [], values: [value(i)] });
    out.push({ rowKey: [], columnKey: [r], values: [value(i)] });
    out.push({ rowKey: [r], columnKey: [r], values: [value(i)] });
  });
  out.push({ rowKey: [], columnKey: [], values: [HOSTILE.reduce((a, _, i) => a + value(i), 0)] });
  return out;
}

describe('renderCsv with hostile labels', () => {
  const table = buildPivotTable(spec(), groups());
  const csv = renderCsv(table);
  const lines = parse(csv, { relax_column_count: false }) as string[][];

  it('quotes every value with a comma, quote, CR or LF, so a reader finds exactly one line per row', () => {
    // The header, one line per row key, the Total line.
    expect(lines).toHaveLength(1 + HOSTILE.length + 1);
    const width = lines[0].length;
    expect(lines.every((l) => l.length === width)).toBe(true);
    // Outside quoted values the text breaks only at CRLF, and holds no stray quote.
    const outsideQuotes = csv.replace(/"(?:[^"]|"")*"/g, '');
    expect(outsideQuotes.replace(/\r\n/g, '')).not.toMatch(/[\r\n"]/);
    expect(outsideQuotes.split('\r\n')).toHaveLength(lines.length + 1);
    for (const label of HOSTILE.filter((l) => /[,"\r\n]/.test(l))) {
      const quoted = `"${defused(label).replace(/"/g, '""')}`;
      expect(csv).toContain(quoted);
    }
  });

  it('reads back every label (row keys and header cells) defused, and every number as the table has it', () => {
    const rowLabels = lines.slice(1, -1).map((l) => l[0]);
    expect(rowLabels).toEqual(table.rows.map((k) => defused(String(k[0]))));
    expect(new Set(rowLabels)).toEqual(new Set(HOSTILE.map(defused)));
    expect(lines[0][0]).toBe('\'=cmd|"/c calc"!A1');
    expect(lines[0].slice(1, -1)).toEqual(table.columns.map((c) => defused(`${String(c[0])} | -Sum, "n"`)));
    expect(lines[0][lines[0].length - 1]).toBe('Total | -Sum, "n"');
    table.rows.forEach((key, i) => {
      const want = [...table.columns.map((c) => table.at(key, c)[0]), table.at(key, [])[0]];
      expect(lines[i + 1].slice(1).map((v) => (v === '' ? null : Number(v)))).toEqual(want);
    });
    expect(lines[lines.length - 1].slice(1).map(Number)).toEqual([
      ...table.columns.map((c) => table.at([], c)[0]),
      table.at([], [])[0],
    ]);
  });

  it('leaves numbers as numbers: a negative value is written -3.25, never with an apostrophe', () => {
    const cells = lines.slice(1).flatMap((l) => l.slice(1));
    expect(cells.filter((c) => c !== '').every((c) => /^-\d+(\.\d+)?$/.test(c))).toBe(true);
    expect(cells).toContain('-3.25');
  });

  it.each<[AxisValue, string]>([
    [-5, '-5'],
    [2.5, '2.5'],
    ['-5', '-5'],
    ['-x', "'-x"],
    ['@SUM(A1)', "'@SUM(A1)"],
    ['\r', "'\r"],
  ])('a row key %j reads back as %j', (key, want) => {
    const g: GroupRow[] = [
      { rowKey: [key], columnKey: [], values: [1] },
      { rowKey: [], columnKey: [], values: [1] },
    ];
    const one = buildPivotTable(spec({ columns: [], rows: [plainAxis(text('k'))] }), g);
    const back = parse(renderCsv(one)) as string[][];
    expect(back[1][0]).toBe(want);
  });
});

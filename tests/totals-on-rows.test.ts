import ExcelJS from 'exceljs';
import { parse } from 'csv-parse/sync';
import type { Identity } from './support/identities';
import { crosstabValues, parseTable } from './support/html-table';
import { type Stack, useStackWithAnalyst } from './support/stack';

const COUNT = 'Count (Records)';
const MEDIAN = 'Median (IMDB Rating)';

describe('CROSSTAB.EXECUTE totalsOn "rows": two totals over many columns, each named once per row', () => {
  const env = useStackWithAnalyst();
  let stack: Stack;
  let analyst: Identity;

  beforeAll(() => {
    stack = env.stack();
    analyst = env.analyst();
  });

  /** Count and median rating by rating × genre: 2 totals × 13 genres, the table the issue could not read. */
  const table = async (extra: Record<string, unknown>) => {
    const res = await stack.call<{ data: string; rowCount: number }>(analyst, 'CROSSTAB.EXECUTE', {
      index: 'movies',
      rows: ['MPAA Rating'],
      columns: [{ field: 'Major Genre' }],
      totals: [{ aggregationType: 'Count' }, { aggregationType: 'Median', field: 'IMDB Rating' }],
      ...extra,
    });
    expect(res.error).toBeUndefined();
    return res.data!;
  };

  it('HTML: a row per total under each rating, one cell per genre; the same numbers as totals on columns', async () => {
    const across = parseTable((await table({})).data);
    const down = parseTable((await table({ totalsOn: 'rows' })).data);
    // The totals' names are no longer repeated under every genre.
    expect(across.head.flat().filter((h) => h === MEDIAN).length).toBeGreaterThan(10);
    expect(down.head.flat()).not.toContain(MEDIAN);
    expect(down.head[0].slice(0, 2)).toEqual(['MPAA Rating', 'Totals']);
    expect(down.body.slice(0, 2).map((r) => r.slice(0, 2))).toEqual([
      [across.body[0][0], COUNT],
      [across.body[0][0], MEDIAN],
    ]);
    expect(down.foot.map((r) => r.slice(0, 2))).toEqual([
      ['Total', COUNT],
      ['Total', MEDIAN],
    ]);
    const a = crosstabValues(across, 1);
    const d = crosstabValues(down, 2);
    const genres = d.columns;
    expect(genres.length).toBeGreaterThanOrEqual(13);
    for (const rating of a.rows.filter((r) => r !== 'Total'))
      for (const genre of genres)
        for (const total of [COUNT, MEDIAN])
          expect([rating, genre, total, d.cells.get(`${rating} | ${total}`)?.get(genre)]).toEqual([
            rating,
            genre,
            total,
            a.cells.get(rating)?.get(`${genre} | ${total}`),
          ]);
    // The Total rows: one per total, as the Total row across has them.
    [COUNT, MEDIAN].forEach((total, m) =>
      genres.forEach((genre, j) =>
        expect([genre, total, down.foot[m][2 + j]]).toEqual([
          genre,
          total,
          across.foot[0][1 + a.columns.indexOf(`${genre} | ${total}`)],
        ]),
      ),
    );
  });

  it('CSV: the totals in a column of their own, a line each', async () => {
    const across = parse((await table({ format: 'csv' })).data) as string[][];
    const down = parse((await table({ format: 'csv', totalsOn: 'rows' })).data) as string[][];
    expect(down[0].slice(0, 2)).toEqual(['MPAA Rating', 'Totals']);
    expect(down[0].at(-1)).toBe('Total');
    expect(down[0].some((h) => h.includes(COUNT))).toBe(false);
    expect(down).toHaveLength((across.length - 1) * 2 + 1);
    // R's median of Drama: the same number in both layouts.
    const genre = down[0].indexOf('Drama');
    const rMedian = down.find((l) => l[0] === 'R' && l[1] === MEDIAN)!;
    const rAcross = across.find((l) => l[0] === 'R')!;
    expect(rMedian[genre]).toBe(rAcross[across[0].indexOf(`Drama | ${MEDIAN}`)]);
    expect(down.at(-1)!.slice(0, 2)).toEqual(['Total', MEDIAN]);
  });

  it('XLSX: the same layout in the workbook', async () => {
    const book = new ExcelJS.Workbook();
    const file = Buffer.from((await table({ format: 'xlsx', totalsOn: 'rows' })).data, 'base64');
    // exceljs's types ask for an ArrayBuffer; it reads a Buffer.
    await book.xlsx.load(file as unknown as ArrayBuffer);
    const sheet = book.worksheets[0];
    expect([sheet.getCell(1, 1).value, sheet.getCell(1, 2).value]).toEqual(['MPAA Rating', 'Totals']);
    expect([sheet.getCell(2, 2).value, sheet.getCell(3, 2).value]).toEqual([COUNT, MEDIAN]);
    expect(typeof sheet.getCell(2, 3).value === 'number' || sheet.getCell(2, 3).value === null).toBe(true);
    const last = sheet.rowCount;
    expect([sheet.getCell(last - 1, 1).value, sheet.getCell(last - 1, 2).value, sheet.getCell(last, 2).value]).toEqual([
      'Total',
      COUNT,
      MEDIAN,
    ]);
  });

  it.each([
    [{ totalsOn: 'sideways' }, /totalsOn must be one of "columns", "rows"/],
    [{ totalsOn: 'rows', chartType: 'MSColumn2D' }, /totalsOn goes with an html, csv or xlsx table \(not chartType\)/],
    [{ totalsOn: 'rows', format: 'json' }, /totalsOn goes with an html, csv or xlsx table \(not format json/],
    [{ totalsOn: 1 }, /totalsOn must be one of/],
  ])('bad totalsOn %j: a 400 naming it', async (extra, message) => {
    const res = await stack.call(analyst, 'CROSSTAB.EXECUTE', {
      index: 'movies',
      rows: ['MPAA Rating'],
      totals: [{ aggregationType: 'Count' }],
      ...extra,
    });
    expect(res.error?.code).toBe(400);
    expect(String(res.error?.data.detail)).toMatch(message);
  });
});

import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createIdentity, type Identity } from './support/identities';
import { attr, crosstabValues, elements, parseTable, text } from './support/html-table';
import { flights20k, movies, VEGA, wordsOf, type Rec } from './support/datasets';
import { pivotModel, type ModelSpec } from './support/pivot-model';
import { runCli } from './support/quarry-process';
import { startStackWithData, type Stack } from './support/stack';

interface HtmlData {
  contentType: string;
  data: string;
  rowCount: number;
  columnCount: number;
}

const MOVIES = movies();
const FLIGHTS = flights20k();
const dayLabel = (field: string, v: unknown) =>
  v === null || v === undefined || v === '' ? '(blank)' : field === 'date' ? String(v).slice(0, 10) : String(v);

describe('CROSSTAB.EXECUTE as HTML, checked cell by cell against plain JS', () => {
  let stack: Stack;
  let analyst: Identity;
  let realmUser: Identity;
  let tmp: string;

  beforeAll(async () => {
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'quarry-xss-'));
    fs.writeFileSync(
      path.join(tmp, 'tricky.json'),
      JSON.stringify([
        { '"><img onerror=alert(1)>': '<script>alert(1)</script>', amount: 1.1 },
        { '"><img onerror=alert(1)>': 'Tom & "Jerry"', amount: 2.2 },
        { '"><img onerror=alert(1)>': "it's <b>bold</b>", amount: 0.1 },
        { '"><img onerror=alert(1)>': 'Tom & "Jerry"', amount: 0.2 },
      ]),
    );
    stack = await startStackWithData({
      extra: async (env) => {
        const r = await runCli(['index', 'load', 'tricky', path.join(tmp, 'tricky.json')], env);
        if (r.code !== 0) throw new Error(r.stderr);
        const m = await runCli(
          ['index', 'load', 'flights-monthly', path.join(VEGA, 'flights-20k.json'), '--type', 'date=date:month'],
          env,
        );
        if (m.code !== 0) throw new Error(m.stderr);
      },
    });
    analyst = await createIdentity(stack.dataDir, 'analyst', { indexes: '*' });
    realmUser = await createIdentity(stack.dataDir, 'west-coast', {
      indexes: 'flights',
      realms: [{ index: 'flights', query: 'origin:(SFO OR LAX OR SEA)' }],
    });
  }, 120000);

  afterAll(async () => {
    await stack?.quarry.stop();
  });

  async function crosstab(who: Identity, params: Record<string, unknown>): Promise<HtmlData> {
    const res = await stack.call<HtmlData>(who, 'CROSSTAB.EXECUTE', params);
    if (res.error) throw new Error(JSON.stringify(res.error));
    return res.data as HtmlData;
  }

  async function expectCrosstab(
    who: Identity,
    index: string,
    records: Rec[],
    params: Record<string, unknown>,
    model: ModelSpec,
  ) {
    const data = await crosstab(who, { index, ...params });
    expect(data.contentType).toBe('text/html');
    const table = parseTable(data.data);
    const got = crosstabValues(table, model.rows.length);
    const want = pivotModel(records, model);
    expect(got.columns).toEqual(want.columns);
    expect(got.rows).toEqual(want.rows);
    for (const [rowKey, wantRow] of want.cells) {
      for (const [col, v] of wantRow) {
        const g = got.cells.get(rowKey)?.get(col);
        if (v === null) expect(g).toBeNull();
        else expect(g).toBeCloseTo(v, 6);
      }
    }
    expect(data.rowCount).toBe(want.rows.length - 1);
    return { data, table };
  }

  it('one row field, Count of records', async () => {
    const { table } = await expectCrosstab(
      analyst,
      'movies',
      MOVIES,
      { query: '*', rows: ['Major Genre'], totals: [{ aggregationType: 'Count' }] },
      {
        rows: ['Major Genre'],
        columns: [],
        totals: [{ agg: 'Count', name: 'Count (Records)' }],
      },
    );
    expect(table.head).toHaveLength(1);
    expect(elements(table.table, 'th').filter((th) => attr(th, 'scope') === 'row').length).toBeGreaterThan(5);
  });

  it('two row fields nest as rowspans', async () => {
    const { table } = await expectCrosstab(
      analyst,
      'movies',
      MOVIES,
      { rows: ['Major Genre', 'MPAA Rating'], totals: [{ aggregationType: 'Sum', field: 'Worldwide Gross' }] },
      {
        rows: ['Major Genre', 'MPAA Rating'],
        columns: [],
        totals: [{ agg: 'Sum', field: 'Worldwide Gross', name: 'Sum (Worldwide Gross)' }],
      },
    );
    const genreHeaders = table.cells.body.map((r) => r[0]).filter((c) => attr(c, 'rowspan'));
    expect(genreHeaders.length).toBeGreaterThan(3);
  });

  it('a row and a column field, every aggregation type', async () => {
    const totals = [
      { aggregationType: 'Sum', field: 'delay' },
      { aggregationType: 'count' },
      { aggregationType: 'Average', field: 'delay' },
      { aggregationType: 'MIN', field: 'distance' },
      { aggregationType: 'Max', field: 'distance', name: 'Longest' },
    ];
    const subset = FLIGHTS.filter((f) => ['SFO', 'LAX', 'ORD', 'ATL'].includes(String(f.origin)));
    await expectCrosstab(
      analyst,
      'flights',
      subset,
      { query: 'origin:(SFO OR LAX OR ORD OR ATL)', rows: ['origin'], columns: [{ field: 'destination' }], totals },
      {
        rows: ['origin'],
        columns: [{ field: 'destination' }],
        totals: [
          { agg: 'Sum', field: 'delay', name: 'Sum (delay)' },
          { agg: 'Count', name: 'Count (Records)' },
          { agg: 'Average', field: 'delay', name: 'Average (delay)' },
          { agg: 'Min', field: 'distance', name: 'Min (distance)' },
          { agg: 'Max', field: 'distance', name: 'Longest' },
        ],
      },
    );
  });

  it('two column fields with reverse, dates grouped by day', async () => {
    const subset = FLIGHTS.filter((f) => ['SFO', 'SEA'].includes(String(f.origin)) && String(f.date) < '2001-01-04');
    await expectCrosstab(
      analyst,
      'flights',
      subset,
      {
        query: 'origin:(SFO OR SEA) AND date:<2001-01-04',
        rows: ['destination'],
        columns: [{ field: 'origin', reverse: true }, { field: 'date' }],
        totals: [{ aggregationType: 'Count' }],
      },
      {
        rows: ['destination'],
        columns: [{ field: 'origin', reverse: true }, { field: 'date' }],
        totals: [{ agg: 'Count', name: 'Count (Records)' }],
        label: dayLabel,
      },
    );
  });

  it('groups dates by month where the index declares it', async () => {
    const subset = FLIGHTS.filter((f) => ['SFO', 'JFK'].includes(String(f.origin)));
    await expectCrosstab(
      analyst,
      'flights-monthly',
      subset,
      {
        query: 'origin:(SFO OR JFK)',
        rows: ['origin'],
        columns: [{ field: 'date' }],
        totals: [{ aggregationType: 'Average', field: 'delay' }],
      },
      {
        rows: ['origin'],
        columns: [{ field: 'date' }],
        totals: [{ agg: 'Average', field: 'delay', name: 'Average (delay)' }],
        label: (f, v) => (f === 'date' ? String(v).slice(0, 7) : String(v)),
      },
    );
  });

  it('a dynamic view counts distinct values, also in the totals', async () => {
    await expectCrosstab(
      analyst,
      'movies',
      MOVIES,
      {
        rows: ['Major Genre'],
        columns: [{ field: 'MPAA Rating' }],
        totals: [
          { aggregationType: 'Count', dynamicView: 'Directors' },
          { aggregationType: 'Average', field: 'IMDB Rating' },
        ],
      },
      {
        rows: ['Major Genre'],
        columns: [{ field: 'MPAA Rating' }],
        totals: [
          { agg: 'Count', distinct: 'Director', name: 'Count (Directors)' },
          { agg: 'Average', field: 'IMDB Rating', name: 'Average (IMDB Rating)' },
        ],
      },
    );
  });

  it('a filtered query', async () => {
    const filtered = MOVIES.filter(
      (m) =>
        wordsOf(m['Major Genre']).includes('comedy') &&
        typeof m['IMDB Rating'] === 'number' &&
        (m['IMDB Rating'] as number) >= 7,
    );
    await expectCrosstab(
      analyst,
      'movies',
      filtered,
      {
        query: '(Major Genre):comedy AND (IMDB Rating):>=7',
        rows: ['Creative Type'],
        totals: [{ aggregationType: 'Max', field: 'US Gross' }],
      },
      {
        rows: ['Creative Type'],
        columns: [],
        totals: [{ agg: 'Max', field: 'US Gross', name: 'Max (US Gross)' }],
      },
    );
  });

  it('a user with a realm sees exactly its slice', async () => {
    const west = FLIGHTS.filter((f) => ['SFO', 'LAX', 'SEA'].includes(String(f.origin)));
    const params = {
      rows: ['origin'],
      totals: [
        { aggregationType: 'Sum', field: 'delay' },
        { aggregationType: 'Count', dynamicView: 'Destinations' },
      ],
    };
    const model: ModelSpec = {
      rows: ['origin'],
      columns: [],
      totals: [
        { agg: 'Sum', field: 'delay', name: 'Sum (delay)' },
        { agg: 'Count', distinct: 'destination', name: 'Count (Destinations)' },
      ],
    };
    await expectCrosstab(realmUser, 'flights', west, params, model);
    const everyone = await expectCrosstab(analyst, 'flights', FLIGHTS, params, model);
    expect(everyone.data.rowCount).toBeGreaterThan(3);
  });

  it('escapes every value and field name', async () => {
    const field = '"><img onerror=alert(1)>';
    const data = await crosstab(analyst, {
      index: 'tricky',
      rows: [field],
      totals: [{ aggregationType: 'Sum', field: 'amount', name: '<i>sum</i> & "total"' }],
    });
    const table = parseTable(data.data);
    expect(elements(table.root, 'script')).toHaveLength(0);
    expect(elements(table.root, 'img')).toHaveLength(0);
    expect(elements(table.root, 'b')).toHaveLength(0);
    expect(elements(table.root, 'i')).toHaveLength(0);
    expect(table.head[0]).toEqual([field, '<i>sum</i> & "total"']);
    const labels = table.body.map((r) => r[0]);
    expect(labels).toEqual(['<script>alert(1)</script>', "it's <b>bold</b>", 'Tom & "Jerry"']);
    const sums = new Map(table.body.map((r) => [r[0], r[1]]));
    expect(sums.get('Tom & "Jerry"')).toBe('2.4');
    expect(table.foot[0][1]).toBe('3.6');
    expect(text(table.table)).not.toContain('0000000');
  });

  describe('validation', () => {
    const expect400 = async (params: Record<string, unknown>, detail: RegExp) => {
      const res = await stack.call(analyst, 'CROSSTAB.EXECUTE', { index: 'movies', ...params });
      expect(res.error?.code).toBe(400);
      expect(res.error?.data.detail).toMatch(detail);
    };
    const count = [{ aggregationType: 'Count' }];
    it('unknown row field', () => expect400({ rows: ['Nope'], totals: count }, /rows\[0\]: unknown field "Nope"/));
    it('unknown column field', () =>
      expect400(
        { rows: ['Title'], columns: [{ field: 'Nope' }], totals: count },
        /columns\[0\]\.field: unknown field "Nope"/,
      ));
    it('Sum on a text field', () =>
      expect400(
        { rows: ['Major Genre'], totals: [{ aggregationType: 'Sum', field: 'Title' }] },
        /Sum needs a numeric field, but "Title" is string/,
      ));
    it('unknown dynamic view', () =>
      expect400(
        { rows: ['Major Genre'], totals: [{ aggregationType: 'Count', dynamicView: 'Studios' }] },
        /unknown view "Studios"; this index has Records, Directors, Distributors/,
      ));
    it('empty rows', () => expect400({ rows: [], totals: count }, /rows must name at least one field/));
    it('unknown aggregation', () =>
      expect400(
        { rows: ['Major Genre'], totals: [{ aggregationType: 'Mode', field: 'US Gross' }] },
        /"Mode" is not one of Sum, Count, Average, Min, Max, Median, Percentile, StdDev, CountDistinct/,
      ));
    it('over 100,000 cells', () =>
      expect400(
        { rows: ['Title'], columns: [{ field: 'Director' }], totals: count },
        /would have \d+ cells .* the limit is 100000/,
      ));
    it('unknown index is a 404', async () => {
      const res = await stack.call(analyst, 'CROSSTAB.EXECUTE', { index: 'nope', rows: ['a'], totals: count });
      expect(res.error?.code).toBe(404);
    });
  });
});

import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import { parse as parseCsv } from 'csv-parse/sync';
import { parse as parseHtml } from 'parse5';
import * as XLSX from 'xlsx';
import { PNG } from 'pngjs';
import { VEGA } from './support/datasets';
import { elements, text } from './support/html-table';
import { createIdentity, startStackWithData, type Stack } from './support/stack';
import type { Identity } from './support/identities';

/*
 * What a user sees is in the data, to the last digit, and every drill query finds its cell (docs/api.md
 * CROSSTAB.EXECUTE, docs/query-language.md): each case below was a report of something a user saw that
 * the data does not hold, run over JSON-RPC against the real server and, for loading, the real CLI.
 */

interface JsonRow {
  key: Array<string | number | null>;
  query: string | null;
  total: Array<number | null>;
  cells: Array<Array<number | null>>;
}
interface JsonTable {
  rows: JsonRow[];
  columns: Array<Array<string | number | null>>;
  columnQueries: Array<string | null>;
  grandTotal: Array<number | null>;
}
interface Answer<T> {
  contentType: string;
  data: T;
}

const work = fs.mkdtempSync(path.join(os.tmpdir(), 'quarry-exact-'));
const EDGE = path.join(work, 'edge.jsonl');
const STAMPS_CSV = path.join(work, 'stamps.csv');
const STAMPS_JSON = path.join(work, 'stamps.jsonl');

/** Keys a user reported, each with a known count, and decimals at the edge of what a double holds exactly. */
function writeEdge(): void {
  const lines: string[] = [];
  const add = (label: string | null, n: number, amount: (i: number) => number) => {
    for (let i = 0; i < n; i++)
      lines.push(JSON.stringify({ label, amount: amount(i), hour: `2021-03-28T0${i % 4}:30:00Z` }));
  };
  add('alpha ', 30, (i) => (i === 0 ? 999999999999.99 : i === 1 ? -999999999999.99 : i / 7));
  add('alpha', 5, (i) => i + 0.1);
  add(' alpha', 3, () => 1);
  add('back\\slash "quoted"', 4, () => 2);
  add('(blank)', 6, () => 3);
  add(null, 7, () => 4);
  add(';=1+1', 2, () => 5);
  add('\n=cmd', 2, () => 6);
  add('\uFF1D1+1', 2, () => 7);
  add('Ünïcödé ✓ 日本', 2, () => 8);
  add('no-break\u00a0', 3, () => 9);
  add('tab\there\r\n', 3, () => 10);
  fs.writeFileSync(EDGE, lines.join('\n') + '\n');
}

/** The same instants written with Z, with offsets and with fractions, as CSV and as JSON Lines. */
const STAMPS = [
  '2021-03-28T00:30:00Z',
  '2021-03-28T03:30:00+02:00',
  '2021-10-31T00:59:59.250Z',
  '2021-10-31T02:30:00+01:00',
  '2021-11-07T01:30:00-05:00',
];

let stack: Stack;
let analyst: Identity;

beforeAll(async () => {
  writeEdge();
  fs.writeFileSync(STAMPS_CSV, ['n,at', ...STAMPS.map((s, i) => `${i},${s}`)].join('\n') + '\n');
  fs.writeFileSync(STAMPS_JSON, STAMPS.map((s, i) => JSON.stringify({ n: i, at: s })).join('\n') + '\n');
  stack = await startStackWithData({
    extra: async (env) => {
      const { runCli } = await import('./support/quarry-process');
      for (const args of [
        ['index', 'load', 'edge', EDGE],
        ['index', 'load', 'weather', path.join(VEGA, 'seattle-weather.csv')],
        ['index', 'load', 'birdstrikes', path.join(VEGA, 'birdstrikes.csv')],
        ['index', 'load', 'stamps_csv', STAMPS_CSV],
        ['index', 'load', 'stamps_json', STAMPS_JSON],
      ]) {
        const res = await runCli(args, env);
        if (res.code !== 0) throw new Error(`${args.join(' ')}: ${res.stderr}`);
      }
    },
  });
  analyst = await createIdentity(stack.dataDir, 'analyst', { indexes: '*' });
}, 180_000);

afterAll(async () => {
  await stack?.quarry.stop();
  fs.rmSync(work, { recursive: true, force: true });
});

const call = <T>(method: string, params: unknown, who: Identity = analyst): Promise<T> =>
  stack.data<T>(who, method, params);

async function refusal(method: string, params: unknown): Promise<{ code: number; detail: string }> {
  const res = await stack.call(analyst, method, params);
  expect(res.error).toBeDefined();
  return { code: res.error!.code, detail: res.error!.data.detail };
}

const crosstab = <T>(params: Record<string, unknown>) => call<Answer<T>>('CROSSTAB.EXECUTE', params);
const count = async (index: string, query: string) =>
  (await call<{ total: number }>('QUERIES.EXECUTE', { index, query, pageSize: 1 })).total;

async function duck(sql: string): Promise<Array<Record<string, unknown>>> {
  const db = await DuckDBInstance.create();
  const c = await db.connect();
  try {
    return (await c.runAndReadAll(sql)).getRowObjectsJS() as Array<Record<string, unknown>>;
  } finally {
    c.closeSync();
    db.closeSync();
  }
}

describe('numbers as the engine computed them', () => {
  it('Average of IMDB Rating by MPAA Rating: every digit of the exact mean, in JSON, CSV and XLSX', async () => {
    const params = {
      index: 'movies',
      rows: ['MPAA Rating'],
      totals: [{ aggregationType: 'Average', field: 'IMDB Rating' }],
    };
    const expected = new Map(
      (
        await duck(
          // The compensated sum over the count: the same in any order. DuckDB's plain avg adds in thread
          // order and says ...525 for R, where exact rational arithmetic gives ...527.
          `SELECT "MPAA Rating" AS k, fsum("IMDB Rating") / count("IMDB Rating") AS a FROM read_json_auto('${path.join(VEGA, 'movies.json')}') GROUP BY 1`,
        )
      ).map((r) => [r.k === null || r.k === '' ? null : String(r.k), r.a as number]),
    );
    const json = (await crosstab<JsonTable>({ ...params, format: 'json' })).data;
    expect(json.rows.find((r) => r.key[0] === 'R')?.total[0]).toBe(6.431720430107527);
    for (const row of json.rows) expect(row.total[0]).toBe(expected.get(row.key[0] as string | null));

    const csv = parseCsv((await crosstab<string>({ ...params, format: 'csv' })).data) as string[][];
    for (const [label, value] of csv.slice(1, -1))
      expect(Number(value)).toBe(expected.get(label === '(blank)' ? null : label));

    const xlsx = await crosstab<string>({ ...params, format: 'xlsx' });
    const wb = XLSX.read(Buffer.from(xlsx.data, 'base64'), { type: 'buffer' });
    const grid = XLSX.utils.sheet_to_json<unknown[]>(wb.Sheets[wb.SheetNames[0]], { header: 1, raw: true });
    const r = grid.find((line) => line[0] === 'R');
    expect(r?.[1]).toBe(6.431720430107527);
  });

  it('Min and Max of ±999999999999.99 are those values, not ∓1e12, in JSON, CSV and HTML', async () => {
    const params = {
      index: 'edge',
      rows: ['label'],
      totals: [
        { aggregationType: 'Min', field: 'amount' },
        { aggregationType: 'Max', field: 'amount' },
      ],
    };
    const json = (await crosstab<JsonTable>({ ...params, format: 'json' })).data;
    expect(json.rows.find((r) => r.key[0] === 'alpha ')?.total).toEqual([-999999999999.99, 999999999999.99]);
    expect(json.grandTotal).toEqual([-999999999999.99, 999999999999.99]);
    const csv = (await crosstab<string>({ ...params, format: 'csv' })).data;
    expect(csv).toContain('-999999999999.99,999999999999.99');
    const html = (await crosstab<string>({ ...params, format: 'html' })).data;
    expect(html).toContain('999999999999.99');
    expect(html).not.toContain('1000000000000');
  });
});

describe('drill queries that find their cell', () => {
  it('a key with a trailing blank: its query counts its 30 records alone and after AND', async () => {
    const json = (
      await crosstab<JsonTable>({
        index: 'edge',
        rows: ['label'],
        totals: [{ aggregationType: 'Count' }],
        format: 'json',
      })
    ).data;
    for (const row of json.rows) {
      expect(row.query).not.toBeNull();
      expect(await count('edge', row.query!)).toBe(row.total[0]);
      expect(await count('edge', `amount:* AND ${row.query}`)).toBe(row.total[0]);
    }
    const alpha = json.rows.find((r) => r.key[0] === 'alpha ')!;
    expect(alpha.total[0]).toBe(30);
    expect(await count('edge', `(*) AND ${alpha.query}`)).toBe(30);
  });

  it('dayOfWeek over four years of days: every row has a query that counts exactly its cell', async () => {
    const json = (
      await crosstab<JsonTable>({
        index: 'weather',
        rows: [{ field: 'date', dateGroup: 'dayOfWeek' }],
        columns: [{ field: 'weather' }],
        totals: [{ aggregationType: 'Count' }],
        timeZone: 'Europe/Paris',
        format: 'json',
      })
    ).data;
    expect(json.rows).toHaveLength(7);
    for (const row of json.rows) {
      expect(row.query).not.toBeNull();
      expect(await count('weather', row.query!)).toBe(row.total[0]);
      const j = json.columns.findIndex((c) => c[0] === 'rain');
      expect(await count('weather', `${row.query} AND ${json.columnQueries[j]}`)).toBe(row.cells[j][0] ?? 0);
    }
  });

  it('hourOfDay of timestamps in a zone with daylight saving: each hour counts its records', async () => {
    for (const timeZone of ['Europe/Paris', 'America/New_York', 'UTC']) {
      const json = (
        await crosstab<JsonTable>({
          index: 'edge',
          rows: [{ field: 'hour', dateGroup: 'hourOfDay' }],
          totals: [{ aggregationType: 'Count' }],
          timeZone,
          format: 'json',
        })
      ).data;
      const sum = json.rows.reduce((a, r) => a + (r.total[0] ?? 0), 0);
      expect(sum).toBe(json.grandTotal[0]);
      for (const row of json.rows) expect(await count('edge', row.query!)).toBe(row.total[0]);
    }
  });

  it('a date part with a bad value, part or zone is a 400 naming it', async () => {
    expect((await refusal('QUERIES.EXECUTE', { index: 'weather', query: 'date:@dayOfWeek=8' })).detail).toMatch(
      /dayOfWeek is 1 to 7, not 8/,
    );
    expect((await refusal('QUERIES.EXECUTE', { index: 'weather', query: 'date:@weekday=1' })).detail).toMatch(
      /is not a date part/,
    );
    expect(
      (await refusal('QUERIES.EXECUTE', { index: 'weather', query: 'date:@hourOfDay=1@Mars\\/Base' })).detail,
    ).toMatch(/Unknown time zone "Mars\/Base"/);
  });

  it('* OR *:* is every record, as *:* alone is', async () => {
    const all = await count('movies', '*:*');
    expect(all).toBeGreaterThan(3000);
    expect(await count('movies', '* OR *:*')).toBe(all);
    expect(await count('movies', 'NOT *:*')).toBe(0);
  });
});

describe('counts a restricted user sees', () => {
  it('INDEXES.FIND gives a realm user the count of the records it may read, as a search counts them', async () => {
    const realmUser = await createIdentity(stack.dataDir, 'realm-user', {
      indexes: '*',
      realms: [{ index: 'movies', query: 'MPAA\\ Rating:R' }],
    });
    const found = await call<{ indexes: Array<{ name: string; recordCount: number }> }>(
      'INDEXES.FIND',
      { searchText: 'movies' },
      realmUser,
    );
    const searched = await call<{ total: number }>('QUERIES.EXECUTE', { index: 'movies', pageSize: 1 }, realmUser);
    expect(searched.total).toBeGreaterThan(0);
    expect(found.indexes.find((i) => i.name === 'movies')?.recordCount).toBe(searched.total);
  });
});

describe('bad bins and hostile labels', () => {
  it('a bin too fine for the data is a 400 naming the axis’s bin, not an infinite key', async () => {
    const { code, detail } = await refusal('CROSSTAB.EXECUTE', {
      index: 'edge',
      rows: [{ field: 'amount', bin: { width: 1e-300, origin: -9007199254740991 } }],
      totals: [{ aggregationType: 'Count' }],
      format: 'json',
    });
    expect(code).toBe(400);
    expect(detail).toMatch(/^rows\[0\]\.bin: /);
  });

  it('CSV neutralises every cell a spreadsheet would run, and the literal (blank) differs from a blank key', async () => {
    const params = { index: 'edge', rows: ['label'], totals: [{ aggregationType: 'Count' }] };
    const csv = parseCsv((await crosstab<string>({ ...params, format: 'csv' })).data) as string[][];
    const labels = csv.slice(1, -1).map((l) => l[0]);
    for (const hostile of [';=1+1', '\n=cmd', '\uFF1D1+1']) expect(labels).toContain(`'${hostile}`);
    expect(labels).toContain('(blank)');
    expect(labels).toContain('"(blank)"');
    const html = (await crosstab<string>({ ...params, format: 'html' })).data;
    const heads = elements(parseHtml(html), 'th').map(text);
    expect(heads).toContain('(blank)');
    expect(heads).toContain('"(blank)"');
    // Each label names one key: as many distinct labels as keys.
    expect(new Set(labels).size).toBe(labels.length);
  });
});

describe('loading', () => {
  it('ISO timestamps with Z, offsets and fractions load as the same dates from CSV and from JSON', async () => {
    const read = async (index: string) =>
      await call<{ fields: Array<{ name: string; type: string }>; records: Array<Record<string, unknown>> }>(
        'QUERIES.EXECUTE',
        { index, pageSize: 10, sort: [{ field: 'n', direction: 'asc' }] },
      );
    const fromCsv = await read('stamps_csv');
    const fromJson = await read('stamps_json');
    expect(fromCsv.fields.find((f) => f.name === 'at')?.type).toBe('date');
    expect(fromJson.fields.find((f) => f.name === 'at')?.type).toBe('date');
    expect(fromCsv.records).toEqual(fromJson.records);
    // Each is the instant its text names.
    expect(fromCsv.records.map((r) => Date.parse(String(r.at)))).toEqual(
      STAMPS.map((s) => Math.floor(Date.parse(s) / 1000) * 1000),
    );
  });
});

describe('charts say what each mark is', () => {
  it('a Treemap names each rectangle and its value, and the PNG draws them', async () => {
    const params = {
      index: 'birdstrikes',
      rows: ['Time of day'],
      totals: [{ aggregationType: 'Sum', field: 'Cost Total $' }],
      chartType: 'Treemap',
      width: 640,
      height: 480,
    };
    const option = (
      await crosstab<{ series: Array<{ data: Array<{ name: string; label?: { formatter: string } }> }> }>({
        ...params,
        imageFormat: 'echarts',
      })
    ).data;
    for (const item of option.series[0].data) expect(item.label?.formatter).toMatch(/^\{b\}\n[\d.]+[KMB]?$/);
    // Where the SVG (the same option) writes each label, the PNG must show white text on the fill: a
    // window around each label's anchor holds near-white pixels, where a bare rectangle is one colour.
    const svg = (await crosstab<string>({ ...params, imageFormat: 'svg' })).data;
    const anchors = [...svg.matchAll(/<text[^>]*translate\(([\d.]+) ([\d.]+)\)[^>]*fill="#fff"[^>]*>([^<]+)/g)].map(
      (m) => ({ x: Math.round(Number(m[1])), y: Math.round(Number(m[2])), text: m[3] }),
    );
    expect(anchors.map((a) => a.text)).toEqual(expect.arrayContaining(['Dawn', 'Day', 'Dusk', 'Night']));
    const png = PNG.sync.read(Buffer.from((await crosstab<string>(params)).data, 'base64'));
    for (const { x, y, text: label } of anchors) {
      let white = 0;
      for (let dy = -6; dy <= 6; dy++)
        for (let dx = -12; dx <= 12; dx++) {
          const i = ((y + dy) * png.width + (x + dx)) * 4;
          if (png.data[i] > 230 && png.data[i + 1] > 230 && png.data[i + 2] > 230) white++;
        }
      expect({ label, white: white > 5 }).toEqual({ label, white: true });
    }
  });

  it('a Pareto of negative values draws its cumulative line by size, up to 100 %, and says so', async () => {
    const option = (
      await crosstab<{ series: Array<{ name: string; type: string; data: number[] }> }>({
        index: 'movies',
        rows: ['Major Genre'],
        totals: [
          { name: 'Loss', formula: '0 - [Sum (US Gross)]' },
          { aggregationType: 'Sum', field: 'US Gross' },
        ],
        chartType: 'Pareto2D',
        chartTotals: ['Loss'],
        imageFormat: 'echarts',
      })
    ).data;
    const line = option.series.find((s) => s.type === 'line')!;
    expect(line.name).toMatch(/\|value\|/);
    expect(line.data[line.data.length - 1]).toBe(100);
    expect(line.data[0]).toBeGreaterThan(0);
    for (let i = 1; i < line.data.length; i++) expect(line.data[i]).toBeGreaterThanOrEqual(line.data[i - 1]);
  });
});

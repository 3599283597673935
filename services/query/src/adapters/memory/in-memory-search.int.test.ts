import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import fc from 'fast-check';
import type { IndexEntry } from '@quarry/metadata-store';
import { parseQuery, type FieldDef, type FieldType, type QueryNode } from '@quarry/query-language';
import { SnapshotEngine } from '@quarry/snapshots';
import { createRootLogger } from '@quarry/logger';
import { builtEntry } from '@quarry/testkit';
import type { SearchPlan, SortKey } from '../../ports/search-index.port';
import { UnsupportedQuery } from './compile-predicate';
import { DuckDbSearchIndex, ONE_PASS_MAX_RECORDS } from '../duckdb/duckdb-search-index.adapter';
import { searchInMemory } from './in-memory-search';
import { InMemoryTable } from './in-memory-table';

const VEGA = path.resolve(__dirname, '..', '..', '..', '..', '..', 'node_modules', 'vega-datasets', 'data');
const NOW = Date.UTC(2026, 10, 23);

/**
 * Values where JS and DuckDB part ways unless the in-memory path is careful: text beyond the BMP next to
 * text above U+E000 (UTF-16 and UTF-8 order differ), letters whose lower case differs between engines
 * (İ), empty and missing text, integers beyond 2^53, NaN, ±Infinity (stored as missing) and -0, days before 1970 and
 * timestamps with microseconds on both sides of the epoch.
 */
function edgeCsv(rows: number): string {
  let seed = 12345;
  const rnd = (n: number) => {
    seed = (seed * 1103515245 + 12345) % 2 ** 31;
    return seed % n;
  };
  const texts = [
    'alpha beta',
    'Alpha',
    'ALPHA gamma',
    '𝒳 star',
    '\uE000 star',
    'İstanbul',
    'istanbul',
    'ΟΔΟΣ',
    'Οδοσ ΣΑΣ',
    'straße',
    'Zürich bank',
    "o'neil",
    'new york',
    'york new',
    '',
    '東京 tower',
    'b',
    'B',
    'beta-alpha',
  ];
  const codes = ['A1', 'a1', 'B22', 'b2', 'Z', ''];
  const ints = [
    '0',
    '-5',
    '7',
    '9007199254740993',
    '-9223372036854775808',
    '9223372036854775807',
    '42',
    '9007199254740992',
    '3',
  ];
  const doubles = [
    '0.5',
    '-0.0',
    '0',
    'NaN',
    'inf',
    '-inf',
    '1e300',
    '-1e300',
    '0.30000000000000004',
    '0.3',
    '2.5',
    '-2.5',
  ];
  const days = ['1969-12-31', '1970-01-01', '1900-02-28', '2020-02-29', '0001-01-01', '9999-12-31', '2001-01-14'];
  const times = [
    '1969-12-31 23:59:59.999500',
    '1970-01-01 00:00:00.000001',
    '1970-01-01 00:00:00',
    '2020-01-01 00:00:00.000300',
    '2020-01-01 00:00:00.001',
    '1950-06-15 12:30:00.123456',
    '2001-01-14 09:30:00',
  ];
  const pick = (xs: string[], missing = 8) => (rnd(missing) === 0 ? '' : xs[rnd(xs.length)]);
  const quote = (s: string) => `"${s.replace(/"/g, '""')}"`;
  const lines = ['label,text,code,n,x,flag,day,at'];
  for (let i = 0; i < rows; i++) {
    // An empty cell is a missing value; a quoted "" is empty text.
    const text = rnd(10) === 0 ? '' : quote(texts[rnd(texts.length)]);
    lines.push(
      [`r${i}`, text, pick(codes), pick(ints), pick(doubles), pick(['true', 'false']), pick(days), pick(times)].join(
        ',',
      ),
    );
  }
  return lines.join('\n');
}

interface Loaded {
  entry: IndexEntry;
  fields: FieldDef[];
  table: InMemoryTable;
}

describe('in-memory search: the same total and page as the SQL path', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'q-inmem-'));
  const engine = new SnapshotEngine(dir);
  const sql = new DuckDbSearchIndex(engine, { inMemoryMaxRecords: 0 });
  const data: Record<string, Loaded> = {};

  beforeAll(async () => {
    fs.writeFileSync(path.join(dir, 'edge.csv'), edgeCsv(3000));
    const sources = {
      movies: path.join(VEGA, 'movies.json'),
      birdstrikes: path.join(VEGA, 'birdstrikes.csv'),
      edge: path.join(dir, 'edge.csv'),
    };
    for (const [name, file] of Object.entries(sources)) {
      // The edge file's integers beyond 2^53, NaN and microsecond times would load as text (a load never
      // changes a value on its own): declared, they load as the types these tests exercise.
      const types: Record<string, FieldType> = name === 'edge' ? { n: 'integer', x: 'number', at: 'date' } : {};
      const entry = await builtEntry({ name, file, dataDir: dir, types, views: [] });
      const table = await InMemoryTable.load(engine, entry);
      if (!table) throw new Error(`${name} was not held in memory`);
      await table.readColumns(entry.fields.map((f) => f.name));
      data[name] = { entry, fields: entry.fields as FieldDef[], table };
    }
  }, 120000);

  afterAll(async () => {
    await engine.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('holds every field of the edge data with the type it is meant to test', () => {
    const types = Object.fromEntries(data.edge.fields.map((f) => [f.name, f.type]));
    expect(types).toEqual({
      label: 'string',
      text: 'string',
      code: 'string',
      n: 'integer',
      x: 'number',
      flag: 'boolean',
      day: 'date',
      at: 'date',
    });
    const x = data.edge.table.column('x');
    const values = x?.kind === 'number' ? x.values : [];
    // A snapshot stores NaN and the infinities as missing (they have no JSON form).
    expect(values.filter((v) => v !== null && !Number.isFinite(v))).toEqual([]);
    expect(values.filter((v) => v === null).length).toBeGreaterThan(values.length / 4);
    const n = data.edge.table.column('n');
    expect(n?.kind === 'integer' && n.values.some((v) => typeof v === 'bigint')).toBe(true);
    const at = data.edge.table.column('at');
    expect(at?.kind === 'date' && at.subMs.some((us) => us > 0)).toBe(true);
  });

  /** Compares the in-memory answer with both SQL paths (one statement, and count plus page). */
  async function same(name: string, plan: SearchPlan): Promise<number> {
    const { entry, table } = data[name];
    // The adapter names its engine on the page; the in-memory path answers the same page for it.
    const memory = { ...searchInMemory(table, plan), engine: 'duckdb' };
    const one = await sql.search(entry, plan);
    const two = await sql.search({ ...entry, recordCount: ONE_PASS_MAX_RECORDS + 1 }, plan);
    expect(memory).toEqual(one);
    expect(memory).toEqual(two);
    return memory.total;
  }

  function sorts(fields: FieldDef[]): fc.Arbitrary<SortKey[]> {
    const key = fc.record({
      field: fc.constantFrom(...fields.map((f) => f.name)),
      direction: fc.constantFrom<'asc' | 'desc'>('asc', 'desc'),
    });
    return fc
      .array(key, { maxLength: 3 })
      .map((keys) => keys.map((k) => ({ ...k, type: fields.find((f) => f.name === k.field)?.type ?? 'string' })));
  }

  function queries(leaf: fc.Arbitrary<string>): fc.Arbitrary<string> {
    return fc.letrec<{ q: string }>((tie) => ({
      q: fc.oneof(
        { depthSize: 'small' },
        leaf,
        fc.tuple(tie('q'), fc.constantFrom('AND', 'OR'), tie('q')).map(([a, op, b]) => `(${a}) ${op} (${b})`),
        tie('q').map((a) => `NOT (${a})`),
        fc.tuple(tie('q'), tie('q')).map(([a, b]) => `(${a}) -(${b})`),
      ),
    })).q;
  }

  const pages = fc.tuple(
    fc.oneof(fc.integer({ min: 0, max: 60 }), fc.integer({ min: 0, max: 12_000 })),
    fc.integer({ min: 1, max: 100 }),
  );

  async function property(name: string, leaf: fc.Arbitrary<string>, runs: number): Promise<void> {
    const { fields } = data[name];
    let found = 0;
    await fc.assert(
      fc.asyncProperty(queries(leaf), sorts(fields), pages, async (q, sort, [offset, limit]) => {
        const where = parseQuery(q, { fields, now: NOW });
        if ((await same(name, { where, sort, offset, limit })) > 0) found++;
      }),
      { numRuns: runs },
    );
    // Not a comparison of empty results.
    expect(found).toBeGreaterThan(runs / 4);
  }

  it('movies (real data): words, prefixes, phrases, text, number and date ranges, missing values, sorts and pages', async () => {
    const word = fc.constantFrom(
      'love',
      'star',
      'the',
      'drama',
      'comedy',
      'warner',
      'spielberg',
      'night',
      'r',
      'pg',
      'of',
      '13',
      'zzz',
    );
    const text = fc.constantFrom(
      'Title',
      'Director',
      '(Major Genre)',
      '(MPAA Rating)',
      'Distributor',
      'Source',
      '(Creative Type)',
    );
    const leaf = fc.oneof(
      word,
      word.map((w) => `${w.slice(0, 2)}*`),
      fc.tuple(word, word).map(([a, b]) => `"${a} ${b}"`),
      fc.tuple(text, word).map(([f, w]) => `${f}:${w}`),
      fc.tuple(text, word).map(([f, w]) => `${f}:${w.slice(0, 1)}*`),
      fc
        .tuple(
          text,
          fc.constantFrom(':>', ':>=', ':<', ':<='),
          fc.constantFrom('a', 'm', 'star', 'Zorro', 'é', 'pg-13'),
        )
        .map(([f, op, s]) => `${f}${op}${s}`),
      fc
        .tuple(text, fc.constantFrom('b', 'love'), fc.constantFrom('m', 'the\\ z'))
        .map(([f, a, b]) => `${f}:[${a} TO ${b}]`),
      text.map((f) => `${f}:*`),
      fc
        .tuple(fc.integer({ min: 1, max: 9 }), fc.integer({ min: 0, max: 3 }))
        .map(([lo, d]) => `(IMDB Rating):[${lo} TO ${lo + d}.5}`),
      fc.integer({ min: 0, max: 300_000_000 }).map((n) => `(US Gross):>${n}`),
      fc
        .tuple(
          fc.constantFrom(':', ':>', ':<=', ':>='),
          fc.constantFrom('90', '120.5', '-3', '1e300', '9007199254740993'),
        )
        .map(([op, v]) => `(Running Time min)${op}${v}`),
      fc.constantFrom(
        '(Release Date):1995',
        '(Release Date):>2000-06',
        '(Release Date):[1990-01-01 TO 1999-12-31]',
        '(Release Date):<=9999',
        '(Release Date):*',
        '(Release Date):<TODAY-10YEARS',
        '(Release Date):2010-07-16',
      ),
      fc.constantFrom('(Rotten Tomatoes Rating):*', '(IMDB Votes):[1000 TO *]', '*'),
    );
    await property('movies', leaf, 300);
  }, 300000);

  it('birdstrikes (real data): phrases, open ranges, costs and dates', async () => {
    const leaf = fc.oneof(
      fc.constantFrom(
        '(Wildlife Species):"turkey vulture"',
        'gull*',
        'dove',
        '(Origin State):texas',
        '(Origin State):new*',
        '(Wildlife Size):small',
        '(Aircraft Make Model):"boeing 737"',
      ),
      fc.integer({ min: 0, max: 200_000 }).map((n) => `(Cost Total $):>${n}`),
      fc.integer({ min: 0, max: 5000 }).map((n) => `(Speed IAS in knots):[${n % 300} TO *]`),
      fc.constantFrom('(Flight Date):1995', '(Flight Date):[1990-06 TO 1992]', '(Flight Date):>1999-12-31T12\\:00'),
    );
    await property('birdstrikes', leaf, 150);
  }, 300000);

  it('edge values: text order by code point, lower() of İ, big integers, NaN, ±Infinity, -0, dates and microseconds around 1970', async () => {
    const word = fc.constantFrom(
      'alpha',
      'beta',
      'star',
      '𝒳',
      'istanbul',
      'i',
      'stanbul',
      'straße',
      'bank',
      'neil',
      'york',
      'new',
      '東京',
      'b',
      'a1',
      'z',
      'r1',
    );
    const bound = fc.constantFrom('a', 'alpha', 'b', 'z', '𝒳', '\uE000', 'İ', 'i̇stanbul', 'straße', '東');
    const leaf = fc.oneof(
      word,
      word.map((w) => `${w.slice(0, 1)}*`),
      fc.tuple(fc.constantFrom('text', 'code', 'label'), word).map(([f, w]) => `${f}:${w}`),
      fc.tuple(word, word).map(([a, b]) => `text:"${a} ${b}"`),
      fc
        .tuple(fc.constantFrom('text', 'code'), fc.constantFrom(':>', ':>=', ':<', ':<='), bound)
        .map(([f, op, b]) => `${f}${op}${b}`),
      fc.tuple(fc.constantFrom('text', 'code'), bound, bound).map(([f, a, b]) => `${f}:[${a} TO ${b}]`),
      fc
        .tuple(
          fc.constantFrom(':>', ':>=', ':<', ':<=', ':'),
          fc.constantFrom(
            '0',
            '-5',
            '2.5',
            '-2.5',
            '9007199254740992',
            '9007199254740993',
            '9223372036854775807',
            '1e300',
            '-1e300',
          ),
        )
        .map(([op, v]) => `n${op}${v}`),
      fc
        .tuple(
          fc.constantFrom(':>', ':>=', ':<', ':<=', ':'),
          fc.constantFrom('0', '-0', '0.3', '0.30000000000000004', '1e300', '-1e300', '2.5', '1e308'),
        )
        .map(([op, v]) => `x${op}${v}`),
      fc.constantFrom('flag:true', 'flag:false', 'flag:>false', 'flag:<true', 'flag:>=true'),
      fc
        .tuple(
          fc.constantFrom('day', 'at'),
          fc.constantFrom(':', ':>', ':>=', ':<', ':<='),
          fc.constantFrom(
            '1969',
            '1970',
            '1969-12-31',
            '1970-01-01',
            '1970-01-01T00\\:00\\:00',
            '1969-12-31T23\\:59\\:59',
            '2020-01-01T00\\:00\\:00',
            '0001',
            '9999',
            '1950-06-15T12\\:30',
          ),
        )
        .map(([f, op, v]) => `${f}${op}${v}`),
      fc.constantFrom('text:*', 'code:*', 'n:*', 'x:*', 'flag:*', 'day:*', 'at:*', '*'),
    );
    await property('edge', leaf, 400);
  }, 300000);

  it('text bounds between characters where UTF-16 and code point order differ', async () => {
    const { fields } = data.edge;
    for (const q of [
      'text:>𝒳',
      'text:<𝒳',
      'text:>=\uE000',
      'text:<\uE000',
      'text:[\uE000 TO 𝒳]',
      'text:[𝒳 TO \uE000]',
    ]) {
      const where = parseQuery(q, { fields, now: NOW });
      expect({ q, total: await same('edge', { where, sort: [], offset: 0, limit: 3000 }) }).toEqual({
        q,
        total: expect.any(Number),
      });
    }
    // U+E000 sorts before U+1D4B3 in code points (DuckDB), after it in UTF-16 units (JS's <).
    const below = await same('edge', {
      where: parseQuery('text:[\uE000 TO 𝒳}', { fields, now: NOW }),
      sort: [],
      offset: 0,
      limit: 1,
    });
    expect(below).toBeGreaterThan(0);
  });

  it('a query folds capitals as DuckDB lower() folded the records: İstanbul, and a capital sigma ending a word', async () => {
    const { fields, table } = data.edge;
    const texts = table.records.map((r) => (JSON.parse(r) as { text?: string | null }).text);
    const cases: Array<[string, string[]]> = [
      ['İstanbul', ['İstanbul', 'istanbul']],
      ['ISTANBUL', ['İstanbul', 'istanbul']],
      ['text:İSTANBUL', ['İstanbul', 'istanbul']],
      ['ΟΔΟΣ', ['ΟΔΟΣ', 'Οδοσ ΣΑΣ']],
      ['"οδοσ ΣΑΣ"', ['Οδοσ ΣΑΣ']],
      // One word after a field is a word match there too.
      ['text:ΟΔΟΣ', ['ΟΔΟΣ', 'Οδοσ ΣΑΣ']],
      ['text:[ΟΔΟΣ TO ΟΔΟΣ]', ['ΟΔΟΣ']],
    ];
    for (const [q, holding] of cases) {
      const expected = texts.filter((t) => typeof t === 'string' && holding.includes(t)).length;
      expect(expected).toBeGreaterThan(0);
      const total = await same('edge', {
        where: parseQuery(q, { fields, now: NOW }),
        sort: [],
        offset: 0,
        limit: 3000,
      });
      expect({ q, total }).toEqual({ q, total: expected });
    }
  });

  it('a phrase never runs from one field into the next, nor from one record into the next', async () => {
    const { table, fields } = data.movies;
    const text = fields.filter((f) => f.type === 'string').map((f) => f.name);
    const words = text.map((f) => {
      const c = table.column(f);
      return c?.kind === 'text' ? c.words : [];
    });
    // The last word of a record's first text field, and the first word of the next field or record.
    const across: string[][] = [];
    for (let row = 0; row < 40; row++) {
      const [a, b] = [words[0][row], words[1][row]];
      const next = words[0][row + 1];
      if (a && b) across.push([a.trim().split(' ').pop() ?? '', b.trim().split(' ')[0]]);
      if (a && next) across.push([a.trim().split(' ').pop() ?? '', next.trim().split(' ')[0]]);
    }
    expect(across.length).toBeGreaterThan(40);
    for (const pair of across) {
      for (const prefix of [false, true]) {
        const where: QueryNode = { kind: 'match', fields: text, words: pair, prefix };
        await same('movies', { where, sort: [], offset: 0, limit: 10 });
      }
    }
  });

  it('matches over any set of text fields, not only the sets the parser builds', async () => {
    const { fields } = data.movies;
    const text = fields.filter((f) => f.type === 'string').map((f) => f.name);
    let found = 0;
    for (let i = 0; i < text.length; i++) {
      for (let j = i + 1; j < text.length; j++) {
        for (const [words, prefix] of [
          [['the'], false],
          [['pg'], false],
          [['dr'], true],
          [['the', 'l'], true],
          [['of', 'the'], false],
        ] as const) {
          const where: QueryNode = { kind: 'match', fields: [text[i], text[j]], words: [...words], prefix };
          if ((await same('movies', { where, sort: [], offset: 0, limit: 5 })) > 0) found++;
        }
      }
    }
    expect(found).toBeGreaterThan(20);
  });

  it('sorts every field both ways over every record, missing values last', async () => {
    for (const name of ['movies', 'edge']) {
      const { fields, entry } = data[name];
      for (const f of fields) {
        for (const direction of ['asc', 'desc'] as const) {
          await same(name, {
            where: { kind: 'all' },
            sort: [{ field: f.name, type: f.type, direction }],
            offset: 0,
            limit: entry.recordCount,
          });
        }
      }
    }
  }, 120000);

  it('a leaf it cannot promise to answer as SQL does is refused, and the adapter answers it through SQL', async () => {
    const { entry, table } = data.movies;
    // A number compared with a text column: the parser never builds it, an adapter must still not guess.
    const where: QueryNode = {
      kind: 'compare',
      field: 'Title',
      fieldType: 'number',
      op: 'gt',
      value: { type: 'number', value: 5 },
    };
    const plan: SearchPlan = { where, sort: [], offset: 0, limit: 5 };
    expect(() => searchInMemory(table, plan)).toThrow(UnsupportedQuery);
    const adapter = new DuckDbSearchIndex(engine);
    const outcome = (p: Promise<unknown>) =>
      p.then(
        (ok) => ({ ok }),
        (err: Error) => ({ err: err.message }),
      );
    const viaAdapter = await outcome(adapter.search(entry, plan));
    expect(viaAdapter).toEqual(await outcome(sql.search(entry, plan)));
  });

  it('charges word matches to the work limit before doing them: a phrase of common words goes to SQL', async () => {
    const { entry, table, fields } = data.movies;
    const phrases = parseQuery(Array.from({ length: 20 }, () => '"of the"').join(' OR '), { fields, now: NOW });
    const ranges = parseQuery(Array.from({ length: 20 }, (_, i) => `(IMDB Rating):>${i / 4}`).join(' OR '), {
      fields,
      now: NOW,
    });
    const plan = (where: QueryNode): SearchPlan => ({ where, sort: [], offset: 0, limit: 5 });
    // The same leaves: the scan alone fits in the limit; the phrases' substring tests do not.
    const limit = 20 * table.size + 100;
    expect(() => searchInMemory(table, plan(ranges), limit)).not.toThrow();
    expect(() => searchInMemory(table, plan(phrases), limit)).toThrow(UnsupportedQuery);
    expect(() => searchInMemory(table, plan(phrases), 1000 * table.size)).not.toThrow();
    const adapter = new DuckDbSearchIndex(engine, { inMemoryMaxWork: limit, awaitMemory: true });
    const sqlCalls = jest.spyOn(engine, 'all');
    expect(await adapter.search(entry, plan(phrases))).toEqual(await sql.search(entry, plan(phrases)));
    expect(sqlCalls).toHaveBeenCalledTimes(2);
    sqlCalls.mockRestore();
  });

  it('text with an unpaired surrogate is answered through SQL (DuckDB reads a U+FFFD there)', async () => {
    const { entry, table } = data.edge;
    for (const where of [
      { kind: 'compare', field: 'text', fieldType: 'string', op: 'gt', value: { type: 'string', value: '\ud800' } },
      { kind: 'match', fields: ['text'], words: ['\udc00x'], prefix: true },
    ] as QueryNode[]) {
      const plan: SearchPlan = { where, sort: [], offset: 0, limit: 5 };
      expect(() => searchInMemory(table, plan)).toThrow(UnsupportedQuery);
      expect(await new DuckDbSearchIndex(engine, { awaitMemory: true }).search(entry, plan)).toEqual(
        await sql.search(entry, plan),
      );
    }
  });

  describe('what the adapter holds', () => {
    afterEach(() => jest.restoreAllMocks());

    it('reads a version into memory once, in the background, and a newer version of the index in its place', async () => {
      const loads = jest.spyOn(InMemoryTable, 'load');
      const adapter = new DuckDbSearchIndex(engine);
      const plan: SearchPlan = {
        where: parseQuery('love', { fields: data.movies.fields, now: NOW }),
        sort: [{ field: 'Title', type: 'string', direction: 'desc' }],
        offset: 0,
        limit: 5,
      };
      const v1 = data.movies.entry;
      const want = await sql.search(v1, plan);
      // The first searches do not wait for it: SQL answers them.
      const sqlCalls = jest.spyOn(engine, 'all');
      const answers = await Promise.all([adapter.search(v1, plan), adapter.search(v1, plan), adapter.search(v1, plan)]);
      expect(answers).toEqual([want, want, want]);
      expect(sqlCalls).toHaveBeenCalledTimes(3);
      expect(loads).toHaveBeenCalledTimes(1);
      await adapter.memory.whenHeld(v1);
      // Held, its columns read on the next search, then answered without SQL.
      await adapter.search(v1, plan);
      await adapter.memory.whenRead(v1);
      sqlCalls.mockClear();
      expect(await adapter.search(v1, plan)).toEqual(want);
      expect(sqlCalls).not.toHaveBeenCalled();
      // Version 2 is another snapshot file (here the birdstrikes one under the movies name).
      const v2 = { ...data.birdstrikes.entry, name: 'movies', version: 2 };
      const dove: SearchPlan = {
        ...plan,
        sort: [],
        where: parseQuery('dove', { fields: data.birdstrikes.fields, now: NOW }),
      };
      const after = await adapter.search(v2, dove);
      expect(after.total).toBeGreaterThan(0);
      expect(loads).toHaveBeenCalledTimes(2);
      await adapter.memory.whenHeld(v2);
      expect(await adapter.search(v2, dove)).toEqual(after);
      expect(loads).toHaveBeenCalledTimes(2);
      // Dropped: forgotten, and read again when a new load of the name is searched.
      adapter.forget('movies');
      await adapter.search(v1, plan);
      expect(loads).toHaveBeenCalledTimes(3);
    });

    it('holds no more than its memory budget: the least recently searched version goes first, and stays out a while', async () => {
      const bytes = (name: string) => data[name].table.approxBytes();
      const budget = bytes('movies') + bytes('birdstrikes') + 1;
      const all: SearchPlan = { where: { kind: 'all' }, sort: [], offset: 0, limit: 1 };
      for (const reloadAfterEvictionMs of [60_000, 0]) {
        const loads = jest.spyOn(InMemoryTable, 'load');
        const lines: Array<{ msg: string; index: string }> = [];
        const log = createRootLogger('info', {
          write: (line: string) => lines.push(JSON.parse(line) as { msg: string; index: string }),
        });
        const adapter = new DuckDbSearchIndex(engine, { inMemoryBudgetBytes: budget, reloadAfterEvictionMs, log });
        await adapter.memory.whenHeld(data.birdstrikes.entry);
        await new Promise((r) => setTimeout(r, 5));
        await adapter.memory.whenHeld(data.movies.entry);
        expect(adapter.memory.holding()).toEqual(['birdstrikes@1', 'movies@1']);
        // Edge needs room: birdstrikes, searched longest ago, goes; movies stays.
        await adapter.memory.whenHeld(data.edge.entry);
        await adapter.memory.whenHeld(data.movies.entry);
        expect(adapter.memory.holding().sort()).toEqual(['edge@1', 'movies@1']);
        expect(loads).toHaveBeenCalledTimes(3);
        // What an operator sizing QUARRY_MEMORY_INDEX_MB reads.
        expect(lines.map((l) => `${l.msg}: ${l.index}`)).toEqual([
          'index held in memory: birdstrikes',
          'index held in memory: movies',
          'index let go from memory for room: birdstrikes',
          'index held in memory: edge',
        ]);
        // Searched again at once, it is read in again only once the wait after an eviction is over.
        await adapter.memory.whenHeld(data.birdstrikes.entry);
        expect(loads).toHaveBeenCalledTimes(reloadAfterEvictionMs === 0 ? 4 : 3);
        expect(adapter.memory.holding()).toContain(reloadAfterEvictionMs === 0 ? 'birdstrikes@1' : 'edge@1');
        expect(await adapter.search(data.birdstrikes.entry, all)).toEqual(
          await sql.search(data.birdstrikes.entry, all),
        );
        expect(await adapter.search(data.movies.entry, all)).toEqual(await sql.search(data.movies.entry, all));
        loads.mockRestore();
      }
      // A version larger than the whole budget is never held.
      const tiny = new DuckDbSearchIndex(engine, { inMemoryBudgetBytes: 1000 });
      await tiny.memory.whenHeld(data.movies.entry);
      const sqlCalls = jest.spyOn(engine, 'all');
      expect(await tiny.search(data.movies.entry, all)).toEqual(await sql.search(data.movies.entry, all));
      expect(sqlCalls).toHaveBeenCalledTimes(2);
    });

    it('a query with more leaf tests than a scan should run in one go goes to SQL', async () => {
      const adapter = new DuckDbSearchIndex(engine);
      const { entry, fields } = data.birdstrikes;
      const where = parseQuery(Array.from({ length: 1024 }, (_, i) => `(Cost Total $):>${i * 100}`).join(' OR '), {
        fields,
        now: NOW,
      });
      const plan: SearchPlan = { where, sort: [], offset: 0, limit: 3 };
      await adapter.memory.whenHeld(entry);
      await adapter.search(entry, plan);
      await adapter.memory.whenRead(entry);
      const sqlCalls = jest.spyOn(engine, 'all');
      expect(await adapter.search(entry, plan)).toEqual(await sql.search(entry, plan));
      // Twice: the adapter's statement and the comparison's.
      expect(sqlCalls).toHaveBeenCalledTimes(2);
    });

    it('counts what searches build against the budget: others go first, then the version itself if it alone is over', async () => {
      // The estimate made when a version is read in is wrong here on purpose: growth must still be counted.
      jest.spyOn(InMemoryTable.prototype, 'approxBytes').mockReturnValue(1);
      const records = async (name: string) => (await InMemoryTable.load(engine, data[name].entry))?.heldBytes() ?? NaN;
      const [movies, birdstrikes] = [await records('movies'), await records('birdstrikes')];
      const words: SearchPlan = {
        where: parseQuery('star OR love', { fields: data.movies.fields, now: NOW }),
        sort: [{ field: 'Title', type: 'string', direction: 'asc' }],
        offset: 0,
        limit: 5,
      };
      const want = await sql.search(data.movies.entry, words);

      const two = new DuckDbSearchIndex(engine, {
        inMemoryBudgetBytes: movies + birdstrikes + 1024,
        awaitMemory: true,
      });
      await two.memory.whenHeld(data.birdstrikes.entry);
      await two.memory.whenHeld(data.movies.entry);
      expect(two.memory.holding()).toEqual(['birdstrikes@1', 'movies@1']);
      // Movies' columns, word indexes and ranks do not fit beside birdstrikes: birdstrikes goes.
      expect(await two.search(data.movies.entry, words)).toEqual(want);
      expect(two.memory.holding()).toEqual(['movies@1']);

      const one = new DuckDbSearchIndex(engine, { inMemoryBudgetBytes: movies + 1024, awaitMemory: true });
      await one.memory.whenHeld(data.movies.entry);
      expect(one.memory.holding()).toEqual(['movies@1']);
      // Alone over the budget once searched: let go for good, and SQL answers.
      expect(await one.search(data.movies.entry, words)).toEqual(want);
      expect(one.memory.holding()).toEqual([]);
      const loads = jest.spyOn(InMemoryTable, 'load');
      const sqlCalls = jest.spyOn(engine, 'all');
      expect(await one.search(data.movies.entry, words)).toEqual(want);
      expect(sqlCalls).toHaveBeenCalledTimes(1);
      expect(loads).not.toHaveBeenCalled();
    });

    it('reads one version in at a time, however many are first searched together', async () => {
      const original = InMemoryTable.load.bind(InMemoryTable);
      let running = 0;
      let most = 0;
      jest.spyOn(InMemoryTable, 'load').mockImplementation(async (e, ref) => {
        most = Math.max(most, ++running);
        try {
          return await original(e, ref);
        } finally {
          running--;
        }
      });
      const adapter = new DuckDbSearchIndex(engine);
      const all: SearchPlan = { where: { kind: 'all' }, sort: [], offset: 0, limit: 2 };
      await Promise.all(['movies', 'birdstrikes', 'edge'].map((n) => adapter.search(data[n].entry, all)));
      await Promise.all(['movies', 'birdstrikes', 'edge'].map((n) => adapter.memory.whenHeld(data[n].entry)));
      expect(adapter.memory.holding().sort()).toEqual(['birdstrikes@1', 'edge@1', 'movies@1']);
      expect(most).toBe(1);
    });

    it('lets an older version go once a newer one is searched, even one too large to hold', async () => {
      const adapter = new DuckDbSearchIndex(engine, { inMemoryMaxRecords: data.movies.entry.recordCount });
      const v1 = { ...data.movies.entry, name: 'grows' };
      await adapter.memory.whenHeld(v1);
      expect(adapter.memory.holding()).toEqual(['grows@1']);
      const v2 = { ...data.edge.entry, name: 'grows', version: 2, recordCount: data.movies.entry.recordCount + 1 };
      const plan: SearchPlan = { where: { kind: 'all' }, sort: [], offset: 0, limit: 2 };
      expect(await adapter.search(v2, plan)).toEqual(await sql.search(data.edge.entry, plan));
      expect(adapter.memory.holding()).toEqual([]);
    });

    it('keeps every search on SQL with a record limit or a budget of 0, empty indexes too', async () => {
      const loads = jest.spyOn(InMemoryTable, 'load');
      const plan: SearchPlan = { where: { kind: 'all' }, sort: [], offset: 0, limit: 2 };
      for (const options of [{ inMemoryMaxRecords: 0 }, { inMemoryBudgetBytes: 0 }]) {
        const adapter = new DuckDbSearchIndex(engine, options);
        await adapter.search({ ...data.edge.entry, recordCount: 0 }, plan);
        await adapter.search(data.movies.entry, plan);
        await adapter.memory.whenHeld(data.movies.entry);
      }
      expect(loads).not.toHaveBeenCalled();
    });

    it('a column that fails to read stays on SQL for that version, and is not read again on every search', async () => {
      const table = await InMemoryTable.load(engine, data.movies.entry);
      if (!table) throw new Error('not held');
      const reads = jest
        .spyOn(engine, 'withConnection')
        .mockRejectedValueOnce(new Error('Conversion Error: date out of range'));
      await table.readColumns(['Title']);
      expect(table.holds(['Title'])).toBe(false);
      await table.readColumns(['Title']);
      expect(reads).toHaveBeenCalledTimes(1);
      await table.readColumns(['Director']);
      expect(table.holds(['Director'])).toBe(true);
      expect(reads).toHaveBeenCalledTimes(2);
    });

    it('does not hold a version older than one it holds (a search from before a publish)', async () => {
      const loads = jest.spyOn(InMemoryTable, 'load');
      const adapter = new DuckDbSearchIndex(engine);
      const v2 = { ...data.movies.entry, version: 2 };
      await adapter.memory.whenHeld(v2);
      const plan: SearchPlan = { where: { kind: 'all' }, sort: [], offset: 0, limit: 2 };
      expect(await adapter.search({ ...data.edge.entry, name: 'movies', version: 1 }, plan)).toEqual(
        await sql.search(data.edge.entry, plan),
      );
      expect(loads).toHaveBeenCalledTimes(1);
    });

    it('searches waiting for the same columns share one read', async () => {
      const table = await InMemoryTable.load(engine, data.movies.entry);
      if (!table) throw new Error('not held');
      const reads = jest.spyOn(engine, 'withConnection');
      await Promise.all([
        table.readColumns(['Title', 'Director']),
        table.readColumns(['Director']),
        table.readColumns(['Title']),
      ]);
      expect(reads).toHaveBeenCalledTimes(1);
      expect(table.holds(['Title', 'Director'])).toBe(true);
      await table.readColumns(['Title']);
      expect(reads).toHaveBeenCalledTimes(1);
    });

    it('keeps an index above the record limit on SQL', async () => {
      const loads = jest.spyOn(InMemoryTable, 'load');
      const adapter = new DuckDbSearchIndex(engine, { inMemoryMaxRecords: data.movies.entry.recordCount - 1 });
      const plan: SearchPlan = { where: { kind: 'all' }, sort: [], offset: 0, limit: 3 };
      expect(await adapter.search(data.movies.entry, plan)).toEqual(await sql.search(data.movies.entry, plan));
      expect(loads).not.toHaveBeenCalled();
      await adapter.search(data.edge.entry, plan);
      expect(loads).toHaveBeenCalledTimes(1);
    });

    it('answers through SQL when the version cannot be read into memory', async () => {
      jest.spyOn(InMemoryTable, 'load').mockRejectedValue(new Error('out of memory'));
      const adapter = new DuckDbSearchIndex(engine);
      const plan: SearchPlan = {
        where: parseQuery('star*', { fields: data.movies.fields, now: NOW }),
        sort: [],
        offset: 0,
        limit: 7,
      };
      expect(await adapter.search(data.movies.entry, plan)).toEqual(await sql.search(data.movies.entry, plan));
    });

    it('a call whose deadline has passed is refused with TIMEOUT, not answered', async () => {
      const adapter = new DuckDbSearchIndex(engine);
      const plan: SearchPlan = { where: { kind: 'all' }, sort: [], offset: 0, limit: 3, signal: AbortSignal.abort() };
      await expect(adapter.search(data.movies.entry, plan)).rejects.toMatchObject({ code: 'TIMEOUT' });
    });
  });
});

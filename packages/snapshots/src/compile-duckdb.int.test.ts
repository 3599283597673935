import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import fc from 'fast-check';
import { parseQuery, words, type FieldDef } from '@quarry/query-language';
import { buildSnapshot } from './build-snapshot';
import { compileWhere } from './compile-duckdb';
import { MAX_LISTED_VALUES } from './single-word-fields';
import { SnapshotEngine, type LoadedTable, type SnapshotRef } from './snapshot-engine';
import { ident } from './sql';

const VEGA = path.resolve(__dirname, '..', '..', '..', 'node_modules', 'vega-datasets', 'data');

/** Single-word values in several cases and scripts, a field too varied to list, and one that is not single-word. */
function syntheticRecords(): Array<Record<string, unknown>> {
  const cities = ['Paris', 'PARIS', 'paris', 'Zürich', 'ZÜRICH', 'Århus', 'straße', 'Oslo2', '', null];
  const mixed = ['İstanbul', 'New York', 'oslo', 'O’Neil', 'Rio-de-Janeiro', null];
  return Array.from({ length: MAX_LISTED_VALUES + 500 }, (_, i) => ({
    city: cities[i % cities.length],
    ident: `Id${i}x`,
    mixed: mixed[(i * 7) % mixed.length],
    code: ['A1', 'a1', 'B22', 'b2', null][(i * 3) % 5],
  }));
}

const RESERVED = new Set(['and', 'or', 'not', 'to']);
/** Real flights: 5,000 have every airport word the queries draw on, and compile four times faster than 20,000. */
const FLIGHTS = path.join(VEGA, 'flights-5k.json');

describe('compileWhere on single-word fields: the same records as the words column', () => {
  let dir: string;
  let engine: SnapshotEngine;
  const loaded: Record<string, { ref: SnapshotRef; table: LoadedTable; fields: FieldDef[] }> = {};

  beforeAll(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'q-words-'));
    fs.writeFileSync(path.join(dir, 'synthetic.json'), JSON.stringify(syntheticRecords()));
    engine = new SnapshotEngine(dir);
    const sources = {
      flights: FLIGHTS,
      movies: path.join(VEGA, 'movies.json'),
      synthetic: path.join(dir, 'synthetic.json'),
    };
    for (const [name, file] of Object.entries(sources)) {
      const built = await buildSnapshot({ name, file, dataDir: dir, types: {}, views: [] });
      const ref = { name, version: 1, snapshot: built.snapshot, fields: built.fields };
      loaded[name] = { ref, table: await engine.table(ref), fields: built.fields };
      // The same records in DuckDB's format (as a large load writes them): a single-word field's words
      // column there is computed when read, not stored.
      // Another index name: a newer version of the same index would retire the first.
      const other = `${name}_attached`;
      const attached = await buildSnapshot({
        name: other,
        file,
        dataDir: dir,
        types: {},
        views: [],
        attachMinRecords: 0,
      });
      const aref = { name: other, version: 1, snapshot: attached.snapshot, fields: attached.fields };
      loaded[`${name}@attached`] = { ref: aref, table: await engine.table(aref), fields: attached.fields };
    }
  }, 120000);

  afterAll(async () => {
    await engine?.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('learns which text fields hold one word per value, and lists the stored values per word when they are few', () => {
    const flights = loaded.flights.table.singleWord;
    expect([...flights.keys()].sort()).toEqual(['destination', 'origin']);
    expect(flights.get('origin')?.values?.get('sfo')).toEqual(['SFO']);
    // Movies: every text field has some value of several words (titles, "PG-13", "Romantic Comedy").
    expect(loaded.movies.table.singleWord.size).toBe(0);
    const synthetic = loaded.synthetic.table.singleWord;
    expect([...synthetic.keys()].sort()).toEqual(['city', 'code', 'ident']);
    expect(synthetic.get('city')?.values?.get('paris')).toEqual(['PARIS', 'Paris', 'paris']);
    expect(synthetic.get('city')?.values?.get('zürich')).toEqual(['ZÜRICH', 'Zürich']);
    expect(synthetic.get('city')?.values?.has('')).toBe(false);
    // More distinct values than are worth listing: the words column answers instead.
    expect(synthetic.get('ident')).toEqual({});
    // Learnt from the source before the table is written, an attached version's facts are the same.
    for (const name of ['flights', 'movies', 'synthetic'])
      expect(loaded[`${name}@attached`].table.singleWord).toEqual(loaded[name].table.singleWord);
  });

  /** Record ids matching a query, compiled with or without what the load learnt. */
  async function ids(name: string, query: string, useShapes: boolean): Promise<number[]> {
    const { table, fields } = loaded[name];
    const where = compileWhere(parseQuery(query, { fields, now: Date.now() }), useShapes ? table : {});
    const rows = await engine.all(
      `SELECT __rowid AS id FROM ${ident(table.table)} WHERE ${where.sql} ORDER BY __rowid`,
      where.params,
    );
    return rows.map((r) => Number(r.id));
  }

  /** The data's own words (up to 150 per text field, as JS splits them), plus some that are nowhere. */
  async function vocabulary(name: string): Promise<{ text: string[]; words: string[] }> {
    const { table, fields } = loaded[name];
    const text = fields.filter((f) => f.type === 'string').map((f) => f.name);
    const found = new Set<string>(['zzz', 'id12x', 'id4499x', 'york', 'new', 'i', 'stanbul', 'o', 'neil']);
    for (const f of text) {
      const rows = await engine.all(
        `SELECT DISTINCT ${ident(f)} AS v FROM ${ident(table.table)} WHERE ${ident(f)} IS NOT NULL ORDER BY v LIMIT 150`,
      );
      for (const r of rows) for (const w of words(String(r.v))) found.add(w);
    }
    return { text, words: [...found].filter((w) => !RESERVED.has(w)) };
  }

  const fieldRef = (f: string) => (/^[A-Za-z]+$/.test(f) ? f : `(${f})`);
  const recase = (w: string, how: number) =>
    how === 0 ? w : how === 1 ? w.toUpperCase() : w.charAt(0).toUpperCase() + w.slice(1);

  for (const name of ['flights', 'synthetic', 'movies']) {
    it(`${name}: random word, prefix and phrase queries give identical record ids both ways`, async () => {
      const { text, words: pool } = await vocabulary(name);
      const word = fc.tuple(fc.constantFrom(...pool), fc.integer({ min: 0, max: 2 })).map(([w, how]) => recase(w, how));
      const prefix = fc.tuple(word, fc.nat()).map(([w, n]) => `${w.slice(0, 1 + (n % w.length))}*`);
      const target = fc.option(fc.constantFrom(...text), { nil: undefined });
      const term = fc.oneof(
        fc.tuple(target, word).map(([f, w]) => (f ? `${fieldRef(f)}:${w}` : w)),
        fc.tuple(target, prefix).map(([f, w]) => (f ? `${fieldRef(f)}:${w}` : w)),
        fc.tuple(target, word, word).map(([f, a, b]) => (f ? `${fieldRef(f)}:"${a} ${b}"` : `"${a} ${b}"`)),
      );
      const query = fc.oneof(
        term,
        fc.tuple(term, term).map(([a, b]) => `${a} OR ${b}`),
        fc.tuple(term, term).map(([a, b]) => `NOT ${a} AND NOT ${b}`),
        fc.tuple(term, term).map(([a, b]) => `-(${a} ${b})`),
      );
      let nonEmpty = 0;
      await fc.assert(
        fc.asyncProperty(query, async (q) => {
          const words = await ids(name, q, false);
          const fast = await ids(name, q, true);
          if (fast.length > 0) nonEmpty++;
          expect({ q, ids: fast }).toEqual({ q, ids: words });
          // Attached, with the words columns it has (stored or computed): the records read in memory.
          expect({ q, ids: await ids(`${name}@attached`, q, false) }).toEqual({ q, ids: words });
          expect({ q, ids: await ids(`${name}@attached`, q, true) }).toEqual({ q, ids: words });
        }),
        { numRuns: 150, seed: 42 },
      );
      // Not a comparison of empty results: most queries find records.
      expect(nonEmpty).toBeGreaterThan(50);
    }, 120000);
  }

  it('Field:=value selects exactly the records whose text is that value, case and all, blanks never', async () => {
    const records = syntheticRecords();
    const { fields } = loaded.synthetic;
    for (const value of ['Paris', 'PARIS', 'Zürich', 'Oslo2', 'New York', 'O’Neil', 'Rio-de-Janeiro']) {
      const field = records.some((r) => r.city === value) ? 'city' : 'mixed';
      const escaped = value.replace(/[+\-!(){}[\]^"?:\\&|'/~* =<>]/g, (c) => `\\${c}`);
      const q = `${field}:=${escaped}`;
      expect(parseQuery(q, { fields, now: 0 })).toEqual({ kind: 'equals', field, value });
      const want = records.flatMap((r, i) => (r[field] === value ? [i] : []));
      expect(want.length).toBeGreaterThan(0);
      expect({ q, ids: await ids('synthetic', q, true) }).toEqual({ q, ids: want });
      const notWant = records.flatMap((r, i) => (r[field] !== value ? [i] : []));
      expect({ q, ids: await ids('synthetic', `NOT ${q}`, true) }).toEqual({ q, ids: notWant });
    }
  });

  it('integer comparisons with fractional, negative and huge bounds select the records plain JS selects', async () => {
    const records = JSON.parse(fs.readFileSync(FLIGHTS, 'utf8')) as Array<{
      delay: number;
    }>;
    const bound = fc.oneof(
      fc.integer({ min: -60, max: 400 }),
      fc.integer({ min: -120, max: 800 }).map((x) => x / 2),
      fc.constantFrom(1e300, -1e300, 2 ** 60),
    );
    const tests: Record<string, (a: number, b: number) => boolean> = {
      ':>': (d, x) => d > x,
      ':>=': (d, x) => d >= x,
      ':<': (d, x) => d < x,
      ':<=': (d, x) => d <= x,
      ':': (d, x) => d === x,
    };
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...Object.keys(tests)), bound, fc.boolean(), async (op, x, negate) => {
        // "delay:-5" reads as NOT delay:5 (a leading minus prohibits): a negative equality is a range.
        const q = `${negate ? 'NOT ' : ''}${op === ':' && x < 0 ? `delay:[${x} TO ${x}]` : `delay${op}${x}`}`;
        const want = records.flatMap((r, i) => (tests[op](r.delay, x) !== negate ? [i] : []));
        expect({ q, ids: await ids('flights', q, true) }).toEqual({ q, ids: want });
      }),
      { numRuns: 60, seed: 7 },
    );
  }, 60000);

  it('dates at the ends of the range compare instead of failing (year 9999 ends in 10000, which ISO writes "+010000")', async () => {
    const all = (await ids('movies', '*', true)).length;
    const dated = (await ids('movies', '(Release Date):*', true)).length;
    expect(await ids('movies', '(Release Date):9999', true)).toEqual([]);
    expect((await ids('movies', '(Release Date):<=9999', true)).length).toBe(dated);
    expect((await ids('movies', '(Release Date):[0001 TO 9999]', true)).length).toBe(dated);
    expect((await ids('movies', 'NOT (Release Date):>9999', true)).length).toBe(all);
    expect(dated).toBeGreaterThan(3000);
  });

  it('the fast path is taken: a word on a single-word field tests the stored values, not a substring', () => {
    const { table, fields } = loaded.flights;
    const where = compileWhere(parseQuery('origin:sfo OR destination:ORD*', { fields, now: Date.now() }), table);
    expect(where.sql).not.toContain('contains(');
    expect(Object.values(where.params).sort()).toEqual(['ORD', 'SFO']);
  });
});

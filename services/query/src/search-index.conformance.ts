import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { IndexEntry } from '@quarry/metadata-store';
import { parseQuery, type FieldDef } from '@quarry/query-language';
import { buildSnapshot, SnapshotEngine } from '@quarry/snapshots';
import { rank, tokens, type Rec, type Spec } from '@quarry/testkit';
import type { SearchIndex, SortKey } from './ports/search-index.port';

const RECORDS = [
  { name: 'Ada Lovelace', city: 'London', score: 90, price: 9.5, added: '2020-01-05', active: true },
  { name: 'Alan Turing', city: 'Manchester', score: 85, price: null, added: '2020-02-10', active: false },
  { name: 'Grace Hopper', city: 'New York', score: null, price: 12.25, added: '2019-12-31', active: true },
  { name: 'Edsger Dijkstra', city: 'Austin', score: 85, price: 3, added: null, active: false },
  { name: 'Barbara Liskov', city: 'Los Angeles', score: 70, price: 7, added: '2020-01-20', active: true },
  { name: 'Donald Knuth', city: 'Milwaukee', score: 95, price: 20, added: '2021-06-01', active: null },
  { name: 'Ada Yonath', city: 'Jerusalem', score: 60, price: 1.5, added: '2020-01-05', active: true },
  { name: 'Tim Berners-Lee', city: 'London', score: 88, price: 5, added: '2020-03-03', active: false },
];

const names = (...idx: number[]) => idx.map((i) => RECORDS[i].name);

/*
 * Values that broke the Typesense adapter on production data: many words behind one
 * prefix, punctuation and accents in text, integers beyond 2^53 and at the int64 ends, doubles a
 * float32 cannot hold, -0, fractional bounds on integers, booleans and sub-millisecond timestamps in
 * sorts, words Typesense's tokenizer would merge (`_`, accents) or cut (over 100 bytes). Written as
 * JSON text: JSON.stringify would round 9007199254740993 and turn -0.0 into 0.
 */
const LONG = 'x'.repeat(140);
const EDGE_JSON = `[
{"label":"e0","city":"Salford","title":"Émile","note":"café au lait","big":9007199254740993,"ratio":16777217,"count":2,"flag":true,"at":"2020-01-01 00:00:00.000500"},
{"label":"e1","city":"Sheffield","title":"emile","note":"cafe","big":9007199254740992,"ratio":16777216,"count":3,"flag":false,"at":"2020-01-01 00:00:00.000300"},
{"label":"e2","city":"Southampton","title":"Eve","note":"ab c","big":-9223372036854775808,"ratio":-0.0,"count":1,"flag":null,"at":null},
{"label":"e3","city":"Southend","title":"zoe","note":"a bc","big":9223372036854775807,"ratio":0,"count":null,"flag":true,"at":"2019-06-01 12:00:00.000000"},
{"label":"e4","city":"Southport","title":"O'Brien","note":"東京 tower","big":0,"ratio":1e300,"count":2,"flag":false,"at":"2020-01-01 00:00:00.000000"},
{"label":"e5","city":"Southwark","title":"obrien","note":"${LONG}a","big":3,"ratio":-1e300,"count":4,"flag":true,"at":"2021-01-01 00:00:00.000000"},
{"label":"e6","city":"Stoke","title":"o brien","note":"${LONG}b","big":null,"ratio":0.1,"count":2,"flag":null,"at":"2020-06-01 00:00:00.000000"},
{"label":"e7","city":"Sunderland","title":"","note":"new york city","big":-5,"ratio":0.30000000000000004,"count":0,"flag":false,"at":"2020-01-01 00:00:00.001000"},
{"label":"e8","city":"Swansea","title":"Zoë","note":"new york","big":9007199254740994,"ratio":5e-324,"count":-1,"flag":true,"at":null},
{"label":"e9","city":"Bath","title":null,"note":"york new","big":12,"ratio":2.5,"count":3,"flag":false,"at":"1999-12-31 23:59:59.000000"},
{"label":"e10","city":"South Shields","title":"Émile","note":null,"big":7,"ratio":null,"count":2,"flag":true,"at":null},
{"label":"e11","city":"Southsea","title":"EMILE","note":"York city new","big":null,"ratio":0.3,"count":3,"flag":false,"at":"2020-01-01 00:00:00.000300"}
]`;
const EDGE_COUNT = 12;
const edges = (...idx: number[]) => idx.map((i) => `e${i}`);
const edgesExcept = (...idx: number[]) =>
  Array.from({ length: EDGE_COUNT }, (_, i) => i)
    .filter((i) => !idx.includes(i))
    .map((i) => `e${i}`);

/** 30 text fields; record w0 holds all ten query words (spread over the fields), w1 nine of them, w2 none. */
const WIDE_FIELDS = Array.from({ length: 30 }, (_, i) => `f${String(i).padStart(2, '0')}`);
const WIDE_WORDS = Array.from({ length: 10 }, (_, i) => `quarrystone${i}`);
const WIDE_RECORDS = [0, 1, 2].map((r) => {
  const record: Record<string, string> = { label: `w${r}` };
  WIDE_FIELDS.forEach(
    (f, i) =>
      (record[f] =
        `filler ${r === 2 || (r === 1 && i === 27) ? 'other' : WIDE_WORDS.filter((_, w) => (w * 3) % 30 === i).join(' ')}`),
  );
  return record;
});

/**
 * Phrases of three or more words: Typesense once tested every adjacent pair anywhere
 * in the field, so p1 ("new york" and "york city" apart) and p3 (the pairs out of order) matched
 * "new york city", and NOT of the phrase dropped them. The negative cases are the point here.
 */
const PHRASE_RECORDS = [
  { label: 'p0', note: 'new york city', place: 'x' },
  { label: 'p1', note: 'new york and york city', place: 'x' },
  { label: 'p2', note: 'the new york city hall', place: 'x' },
  { label: 'p3', note: 'york city new york', place: 'x' },
  { label: 'p4', note: 'new york', place: 'city centre' },
  { label: 'p5', note: 'New-York City!', place: null },
  { label: 'p6', note: 'new york citizens', place: 'x' },
  { label: 'p7', note: null, place: 'new york city' },
];
const phrases = (...idx: number[]) => idx.map((i) => `p${i}`);

/**
 * Text for ranking: words drawn from a Zipf vocabulary (a few words in most records, most in a few),
 * titles of 1-5 words, bodies of 0-60, some missing or without a word; a seeded generator, so every
 * adapter ranks the same corpus.
 */
function rankingRecords(n: number): Rec[] {
  let state = 42;
  const rnd = () => {
    state = (state * 1103515245 + 12345) % 2147483648;
    return state / 2147483648;
  };
  const vocabulary = Array.from({ length: 400 }, (_, i) => `w${i.toString(36)}${'aeiou'[i % 5]}`);
  vocabulary.push('colour', 'color', 'colours', 'cölor', 'kolor');
  const weights = vocabulary.map((_, i) => 1 / (i + 1));
  const total = weights.reduce((a, b) => a + b, 0);
  const word = () => {
    let x = rnd() * total;
    for (let i = 0; i < weights.length; i++) if ((x -= weights[i]) <= 0) return vocabulary[i];
    return vocabulary[0];
  };
  const text = (min: number, max: number) =>
    Array.from({ length: min + Math.floor(rnd() * (max - min + 1)) }, word).join(rnd() < 0.1 ? ', ' : ' ');
  return Array.from({ length: n }, (_, id) => ({
    id,
    title: id % 17 === 0 ? null : text(1, 5),
    body: id % 23 === 0 ? '—' : text(0, 60),
    year: 1990 + (id % 30),
  }));
}

/**
 * One behaviour for every SearchIndex adapter: the same snapshot, the same plans, the same totals and
 * records in the same order. `open` gets a loaded engine and returns the adapter under test.
 */
export function searchIndexConformance(
  open: (engine: SnapshotEngine) => Promise<SearchIndex>,
  /** How the engine opens the snapshots: read into memory (small) or attached from their DuckDB file (large). */
  storage: 'memory' | 'attached' = 'memory',
  /** Whether the adapter's scores are BM25 as DESIGN fixes it (Typesense ranks by its own text match). */
  bm25 = true,
): void {
  let engine: SnapshotEngine;
  let search: SearchIndex;
  let entry: IndexEntry;
  let fields: FieldDef[];
  let dataDir: string;
  const loaded: IndexEntry[] = [];

  /** Builds a snapshot of `json` (text) and makes it searchable as version `version` of `name`. */
  const load = async (
    name: string,
    json: string,
    version = 1,
    previous: IndexEntry | null = null,
  ): Promise<IndexEntry> => {
    const file = path.join(dataDir, `${name}-${version}.json`);
    fs.writeFileSync(file, json);
    const built = await buildSnapshot({
      name,
      file,
      dataDir,
      types: {},
      views: [],
      attachMinRecords: storage === 'attached' ? 0 : Infinity,
    });
    const e: IndexEntry = {
      name,
      description: '',
      fields: built.fields,
      views: [],
      recordCount: built.recordCount,
      version,
      snapshot: built.snapshot,
      updatedAt: '',
    };
    await search.prepare(e);
    await search.retire(e, previous);
    loaded.push(e);
    return e;
  };

  beforeAll(async () => {
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'q-search-'));
    engine = new SnapshotEngine(dataDir);
    search = await open(engine);
    entry = await load('people', JSON.stringify(RECORDS));
    fields = entry.fields as FieldDef[];
    // The suite runs once per storage: make sure it is the one asked for.
    expect((await engine.table(entry)).storage).toBe(storage);
  }, 120000);

  afterAll(async () => {
    for (const e of loaded) await search?.drop(e).catch(() => undefined);
    await search?.close();
    await engine?.close();
  });

  const runOn = async (on: IndexEntry, query: string, sort: SortKey[] = [], offset = 0, limit = 50) => {
    const where = parseQuery(query, { fields: on.fields as FieldDef[], now: Date.UTC(2020, 0, 15) });
    const page = await search.search(on, { where, sort, offset, limit });
    const records = JSON.parse(page.recordsJson) as Array<Record<string, unknown>>;
    return { total: page.total, records, labels: records.map((r) => String(r.label)) };
  };

  const run = async (query: string, sort: SortKey[] = [], offset = 0, limit = 50) => {
    const res = await runOn(entry, query, sort, offset, limit);
    return { total: res.total, names: res.records.map((r) => String(r.name)), records: res.records as unknown[] };
  };

  it('infers the fixture types', () => {
    expect(fields).toEqual([
      { name: 'name', type: 'string' },
      { name: 'city', type: 'string' },
      { name: 'score', type: 'integer' },
      { name: 'price', type: 'number' },
      { name: 'added', type: 'date' },
      { name: 'active', type: 'boolean' },
    ]);
  });

  it('returns everything in source order with records as served', async () => {
    const all = await run('*');
    expect(all.total).toBe(8);
    expect(all.names).toEqual(RECORDS.map((r) => r.name));
    expect(all.records[0]).toEqual(RECORDS[0]);
    expect(all.records[3]).toEqual(RECORDS[3]);
  });

  it.each([
    ['ada', names(0, 6)],
    ['LONDON', names(0, 7)],
    ['"new york"', names(2)],
    ['city:los*', names(4)],
    ['name:berners', names(7)],
    ['"berners lee"', names(7)],
    ['name:"tim berners"', names(7)],
    ['score:85', names(1, 3)],
    ['score:[85 TO 90]', names(0, 1, 3, 7)],
    ['score:{85 TO 90}', names(7)],
    ['price:>=9.5', names(0, 2, 5)],
    ['active:true', names(0, 2, 4, 6)],
    ['NOT active:true', names(1, 3, 5, 7)],
    ['added:2020-01-05', names(0, 6)],
    ['added:[2020-01-01 TO 2020-01-31]', names(0, 4, 6)],
    ['added:<TODAY', names(0, 2, 6)],
    ['-added:*', names(3)],
    ['NOT score:85', names(0, 2, 4, 5, 6, 7)],
    ['ada OR city:austin', names(0, 3, 6)],
    ['london -name:ada', names(7)],
    ['(city:london OR city:austin) AND score:>86', names(0, 7)],
    ['nobody', []],
  ])('%s', async (query, expected) => {
    const res = await run(query);
    expect(res.names).toEqual(expected);
    expect(res.total).toBe(expected.length);
  });

  it('sorts with missing values last and ties in source order', async () => {
    expect((await run('*', [{ field: 'score', type: 'integer', direction: 'desc' }])).names).toEqual(
      names(5, 0, 7, 1, 3, 4, 6, 2),
    );
    expect((await run('*', [{ field: 'score', type: 'integer', direction: 'asc' }])).names).toEqual(
      names(6, 4, 1, 3, 7, 0, 5, 2),
    );
    expect(
      (
        await run('*', [
          { field: 'city', type: 'string', direction: 'asc' },
          { field: 'price', type: 'number', direction: 'desc' },
        ])
      ).names,
    ).toEqual(names(3, 6, 0, 7, 4, 1, 5, 2));
  });

  it('pages with offset and limit', async () => {
    const p = await run('*', [{ field: 'name', type: 'string', direction: 'asc' }], 2, 3);
    expect(p.total).toBe(8);
    expect(p.names).toEqual(['Alan Turing', 'Barbara Liskov', 'Donald Knuth']);
    expect((await run('*', [], 8, 5)).names).toEqual([]);
  });

  it('counts with no page at all (limit 0), filtered or not', async () => {
    const all = await run('*', [], 0, 0);
    expect(all.total).toBe(8);
    expect(all.names).toEqual([]);
    const some = await run('name:alan', [], 0, 0);
    expect(some.total).toBe((await run('name:alan')).total);
    expect(some.total).toBeGreaterThan(0);
  });

  describe('production values', () => {
    let edge: IndexEntry;
    let wide: IndexEntry;

    beforeAll(async () => {
      edge = await load('edges', EDGE_JSON);
      wide = await load('wide', JSON.stringify(WIDE_RECORDS));
    }, 120000);

    const sorted = async (field: string, type: FieldDef['type'], direction: 'asc' | 'desc') =>
      (await runOn(edge, '*', [{ field, type, direction }])).labels;

    it('reads the fixture with the types it is meant to test', () => {
      expect(edge.fields).toEqual([
        { name: 'label', type: 'string' },
        { name: 'city', type: 'string' },
        { name: 'title', type: 'string' },
        { name: 'note', type: 'string' },
        { name: 'big', type: 'integer' },
        { name: 'ratio', type: 'number' },
        { name: 'count', type: 'integer' },
        { name: 'flag', type: 'boolean' },
        { name: 'at', type: 'date' },
      ]);
      expect(wide.fields).toHaveLength(31);
    });

    it.each([
      // More words behind one prefix than Typesense expands by default (4), short and long prefixes.
      ['city:s*', edgesExcept(9)],
      ['city:sout*', edges(2, 3, 4, 5, 10, 11)],
      ['-city:s*', edges(9)],
      ['-city:sout*', edgesExcept(2, 3, 4, 5, 10, 11)],
      // Words Typesense's tokenizer would merge: accents folded, `_` dropped.
      ['note:cafe', edges(1)],
      ['note:café', edges(0)],
      ['"ab c"', edges(2)],
      ['"a bc"', edges(3)],
      ['東京', edges(4)],
      ['note:東*', edges(4)],
      // Words longer than the 100 bytes Typesense keeps of a token.
      [`note:${LONG}a`, edges(5)],
      [`note:${LONG}b`, edges(6)],
      ['note:xxxxxxxxxx*', edges(5, 6)],
      ['note:"new york"', edges(7, 8)],
      ['note:"new york city"', edges(7)],
      ['note:new-yo*', edges(7, 8)],
      ['-"new york"', edgesExcept(7, 8)],
      ['title:*', edgesExcept(7, 9)],
      // Integers compare with query numbers as doubles: beyond 2^53 a number stands for all that round to it.
      ['big:9007199254740992', edges(0, 1)],
      ['big:>9007199254740992', edges(3, 8)],
      ['big:<0', edges(2, 7)],
      ['big:[-9223372036854775808 TO -5]', edges(2, 7)],
      ['big:>=9223372036854775807', edges(3)],
      // Doubles a 32-bit float cannot tell apart, -0, extremes.
      ['ratio:16777217', edges(0)],
      ['ratio:0', edges(2, 3)],
      ['ratio:>0', edges(0, 1, 4, 6, 7, 8, 9, 11)],
      ['ratio:0.3', edges(11)],
      ['ratio:>0.3', edges(0, 1, 4, 7, 9)],
      ['ratio:>1e299', edges(4)],
      ['ratio:<-1e299', edges(5)],
      // Fractional bounds on integer fields.
      ['count:>2.5', edges(1, 5, 9, 11)],
      ['count:<=2.5', edges(0, 2, 4, 6, 7, 8, 10)],
      ['count:2.5', []],
      ['NOT count:2.5', edgesExcept()],
      ['count:[1.5 TO 2.5]', edges(0, 4, 6, 10)],
    ])('%s', async (query, expected) => {
      const res = await runOn(edge, query);
      expect(res.labels).toEqual(expected);
      expect(res.total).toBe(expected.length);
    });

    it('sorts text by its lower-cased value as the engine orders it, punctuation and accents included, empty first, missing last', async () => {
      expect(await sorted('title', 'string', 'asc')).toEqual(edges(7, 1, 11, 2, 6, 4, 5, 3, 8, 0, 10, 9));
      expect(await sorted('title', 'string', 'desc')).toEqual(edges(0, 10, 8, 3, 5, 4, 6, 2, 1, 11, 7, 9));
    });

    it('sorts integers exactly, beyond 2^53 and at the int64 ends', async () => {
      expect(await sorted('big', 'integer', 'asc')).toEqual(edges(2, 7, 4, 5, 10, 9, 1, 0, 8, 3, 6, 11));
      expect(await sorted('big', 'integer', 'desc')).toEqual(edges(3, 8, 0, 1, 9, 10, 5, 4, 7, 2, 6, 11));
    });

    it('sorts doubles exactly, with -0 equal to 0', async () => {
      expect(await sorted('ratio', 'number', 'asc')).toEqual(edges(5, 2, 3, 8, 6, 11, 7, 9, 1, 0, 4, 10));
      expect(await sorted('ratio', 'number', 'desc')).toEqual(edges(4, 0, 1, 9, 7, 11, 6, 8, 2, 3, 5, 10));
    });

    it('sorts booleans, false first ascending, missing last', async () => {
      expect(await sorted('flag', 'boolean', 'asc')).toEqual(edges(1, 4, 7, 9, 11, 0, 3, 5, 8, 10, 2, 6));
      expect(await sorted('flag', 'boolean', 'desc')).toEqual(edges(0, 3, 5, 8, 10, 1, 4, 7, 9, 11, 2, 6));
    });

    it('sorts timestamps to the microsecond', async () => {
      expect(await sorted('at', 'date', 'asc')).toEqual(edges(9, 3, 4, 1, 11, 0, 7, 6, 5, 2, 8, 10));
      expect(await sorted('at', 'date', 'desc')).toEqual(edges(5, 6, 7, 0, 1, 11, 4, 3, 9, 2, 8, 10));
    });

    it('answers a long query: ten words over thirty text fields', async () => {
      const all = await runOn(wide, WIDE_WORDS.join(' '));
      expect(all.labels).toEqual(['w0']);
      const nine = await runOn(wide, WIDE_WORDS.filter((w) => w !== 'quarrystone9').join(' '));
      expect(nine.labels).toEqual(['w0', 'w1']);
    });
  });

  describe('phrases of three or more words', () => {
    let phraseIndex: IndexEntry;
    beforeAll(async () => {
      phraseIndex = await load('phrases', JSON.stringify(PHRASE_RECORDS));
    }, 120000);

    it.each([
      ['note:"new york city"', phrases(0, 2, 5)],
      ['"new york city"', phrases(0, 2, 5, 7)],
      ['note:"york city new"', phrases(3)],
      ['note:"new york city hall"', phrases(2)],
      ['note:"york city new york city"', []],
      ['note:new-york-ci*', phrases(0, 2, 5, 6)],
      // NOT keeps every record that does not hold the words in that order, side by side, in one field.
      ['-note:"new york city"', phrases(1, 3, 4, 6, 7)],
      ['NOT "new york city"', phrases(1, 3, 4, 6)],
      ['NOT note:"york city new"', phrases(0, 1, 2, 4, 5, 6, 7)],
      ['-note:new-york-ci*', phrases(1, 3, 4, 7)],
      ['note:"new york" AND NOT note:"new york city"', phrases(1, 3, 4, 6)],
    ])('%s', async (query, expected) => {
      const res = await runOn(phraseIndex, query);
      expect(res.labels).toEqual(expected);
      expect(res.total).toBe(expected.length);
    });
  });

  // Typesense ranks by its own text match (docs/search.md): there the matches, their count, the order
  // of its scores and the facets are checked, and the BM25 scores only on the embedded engines.
  describe(
    bm25 ? 'relevance: BM25 against an independent computation' : 'relevance: matches and facets exact, scores its own',
    () => {
      const corpus = rankingRecords(400);
      let ranked: IndexEntry;
      beforeAll(async () => {
        ranked = await load('ranked', JSON.stringify(corpus));
      }, 120000);

      const ranks = async (query: string, spec: Spec, sort: SortKey[] = []) => {
        const where = parseQuery(query, { fields: ranked.fields as FieldDef[], now: 0 });
        const score = sort.length === 0 || sort.some((s) => s.type === 'score') ? where : undefined;
        const order = sort.length ? sort : [{ field: '_score', type: 'score' as const, direction: 'desc' as const }];
        const page = await search.search(ranked, { where, score, sort: order, offset: 0, limit: 1000 });
        const want = rank(corpus, spec);
        const ids = (JSON.parse(page.recordsJson) as Rec[]).map((r) => Number(r.id));
        expect(page.total).toBe(want.order.length);
        expect(page.total).toBeGreaterThan(0);
        expect(page.scores).toHaveLength(ids.length);
        if (!bm25) {
          expect([...ids].sort((a, b) => a - b)).toEqual([...want.order].sort((a, b) => a - b));
          const desc = order[0].type === 'score' && order[0].direction === 'desc';
          const got = page.scores ?? [];
          for (let i = 1; i < got.length; i++)
            if (order[0].type === 'score') expect(desc ? got[i - 1] >= got[i] : got[i - 1] <= got[i]).toBe(true);
          return { ids, want };
        }
        ids.forEach((id, i) => {
          const expected = want.scores.get(id) ?? NaN;
          expect(Math.abs((page.scores?.[i] ?? NaN) - expected)).toBeLessThanOrEqual(1e-9 * Math.abs(expected));
        });
        return { ids, want };
      };
      const both = ['title', 'body'];

      it.each([
        ['a frequent word', 'w1e', { op: 'and', clauses: [{ words: ['w1e'], fields: both }] }],
        ['a rare word', 'w5a', { op: 'and', clauses: [{ words: ['w5a'], fields: both }] }],
        [
          'two words, AND',
          'w2i w3o',
          {
            op: 'and',
            clauses: [
              { words: ['w2i'], fields: both },
              { words: ['w3o'], fields: both },
            ],
          },
        ],
        ['a phrase', '"w0a w1e"', { op: 'and', clauses: [{ words: ['w0a', 'w1e'], fields: both }] }],
        [
          'field words and boosts, OR',
          'title:w4u^2.5 OR body:w6e',
          {
            op: 'or',
            clauses: [
              { words: ['w4u'], fields: ['title'], boost: 2.5 },
              { words: ['w6e'], fields: ['body'] },
            ],
          },
        ],
        [
          'NOT adds nothing, a range adds 1',
          'w1e -title:w0a year:[2000 TO 2010]',
          {
            op: 'and',
            clauses: [
              { words: ['w1e'], fields: both },
              { words: ['w0a'], fields: ['title'], negate: true },
              { holds: (r: Rec) => Number(r.year) >= 2000 && Number(r.year) <= 2010 },
            ],
          },
        ],
        ['a fuzzy word', 'colour~1', { op: 'and', clauses: [{ words: ['colour'], fields: both, fuzzy: 1 }] }],
        [
          'a fuzzy word of two edits',
          'body:kolour~2',
          { op: 'and', clauses: [{ words: ['kolour'], fields: ['body'], fuzzy: 2 }] },
        ],
      ] as Array<[string, string, Spec]>)('%s: %s', async (_what, query, spec) => {
        const { ids, want } = await ranks(query, spec);
        if (bm25) expect(ids).toEqual(want.order.slice(0, 1000));
      });

      // Typesense's text match has no exact ties to test a second key on: only BM25's do.
      if (bm25)
        it('sorts by _score ascending, ties by a field', async () => {
          const { ids, want } = await ranks('w1e', { op: 'and', clauses: [{ words: ['w1e'], fields: both }] }, [
            { field: '_score', type: 'score', direction: 'asc' },
            { field: 'year', type: 'integer', direction: 'desc' },
          ]);
          const key = (id: number) => Math.round((want.scores.get(id) ?? 0) * 1e9);
          for (let i = 1; i < ids.length; i++) {
            const [a, b] = [ids[i - 1], ids[i]];
            expect(key(a)).toBeLessThanOrEqual(key(b));
            if (key(a) === key(b)) expect(Number(corpus[a].year)).toBeGreaterThanOrEqual(Number(corpus[b].year));
          }
        });

      it('counts a ranked search alone (limit 0) and past its last page, and scores a query without words', async () => {
        const plan = (query: string, offset: number, limit: number) => {
          const where = parseQuery(query, { fields: ranked.fields as FieldDef[], now: 0 });
          const order = [{ field: '_score', type: 'score' as const, direction: 'desc' as const }];
          return search.search(ranked, { where, score: where, sort: order, offset, limit });
        };
        const total = rank(corpus, { op: 'and', clauses: [{ words: ['w1e'], fields: both }] }).order.length;
        expect(total).toBeGreaterThan(0);
        for (const [offset, limit] of [
          [0, 0],
          [total + 5, 10],
        ]) {
          const page = await plan('w1e', offset, limit);
          expect(page.total).toBe(total);
          expect(JSON.parse(page.recordsJson)).toEqual([]);
        }
        // A field sort takes the same top-N path: a count alone there keeps no row either.
        const sorted = await search.search(ranked, {
          where: parseQuery('w1e', { fields: ranked.fields as FieldDef[], now: 0 }),
          sort: [{ field: 'year', type: 'integer', direction: 'desc' }],
          offset: 0,
          limit: 0,
        });
        expect([sorted.total, sorted.recordsJson]).toEqual([total, '[]']);
        const all = await plan('*', 0, 3);
        expect(all.total).toBe(corpus.length);
        expect(all.scores).toEqual(bm25 ? [0, 0, 0] : expect.any(Array));
      });

      it('counts facets over every match, blanks as (blank)', async () => {
        const where = parseQuery('w1e', { fields: ranked.fields as FieldDef[], now: 0 });
        const page = await search.search(ranked, {
          where,
          sort: [],
          offset: 0,
          limit: 0,
          facets: [
            { field: 'year', type: 'integer', limit: 5 },
            { field: 'title', type: 'string', limit: 3 },
          ],
        });
        const matching = corpus.filter((r) => tokens(r.title).includes('w1e') || tokens(r.body).includes('w1e'));
        const [years, titles] = page.facets ?? [];
        for (const facet of [years, titles]) {
          const counts = new Map<unknown, number>();
          for (const r of matching) {
            const v = r[facet.field] ?? '(blank)';
            counts.set(v, (counts.get(v) ?? 0) + 1);
          }
          for (const v of facet.values) expect(v.count).toBe(counts.get(v.value));
          expect(facet.values.reduce((s, v) => s + v.count, 0) + facet.others).toBe(matching.length);
          const shown = facet.values.map((v) => v.count);
          expect(
            Math.max(0, ...[...counts].filter(([k]) => !facet.values.some((v) => v.value === k)).map(([, n]) => n)),
          ).toBeLessThanOrEqual(Math.min(...shown));
        }
        expect(years.values).toHaveLength(5);
      });
    },
  );

  it('keeps answering for the previous version after a publish', async () => {
    const v1 = await load('versions', JSON.stringify([{ label: 'old' }, { label: 'older' }]));
    const v2 = await load('versions', JSON.stringify([{ label: 'new', extra: 1 }]), 2, v1);
    expect((await runOn(v1, '*')).labels).toEqual(['old', 'older']);
    expect((await runOn(v2, 'extra:1')).labels).toEqual(['new']);
  });
}

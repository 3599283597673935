import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { rpcClient } from './support/http';
import { createIdentity, type Identity } from './support/identities';
import { runCli } from './support/quarry-process';
import { VEGA } from './support/datasets';
import { rank, tokens, type Clause, type Rec, type Spec } from '@quarry/testkit';
import { startStackWithData, type Stack } from './support/stack';

/*
 * Search that ranks, end to end through JSON-RPC: every score of every case is checked against BM25
 * computed in this test from the records it loaded (@quarry/testkit bm25-oracle.ts: the design's formula, nothing
 * of Quarry's), the order exactly (ties in load order), on films (short titles, names) and on the
 * paragraphs of this repository's own docs (long text), with words, phrases, field-restricted words,
 * boosts, AND/OR/NOT mixes, filters, fuzzy words, realms; then highlights, facets and hostile input.
 */

type Answer<T> = {
  result?: { data: T; meta: Record<string, unknown> };
  error?: { code: number; message: string; data?: { detail?: string } };
};
interface Page {
  total: number;
  records: Rec[];
  fields: Array<{ name: string; type: string }>;
  scores?: number[];
  highlights?: Array<Record<string, string>>;
  facets?: Array<{ field: string; values: Array<{ value: unknown; count: number }>; others: number }>;
}

let stack: Stack;
let ann: Identity;
let eve: Identity;
let work: string;
const data = new Map<string, Rec[]>();
const text = new Map<string, string[]>();

const call = <T = Page>(who: Identity, params: Record<string, unknown>, method = 'QUERIES.EXECUTE') =>
  rpcClient(stack.quarry.baseUrl, who.token)
    .call(method, params)
    .then((r) => r.json as Answer<T>);

async function search(params: Record<string, unknown>, who: Identity = ann): Promise<Page> {
  const a = await call(who, { pageSize: 1000, ...params });
  if (!a.result) throw new Error(`${JSON.stringify(params)}: ${a.error?.code} ${a.error?.data?.detail}`);
  return a.result.data;
}

async function load(name: string, records: Rec[]): Promise<void> {
  const file = path.join(work, `${name}.json`);
  fs.writeFileSync(file, JSON.stringify(records));
  const res = await runCli(['index', 'load', name, file], stack.env);
  if (res.code !== 0) throw new Error(res.stderr);
  data.set(name, records);
}

/** The paragraphs of the repository's docs: real prose, of every length. */
function paragraphs(): Rec[] {
  const dir = path.join(__dirname, '..', 'docs');
  const out: Rec[] = [];
  for (const file of fs
    .readdirSync(dir)
    .filter((f) => f.endsWith('.md'))
    .sort()) {
    let heading = '';
    for (const para of fs.readFileSync(path.join(dir, file), 'utf8').split(/\n\s*\n/)) {
      const body = para.trim();
      if (body.startsWith('#')) heading = body.replace(/^#+\s*/, '');
      else if (body && !body.startsWith('```') && !body.startsWith('|'))
        out.push({ id: out.length, page: file, heading, body });
    }
  }
  return out;
}

/** Checks a ranked answer against the independent BM25: total, order and every score. */
async function expectRanked(index: string, query: string, spec: Spec, extra: Record<string, unknown> = {}) {
  const records = data.get(index) ?? [];
  const want = rank(records, spec);
  const got = await search({ index, query, ...extra });
  expect(got.total).toBe(want.order.length);
  expect(got.total).toBeGreaterThan(0);
  const ids = got.records.map((r) => r.id);
  expect(ids).toEqual(want.order.slice(0, 1000));
  expect(got.scores).toHaveLength(got.records.length);
  got.records.forEach((r, i) => {
    const expected = want.scores.get(Number(r.id)) ?? NaN;
    const score = got.scores?.[i] ?? NaN;
    expect(Math.abs(score - expected)).toBeLessThanOrEqual(1e-9 * Math.abs(expected));
  });
  return got;
}

const words = (q: string) => tokens(q);
const bare = (index: string, q: string, more: Partial<Extract<Clause, { words: string[] }>> = {}): Clause => ({
  words: words(q),
  fields: text.get(index) ?? [],
  ...more,
});

beforeAll(async () => {
  work = fs.mkdtempSync(path.join(os.tmpdir(), 'quarry-ranking-'));
  stack = await startStackWithData();
  const movies = JSON.parse(fs.readFileSync(path.join(VEGA, 'movies.json'), 'utf8')) as Rec[];
  await load(
    'films',
    movies.map((m, id) => ({ id, ...m })),
  );
  await load('paragraphs', paragraphs());
  await load('hostile', [
    { id: 0, body: 'Tom & Jerry <script>alert("x")</script> chase the cat', kind: 'cartoon' },
    { id: 1, body: 'Ελληνικά γράμματα και λέξεις, the cat sat', kind: 'greek' },
    { id: 2, body: '日本語 のテキスト cat 🐈 cat', kind: '' },
    { id: 3, body: 'The cat, the cat, the cat — and a dog', kind: null },
    { id: 4, body: 'cat', kind: 'cartoon' },
  ]);
  ann = await createIdentity(stack.dataDir, 'ann');
  eve = await createIdentity(stack.dataDir, 'eve', {
    indexes: 'films',
    realms: [{ index: 'films', query: '(Major Genre):=Drama' }],
  });
  for (const index of ['films', 'paragraphs', 'hostile']) {
    const { fields } = await search({ index, pageSize: 1 });
    text.set(
      index,
      fields.filter((f) => f.type === 'string').map((f) => f.name),
    );
  }
}, 600_000);

afterAll(async () => {
  await stack?.quarry.stop();
  fs.rmSync(work, { recursive: true, force: true });
});

describe('ranking by BM25, checked against an independent computation', () => {
  it('a bare word is scored in every text field (films and long prose)', async () => {
    await expectRanked('films', 'love', { op: 'and', clauses: [bare('films', 'love')] });
    await expectRanked('paragraphs', 'index', { op: 'and', clauses: [bare('paragraphs', 'index')] });
  });

  it('several words (AND by default), every one scoring', async () => {
    await expectRanked('paragraphs', 'crosstab rows', {
      op: 'and',
      clauses: [bare('paragraphs', 'crosstab'), bare('paragraphs', 'rows')],
    });
    await expectRanked('films', 'star OR wars OR trek', {
      op: 'or',
      clauses: [bare('films', 'star'), bare('films', 'wars'), bare('films', 'trek')],
    });
  });

  it('a phrase scores as one term, its idf the sum of its words’', async () => {
    await expectRanked('films', '"star wars"', { op: 'and', clauses: [bare('films', 'star wars')] });
    await expectRanked('paragraphs', '"the query"', { op: 'and', clauses: [bare('paragraphs', 'the query')] });
  });

  it('a field-restricted word scores in that field only; boosts multiply', async () => {
    await expectRanked('films', 'Title:man', { op: 'and', clauses: [{ words: ['man'], fields: ['Title'] }] });
    await expectRanked('films', 'Title:love^3 OR Director:john^0.5', {
      op: 'or',
      clauses: [
        { words: ['love'], fields: ['Title'], boost: 3 },
        { words: ['john'], fields: ['Director'], boost: 0.5 },
      ],
    });
    await expectRanked('paragraphs', 'heading:search^2 OR body:search', {
      op: 'or',
      clauses: [
        { words: ['search'], fields: ['heading'], boost: 2 },
        { words: ['search'], fields: ['body'] },
      ],
    });
  });

  it('NOT and - add nothing; filters, ranges and prefixes add 1 × boost', async () => {
    const drama = (r: Rec) => r['Major Genre'] === 'Drama';
    // (love OR war) AND NOT story: the matches of the OR without the story titles, scored by the OR alone.
    const records = data.get('films') ?? [];
    const want = rank(records, {
      op: 'or',
      clauses: [bare('films', 'love'), bare('films', 'war')],
    });
    const noStory = (i: number) => !tokens(records[i].Title).includes('story');
    const order = want.order.filter(noStory);
    const got = await search({ index: 'films', query: '(love OR war) AND NOT Title:story' });
    expect(got.records.map((r) => r.id)).toEqual(order);
    got.records.forEach((r, i) =>
      expect(Math.abs((got.scores?.[i] ?? 0) - (want.scores.get(Number(r.id)) ?? NaN))).toBeLessThanOrEqual(
        1e-9 * (want.scores.get(Number(r.id)) ?? 1),
      ),
    );
    await expectRanked('films', 'love AND (Major Genre):=Drama^2 AND (IMDB Rating):[7 TO 10]', {
      op: 'and',
      clauses: [
        bare('films', 'love'),
        { holds: drama, boost: 2 },
        { holds: (r) => typeof r['IMDB Rating'] === 'number' && r['IMDB Rating'] >= 7 && r['IMDB Rating'] <= 10 },
      ],
    });
    await expectRanked('films', 'love -Title:actually +Director:*', {
      op: 'and',
      clauses: [
        bare('films', 'love'),
        { words: ['actually'], fields: ['Title'], negate: true },
        { holds: (r) => typeof r.Director === 'string' && r.Director !== '' },
      ],
    });
  });

  it('fuzzy words expand to the nearest words of the version, each scored as a word', async () => {
    await expectRanked('films', 'Title:lvoe~1', {
      op: 'and',
      clauses: [{ words: ['lvoe'], fields: ['Title'], fuzzy: 1 }],
    });
    await expectRanked('paragraphs', 'qurey~2 AND body:index', {
      op: 'and',
      clauses: [bare('paragraphs', 'qurey', { fuzzy: 2 }), { words: ['index'], fields: ['body'] }],
    });
    // `word~` allows 2 edits.
    const two = await search({ index: 'films', query: 'Title:wrold~2' });
    const dflt = await search({ index: 'films', query: 'Title:wrold~' });
    expect(two.total).toBeGreaterThan(0);
    expect({ ...dflt, query: '' }).toEqual({ ...two, query: '' });
  });

  it('a realm narrows the matches, never the scores: a record scores the same for everyone', async () => {
    const all = await search({ index: 'films', query: 'love' });
    const mine = await search({ index: 'films', query: 'love' }, eve);
    const records = data.get('films') ?? [];
    const want = rank(records, { op: 'and', clauses: [bare('films', 'love')] }, (r) => r['Major Genre'] === 'Drama');
    expect(mine.records.map((r) => r.id)).toEqual(want.order);
    const byId = new Map(all.records.map((r, i) => [r.id, all.scores?.[i]]));
    mine.records.forEach((r, i) => expect(mine.scores?.[i]).toBe(byId.get(r.id)));
  });
});

describe('what ranks and what keeps load order', () => {
  it('filters and prefixes alone keep load order, with no scores', async () => {
    for (const query of ['*', 'Title:lov*', '(IMDB Rating):>8', 'NOT love']) {
      const got = await search({ index: 'films', query });
      const ids = got.records.map((r) => Number(r.id));
      expect(ids).toEqual([...ids].sort((a, b) => a - b));
      expect(got.scores).toBeUndefined();
    }
  });

  it('a sort turns ranking off, unless it names _score', async () => {
    const byTitle = await search({ index: 'films', query: 'love', sort: [{ field: 'Title' }] });
    expect(byTitle.scores).toBeUndefined();
    const titles = byTitle.records.map((r) => String(r.Title).toLowerCase());
    expect(titles).toEqual([...titles].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0)));
    const scored = await search({
      index: 'films',
      query: 'love',
      sort: [
        { field: '_score', direction: 'asc' },
        { field: 'Title', direction: 'desc' },
      ],
    });
    const want = rank(data.get('films') ?? [], { op: 'and', clauses: [bare('films', 'love')] });
    const s = scored.scores ?? [];
    expect(s).toHaveLength(want.order.length);
    for (let i = 1; i < s.length; i++) {
      expect(s[i]).toBeGreaterThanOrEqual(s[i - 1] - 1e-9);
      if (Math.abs(s[i] - s[i - 1]) < 1e-12)
        expect(String(scored.records[i].Title).toLowerCase() <= String(scored.records[i - 1].Title).toLowerCase()).toBe(
          true,
        );
    }
  });

  it('pages of a ranked search follow one another', async () => {
    const whole = await search({ index: 'paragraphs', query: 'the', pageSize: 60 });
    const second = await search({ index: 'paragraphs', query: 'the', pageSize: 30, page: 2 });
    expect(second.records).toEqual(whole.records.slice(30, 60));
    expect(second.scores).toEqual(whole.scores?.slice(30, 60));
  });
});

describe('highlights', () => {
  it('marks the matched words and escapes everything else', async () => {
    const got = await search({ index: 'hostile', query: 'cat OR jerry', highlight: {} });
    const byId = new Map(got.records.map((r, i) => [r.id, got.highlights?.[i]]));
    expect(byId.get(0)).toEqual({
      body: 'Tom &amp; <mark>Jerry</mark> &lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt; chase the <mark>cat</mark>',
    });
    expect(byId.get(2)?.body).toBe('日本語 のテキスト <mark>cat</mark> 🐈 <mark>cat</mark>');
    expect(got.highlights).toHaveLength(got.records.length);
  });

  it('a query with no word to score (*, a range, a word no record holds) answers, marks nothing, scores 0 or 1', async () => {
    for (const index of ['hostile', 'films']) {
      const all = await search({ index, query: '*', highlight: {}, pageSize: 5 });
      expect(all.records).toHaveLength(5);
      expect(all.highlights).toEqual(all.records.map(() => ({})));
      const byScore = await search({ index, query: '*', sort: [{ field: '_score', direction: 'desc' }], pageSize: 5 });
      expect(byScore.scores).toEqual([0, 0, 0, 0, 0]);
      expect(byScore.records.map((r) => r.id)).toEqual([0, 1, 2, 3, 4]);
      const none = await search({ index, query: 'zqxjzqxj', highlight: {}, facets: [{ field: 'id' }] });
      expect(none.total).toBe(0);
      expect(none.facets).toEqual([{ field: 'id', values: [], others: 0 }]);
    }
    const range = await search({
      index: 'hostile',
      query: 'id:[1 TO 3]',
      sort: [{ field: '_score', direction: 'asc' }],
    });
    expect(range.scores).toEqual([1, 1, 1]);
    expect(range.records.map((r) => r.id)).toEqual([1, 2, 3]);
  });

  it('cuts long text around the first match, between words, and marks phrases, prefixes and fuzzy words', async () => {
    const got = await search({
      index: 'paragraphs',
      query: '"result cache" OR body:interrup* OR body:provenanse~1',
      highlight: { fields: ['body'], fragmentSize: 80 },
    });
    expect(got.highlights?.length).toBe(got.records.length);
    for (const [i, h] of (got.highlights ?? []).entries()) {
      const frag = h.body;
      expect(frag).toMatch(/<mark>/);
      const plain = frag.replace(/<\/?mark>/g, '').replace(/…/g, '');
      const unescaped = plain
        .replace(/&lt;/g, '<')
        .replace(/&gt;/g, '>')
        .replace(/&quot;/g, '"')
        .replace(/&#39;/g, "'")
        .replace(/&amp;/g, '&');
      // At most the fragment size, but for a matched word that crosses its end.
      expect(unescaped.length).toBeLessThanOrEqual(80 + 20);
      expect(String(got.records[i].body)).toContain(unescaped);
      for (const m of frag.matchAll(/<mark>([^<]*)<\/mark>/g)) {
        const w = m[1].toLowerCase();
        expect(w === 'result' || w === 'cache' || w.startsWith('interrup') || w === 'provenance').toBe(true);
      }
    }
  });

  it('refuses fields that are not text, or not there', async () => {
    const a = await call(ann, { index: 'films', query: 'love', highlight: { fields: ['IMDB Rating'] } });
    expect(a.error?.data?.detail).toMatch(/highlight\.fields\[0\].*not a text field/);
    const b = await call(ann, { index: 'films', query: 'love', highlight: { fields: ['Nope'] } });
    expect(b.error?.data?.detail).toMatch(/highlight\.fields\[0\].*unknown field "Nope"/);
    const c = await call(ann, { index: 'films', query: 'love', highlight: { fragmentSize: 5 } });
    expect(c.error?.code).toBe(400);
    expect(c.error?.data?.detail).toMatch(/highlight\.fragmentSize/);
  });
});

describe('facets', () => {
  const count = (records: Rec[], field: string) => {
    const m = new Map<unknown, number>();
    for (const r of records) {
      const v = r[field] === null || r[field] === undefined || r[field] === '' ? '(blank)' : r[field];
      m.set(v, (m.get(v) ?? 0) + 1);
    }
    return m;
  };

  it('counts every matching record exactly, most frequent first, blanks as (blank), the rest as others', async () => {
    const films = data.get('films') ?? [];
    const matching = films.filter((r) => (text.get('films') ?? []).some((f) => tokens(r[f]).includes('love')));
    const got = await search({
      index: 'films',
      query: 'love',
      pageSize: 1,
      facets: [{ field: 'Major Genre', limit: 3 }, { field: 'MPAA Rating' }],
    });
    expect(got.facets?.map((f) => f.field)).toEqual(['Major Genre', 'MPAA Rating']);
    for (const facet of got.facets ?? []) {
      const want = count(matching, facet.field);
      for (const v of facet.values) expect(v.count).toBe(want.get(v.value));
      const listed = facet.values.reduce((s, v) => s + v.count, 0);
      expect(listed + facet.others).toBe(matching.length);
      const counts = facet.values.map((v) => v.count);
      expect(counts).toEqual([...counts].sort((a, b) => b - a));
      // Nothing left out counts more than what is listed.
      const shown = new Set(facet.values.map((v) => v.value));
      const max = Math.max(0, ...[...want].filter(([k]) => !shown.has(k)).map(([, n]) => n));
      expect(max).toBeLessThanOrEqual(Math.min(...counts));
    }
    expect(got.facets?.[0].values).toHaveLength(3);
  });

  it('a realm user’s facets count only its rows', async () => {
    const got = await search({ index: 'films', query: 'love', facets: [{ field: 'Major Genre' }] }, eve);
    expect(got.facets?.[0].values.map((v) => v.value)).toEqual(['Drama']);
    expect(got.facets?.[0].values[0].count).toBe(got.total);
    expect(got.facets?.[0].others).toBe(0);
  });

  it('facets numbers and blanks as the records hold them', async () => {
    const got = await search({
      index: 'hostile',
      query: 'cat',
      facets: [{ field: 'kind' }, { field: 'id', limit: 2 }],
    });
    expect(got.facets?.[0].values).toEqual([
      { value: 'cartoon', count: 2 },
      { value: '(blank)', count: 2 },
      { value: 'greek', count: 1 },
    ]);
    expect(got.facets?.[1]).toEqual({
      field: 'id',
      values: [
        { value: 0, count: 1 },
        { value: 1, count: 1 },
      ],
      others: 3,
    });
  });

  it('refuses unknown fields and too many facets, naming the param', async () => {
    const a = await call(ann, { index: 'films', facets: [{ field: 'Nope' }] });
    expect(a.error?.data?.detail).toMatch(/facets\[0\]\.field: unknown field "Nope"/);
    const b = await call(ann, { index: 'films', facets: Array.from({ length: 17 }, () => ({ field: 'Title' })) });
    expect(b.error?.code).toBe(400);
    expect(b.error?.data?.detail).toMatch(/facets/);
  });
});

describe('hostile input', () => {
  it('a word in every record, a word in none, unicode', async () => {
    const every = await expectRanked('hostile', 'cat', { op: 'and', clauses: [bare('hostile', 'cat')] });
    expect(every.total).toBe(5);
    const none = await search({ index: 'hostile', query: 'zebra' });
    expect(none.total).toBe(0);
    expect(none.scores).toEqual([]);
    await expectRanked('hostile', 'γράμματα OR 日本語', {
      op: 'or',
      clauses: [bare('hostile', 'γράμματα'), bare('hostile', '日本語')],
    });
    await expectRanked('hostile', 'γράματα~1', { op: 'and', clauses: [bare('hostile', 'γράματα', { fuzzy: 1 })] });
  });

  it('a fuzzy word of 1,000 characters, 100 fuzzy words: answered, never a hang or a 500', async () => {
    const long = await call(ann, { index: 'paragraphs', query: `${'a'.repeat(1000)}~2` });
    expect(long.result?.data.total).toBe(0);
    const many = Array.from({ length: 100 }, (_, i) => `body:w${i}rd~2`).join(' OR ');
    const hundred = await call(ann, { index: 'paragraphs', query: many });
    expect(hundred.result?.data.total ?? hundred.error?.code).toBeDefined();
    if (hundred.error) expect(hundred.error.code).toBe(400);
  });

  it('refuses what a fuzzy word or a boost cannot be, naming the position', async () => {
    for (const [query, detail] of [
      ['love~3', /at most 2 edits.*position 1/],
      ['love~0.8', /not a similarity/],
      ['(IMDB Rating):7~1', /searches text.*IMDB Rating/],
      ['lov*~1', /plain word/],
      ['love^99999999', /boost is at most/],
      ['"a b"~2', /Proximity/],
    ] as const) {
      const a = await call(ann, { index: 'films', query });
      expect(a.error?.code).toBe(400);
      expect(a.error?.data?.detail).toMatch(detail);
    }
  });
});

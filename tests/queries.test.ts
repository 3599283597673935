import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createIdentity, type Identity } from './support/identities';
import { flights20k, hasPhrase, movies, page, sortRows, textFields, VEGA, wordsOf, type Rec } from './support/datasets';
import { startStackWithData, type Stack, useStackWithAnalyst } from './support/stack';

interface QueryData {
  index: string;
  query: string;
  page: number;
  pageSize: number;
  total: number;
  totalPages: number;
  fields: Array<{ name: string; type: string }>;
  records: Rec[];
  scores?: number[];
}

const MOVIES = movies();
const FLIGHTS = flights20k();
const MOVIE_TEXT = textFields(MOVIES);

describe('QUERIES.EXECUTE on real data', () => {
  const env = useStackWithAnalyst();
  let stack: Stack;
  let analyst: Identity;

  beforeAll(() => {
    stack = env.stack();
    analyst = env.analyst();
  });

  const run = async (params: Record<string, unknown>) => {
    const res = await stack.call<QueryData>(analyst, 'QUERIES.EXECUTE', params);
    if (res.error) throw new Error(`unexpected error: ${JSON.stringify(res.error)}`);
    return res.data as QueryData;
  };

  /**
   * Checks the total and the exact records of several pages against the JS model. A query with
   * scoring words and no sort comes back ranked (tests/ranking.test.ts checks that order against an
   * independent BM25), so there the pages must hold the expected records in some order, scores
   * never rising, and all pages together exactly the expected records.
   */
  async function expectQuery(
    index: 'movies' | 'flights',
    query: string,
    expected: Rec[],
    pageSize = 25,
    sort?: Array<{ field: string; direction: string }>,
  ) {
    const totalPages = Math.ceil(expected.length / pageSize);
    let ranked = false;
    for (const p of [...new Set([1, 2, totalPages])].filter((n) => n >= 1)) {
      const data = await run({ index, query, page: p, pageSize, ...(sort ? { sort } : {}) });
      expect(data.total).toBe(expected.length);
      expect(data.totalPages).toBe(totalPages);
      expect(data.page).toBe(p);
      if (data.scores === undefined) {
        expect(data.records).toEqual(page(expected, p, pageSize));
        continue;
      }
      ranked = true;
      expect(sort).toBeUndefined();
      expect(data.records).toHaveLength(page(expected, p, pageSize).length);
      expect(data.scores).toHaveLength(data.records.length);
      data.scores.forEach((s, i) => expect(s).toBeLessThanOrEqual(i === 0 ? Infinity : data.scores![i - 1]!));
    }
    if (ranked) {
      const all: Rec[] = [];
      for (let p = 1; p <= Math.ceil(expected.length / 1000); p++) {
        all.push(...(await run({ index, query, page: p, pageSize: 1000 })).records);
      }
      const canonical = (rs: Rec[]) => rs.map((r) => JSON.stringify(r)).sort();
      expect(canonical(all)).toEqual(canonical(expected));
    }
    if (totalPages === 0) expect((await run({ index, query, pageSize })).records).toEqual([]);
  }

  it('returns every record for * in source order, with the documented shape and defaults', async () => {
    const data = await run({ index: 'movies', query: '*' });
    expect(data).toMatchObject({
      index: 'movies',
      query: '*',
      page: 1,
      pageSize: 50,
      total: MOVIES.length,
      totalPages: Math.ceil(MOVIES.length / 50),
    });
    expect(data.fields).toContainEqual({ name: 'Release Date', type: 'date' });
    expect(data.fields).toContainEqual({ name: 'IMDB Rating', type: 'number' });
    expect(data.records).toEqual(MOVIES.slice(0, 50));
    await expectQuery('movies', '*', MOVIES, 100);
    expect((await run({ index: 'movies' })).total).toBe(MOVIES.length);
  });

  it('matches a bare word in any text field, case-insensitively', async () => {
    await expectQuery(
      'movies',
      'LOVE',
      MOVIES.filter((m) => MOVIE_TEXT.some((f) => wordsOf(m[f]).includes('love'))),
    );
  });

  it('matches phrases as consecutive words', async () => {
    await expectQuery(
      'movies',
      '"star wars"',
      MOVIES.filter((m) => MOVIE_TEXT.some((f) => hasPhrase(m[f], ['star', 'wars']))),
      3,
    );
  });

  it('matches prefixes', async () => {
    await expectQuery(
      'movies',
      'Title:star*',
      MOVIES.filter((m) => wordsOf(m.Title).some((w) => w.startsWith('star'))),
      10,
    );
  });

  it('matches fielded terms, also on fields with spaces', async () => {
    await expectQuery(
      'movies',
      'Director:spielberg',
      MOVIES.filter((m) => wordsOf(m.Director).includes('spielberg')),
      5,
    );
    await expectQuery(
      'movies',
      '(Major Genre):comedy AND (MPAA Rating):PG',
      MOVIES.filter((m) => wordsOf(m['Major Genre']).includes('comedy') && wordsOf(m['MPAA Rating']).includes('pg')),
    );
  });

  it('applies numeric ranges and comparisons', async () => {
    const rating = (m: Rec) => m['IMDB Rating'] as number | null;
    await expectQuery(
      'movies',
      '(IMDB Rating):[8 TO 9]',
      MOVIES.filter((m) => rating(m) !== null && rating(m)! >= 8 && rating(m)! <= 9),
    );
    await expectQuery(
      'movies',
      '(IMDB Rating):{8 TO 9}',
      MOVIES.filter((m) => rating(m) !== null && rating(m)! > 8 && rating(m)! < 9),
    );
    await expectQuery(
      'movies',
      '(Running Time min):>150',
      MOVIES.filter(
        (m) => (m['Running Time min'] as number | null) !== null && (m['Running Time min'] as number) > 150,
      ),
    );
    await expectQuery(
      'flights',
      'delay:[* TO -10]',
      FLIGHTS.filter((f) => (f.delay as number) <= -10),
      200,
    );
  });

  it('applies date ranges as whole days', async () => {
    await expectQuery(
      'flights',
      'date:[2001-01-05 TO 2001-01-06]',
      FLIGHTS.filter((f) => String(f.date) >= '2001-01-05' && String(f.date) < '2001-01-07'),
      40,
    );
    await expectQuery(
      'flights',
      'date:{2001-03-30 TO *]',
      FLIGHTS.filter((f) => String(f.date) >= '2001-03-31'),
      40,
    );
    const d = (m: Rec) => m['Release Date'] as string | null;
    await expectQuery(
      'movies',
      '(Release Date):[1995-01-01 TO 1995-12-31]',
      MOVIES.filter((m) => d(m) !== null && d(m)! >= '1995-01-01' && d(m)! <= '1995-12-31'),
    );
    await expectQuery(
      'movies',
      '(Release Date):1997',
      MOVIES.filter((m) => d(m)?.startsWith('1997')),
    );
  });

  it('negates with NOT and -, counting records without a value as not matching', async () => {
    await expectQuery(
      'movies',
      'NOT (Major Genre):drama',
      MOVIES.filter((m) => !wordsOf(m['Major Genre']).includes('drama')),
    );
    await expectQuery(
      'movies',
      '-Director:*',
      MOVIES.filter((m) => m.Director === null || m.Director === ''),
      40,
    );
    await expectQuery(
      'movies',
      'war -Title:star',
      MOVIES.filter((m) => MOVIE_TEXT.some((f) => wordsOf(m[f]).includes('war')) && !wordsOf(m.Title).includes('star')),
      10,
    );
  });

  it('combines OR with AND by precedence', async () => {
    const genre = (m: Rec, g: string) => wordsOf(m['Major Genre']).includes(g);
    await expectQuery(
      'movies',
      '(Major Genre):horror OR (Major Genre):western AND (IMDB Rating):>7',
      MOVIES.filter((m) => genre(m, 'horror') || (genre(m, 'western') && (m['IMDB Rating'] as number) > 7)),
    );
  });

  it('sorts on text, number and date fields both ways with nulls last and stable ties', async () => {
    await expectQuery('movies', '*', sortRows(MOVIES, [['Title', 'asc']]), 100, [{ field: 'Title', direction: 'asc' }]);
    await expectQuery('movies', '*', sortRows(MOVIES, [['IMDB Rating', 'desc']]), 100, [
      { field: 'IMDB Rating', direction: 'desc' },
    ]);
    await expectQuery('movies', '*', sortRows(MOVIES, [['Release Date', 'asc']]), 100, [
      { field: 'release date', direction: 'ASC' },
    ]);
    await expectQuery(
      'movies',
      'Title:the',
      sortRows(
        MOVIES.filter((m) => wordsOf(m.Title).includes('the')),
        [
          ['Major Genre', 'asc'],
          ['IMDB Rating', 'desc'],
        ],
      ),
      20,
      [
        { field: 'Major Genre', direction: 'asc' },
        { field: 'IMDB Rating', direction: 'desc' },
      ],
    );
    await expectQuery(
      'flights',
      'origin:SFO',
      sortRows(
        FLIGHTS.filter((f) => f.origin === 'SFO'),
        [['delay', 'desc']],
      ),
      50,
      [{ field: 'delay', direction: 'desc' }],
    );
  });

  it('returns an empty page past the end', async () => {
    const data = await run({ index: 'movies', query: 'Director:spielberg', page: 99 });
    expect(data.records).toEqual([]);
    expect(data.total).toBeGreaterThan(0);
  });

  it('treats injection attempts as search text', async () => {
    const attempt = "x' OR 1=1; DROP TABLE users; --";
    const words = wordsOf(attempt);
    await expectQuery(
      'movies',
      `"${attempt.replace(/"/g, '')}"`,
      MOVIES.filter((m) => MOVIE_TEXT.some((f) => hasPhrase(m[f], words))),
    );
    expect((await run({ index: 'movies' })).total).toBe(MOVIES.length);
  });

  describe('bad input', () => {
    const expectError = async (params: unknown, code: number, detail: RegExp | string) => {
      const res = await stack.call(analyst, 'QUERIES.EXECUTE', params);
      expect(res.error?.code).toBe(code);
      if (typeof detail === 'string') expect(res.error?.data.detail).toBe(detail);
      else expect(res.error?.data.detail).toMatch(detail);
    };

    it.each([[{}], [{ index: '' }], [{ index: 7 }], [{ index: null }]])(
      '%p says "index is required"',
      async (params) => {
        await expectError(params, 400, 'index is required');
      },
    );

    it('404s an unknown index', async () => expectError({ index: 'nope' }, 404, 'Index "nope" not found'));
    it('names a bad page', async () => expectError({ index: 'movies', page: 0 }, 400, /page must be an integer/));
    it('names a bad pageSize', async () =>
      expectError({ index: 'movies', pageSize: 1001 }, 400, /pageSize must be an integer between 1 and 1000/));
    it('names an unknown sort field', async () =>
      expectError({ index: 'movies', sort: [{ field: 'Nope' }] }, 400, 'sort[0].field: unknown field "Nope"'));
    it('names a bad direction', async () =>
      expectError(
        { index: 'movies', sort: [{ field: 'Title', direction: 'up' }] },
        400,
        /sort\[0\]\.direction must be "asc" or "desc"/,
      ));
    it('names unknown params', async () =>
      expectError({ index: 'movies', limit: 5 }, 400, 'Unknown parameter: "limit"'));
    it('refuses a 100 KB query', async () =>
      expectError({ index: 'movies', query: 'a '.repeat(50_000) }, 400, /query must be at most 10000 characters/));
    it('refuses deep nesting', async () =>
      expectError({ index: 'movies', query: '('.repeat(4000) + 'a' + ')'.repeat(4000) }, 400, /nest deeper than 32/));
    it('names a type mismatch', async () =>
      expectError(
        { index: 'movies', query: '(IMDB Rating):abc' },
        400,
        /field "IMDB Rating" is a number, but "abc" is not/,
      ));
    it('names a syntax error position', async () =>
      expectError({ index: 'movies', query: 'Title:(star' }, 400, /Query syntax error at position \d+/));
    it('names unknown fields', async () =>
      expectError({ index: 'movies', query: 'Budget:>5' }, 400, 'Unknown field "Budget" at position 1'));

    it('keeps answering afterwards', async () => {
      expect((await run({ index: 'flights' })).total).toBe(FLIGHTS.length);
    });
  });
});

describe('index loading, catalog and permissions', () => {
  let stack: Stack;
  let admin: Identity;
  let flightsOnly: Identity;
  let dramaOrComedy: Identity;
  let tmp: string;
  const today = new Date();
  const iso = (offsetDays: number) =>
    new Date(Date.UTC(today.getUTCFullYear(), today.getUTCMonth(), today.getUTCDate() + offsetDays))
      .toISOString()
      .slice(0, 10);

  beforeAll(async () => {
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'quarry-fixtures-'));
    // BOM, semicolons, quoted fields with the delimiter, a quote and a newline; booleans; relative dates; a field with symbols.
    fs.writeFileSync(
      path.join(tmp, 'gadgets.csv'),
      '\ufeffname;in stock;Cost Total $;added\n' +
        `"Widget; large";true;10.5;${iso(-1)}\n` +
        `"Gizmo ""pro""";false;99;${iso(-10)}\n` +
        `"Multi\nline";TRUE;;${iso(5)}\n` +
        `Plain;false;3;${iso(0)}\n`,
    );
    fs.writeFileSync(path.join(tmp, 'gadgets-bad.csv'), 'name;price\nA;1\nB;2\nC;abc\n');
    fs.writeFileSync(path.join(tmp, 'lines.jsonl'), '{"k":"a","n":1}\n{"k":"b","n":2}\n');
    stack = await startStackWithData({
      extra: async (env) => {
        const { runCli } = await import('./support/quarry-process');
        const r = await runCli(
          ['index', 'load', 'gadgets', path.join(tmp, 'gadgets.csv'), '--description', 'Shop stock'],
          env,
        );
        if (r.code !== 0) throw new Error(r.stderr);
      },
    });
    admin = await createIdentity(stack.dataDir, 'admin', { admin: true, indexes: '' });
    flightsOnly = await createIdentity(stack.dataDir, 'flights-only', { indexes: 'flights' });
    dramaOrComedy = await createIdentity(stack.dataDir, 'drama-comedy', {
      indexes: 'movies',
      realms: [
        { index: 'movies', query: '(Major Genre):Drama' },
        { index: 'movies', query: '(Major Genre):Comedy' },
      ],
    });
  }, 120000);

  afterAll(async () => {
    await stack?.quarry.stop();
  });

  const q = (who: Identity, params: Record<string, unknown>) => stack.call<QueryData>(who, 'QUERIES.EXECUTE', params);

  it('loads CSV with a BOM, detected delimiter and quoted fields, infers types, and searches booleans and date tokens', async () => {
    const all = await q(admin, { index: 'gadgets' });
    expect(all.data?.fields).toEqual([
      { name: 'name', type: 'string' },
      { name: 'in stock', type: 'boolean' },
      { name: 'Cost Total $', type: 'number' },
      { name: 'added', type: 'date' },
    ]);
    expect(all.data?.records.map((r) => r.name)).toEqual(['Widget; large', 'Gizmo "pro"', 'Multi\nline', 'Plain']);
    expect((await q(admin, { index: 'gadgets', query: '(in stock):true' })).data?.records.map((r) => r.name)).toEqual([
      'Widget; large',
      'Multi\nline',
    ]);
    expect((await q(admin, { index: 'gadgets', query: '(Cost Total $):>=10' })).data?.total).toBe(2);
    expect(
      (await q(admin, { index: 'gadgets', query: 'added:[TODAY-7DAYS TO TODAY]' })).data?.records.map((r) => r.name),
    ).toEqual(['Widget; large', 'Plain']);
    expect((await q(admin, { index: 'gadgets', query: 'added:>TODAY' })).data?.records.map((r) => r.name)).toEqual([
      'Multi\nline',
    ]);
    expect((await q(admin, { index: 'gadgets', query: 'added:<FIRST_DAY_OF_YEAR-1YEARS' })).data?.total).toBe(0);
  });

  it('keeps the published version when a load fails, naming the line and column', async () => {
    const bad = await stack.cli([
      'index',
      'load',
      'gadgets',
      path.join(tmp, 'gadgets-bad.csv'),
      '--type',
      'price=integer',
    ]);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain('gadgets-bad.csv:4, column "price": cannot read "abc" as integer');
    expect((await q(admin, { index: 'gadgets' })).data?.total).toBe(4);
  });

  it('loads a ready Parquet file by copying it, in source order', async () => {
    const { DuckDBInstance } = await import('@duckdb/node-api');
    const file = path.join(tmp, 'flights.parquet');
    const db = await DuckDBInstance.create(':memory:');
    const c = await db.connect();
    // Types that need no conversion (BIGINT, TIMESTAMP, VARCHAR), so the loader can take the file as it is.
    await c.run(
      `COPY (SELECT strptime(date, '%Y/%m/%d %H:%M') AS date, CAST(delay AS BIGINT) AS delay, CAST(distance AS BIGINT) AS distance, origin, destination
             FROM read_json_auto('${path.join(VEGA, 'flights-20k.json')}')) TO '${file}' (FORMAT parquet)`,
    );
    c.closeSync();
    db.closeSync();
    const res = await stack.cli(['index', 'load', 'flightsp', file]);
    expect(res.code).toBe(0);
    const snapshots = fs.readdirSync(path.join(stack.dataDir, 'indexes', 'flightsp'));
    expect(snapshots).toHaveLength(1);
    expect(
      fs.readFileSync(path.join(stack.dataDir, 'indexes', 'flightsp', snapshots[0])).equals(fs.readFileSync(file)),
    ).toBe(true);
    const first = await q(admin, { index: 'flightsp', pageSize: 100, page: 3 });
    expect(first.data?.total).toBe(FLIGHTS.length);
    expect(first.data?.records).toEqual(FLIGHTS.slice(200, 300));
    const lax = await q(admin, { index: 'flightsp', query: 'destination:LAX', pageSize: 1000 });
    expect(lax.data?.records).toEqual(FLIGHTS.filter((f) => f.destination === 'LAX').slice(0, 1000));
  });

  it('publishes a new version atomically to the running server', async () => {
    const ok = await stack.cli(['index', 'load', 'lines', path.join(tmp, 'lines.jsonl')]);
    expect(ok.code).toBe(0);
    expect((await q(admin, { index: 'lines' })).data?.records).toEqual([
      { k: 'a', n: 1 },
      { k: 'b', n: 2 },
    ]);
    fs.writeFileSync(path.join(tmp, 'lines.jsonl'), '{"k":"c","n":3}\n');
    expect((await stack.cli(['index', 'load', 'lines', path.join(tmp, 'lines.jsonl')])).code).toBe(0);
    expect((await q(admin, { index: 'lines' })).data?.records).toEqual([{ k: 'c', n: 3 }]);
    expect((await stack.cli(['index', 'drop', 'lines'])).code).toBe(0);
    expect((await q(admin, { index: 'lines' })).error?.code).toBe(404);
  });

  it('hides indexes a user may not read: 404 on query, absent from INDEXES.FIND', async () => {
    const denied = await q(flightsOnly, { index: 'movies' });
    const unknown = await q(flightsOnly, { index: 'no-such-index' });
    expect(denied.error).toEqual({
      ...unknown.error,
      data: { ...unknown.error!.data, detail: 'Index "movies" not found' },
    });
    expect(denied.error?.code).toBe(404);
    const found = await stack.call<{ indexes: Array<{ name: string }> }>(flightsOnly, 'INDEXES.FIND', {});
    expect(found.data?.indexes.map((i) => i.name)).toEqual(['flights']);
  });

  it('ANDs realms (ORed together) into every query, and nothing in the query escapes them', async () => {
    const genre = (m: Rec) => wordsOf(m['Major Genre']);
    const visible = MOVIES.filter((m) => genre(m).includes('drama') || genre(m).includes('comedy'));
    expect((await q(dramaOrComedy, { index: 'movies' })).data?.total).toBe(visible.length);
    expect((await q(admin, { index: 'movies' })).data?.total).toBe(MOVIES.length);
    const first = await q(dramaOrComedy, { index: 'movies', pageSize: 30 });
    expect(first.data?.records).toEqual(visible.slice(0, 30));
    for (const escape of ['*', 'Title:* OR NOT Title:*', '(Major Genre):*', '*:*', 'NOT (Major Genre):drama']) {
      const res = await q(dramaOrComedy, { index: 'movies', query: escape, pageSize: 1000 });
      expect(res.data?.records.every((m) => genre(m).includes('drama') || genre(m).includes('comedy'))).toBe(true);
    }
    expect((await q(dramaOrComedy, { index: 'movies', query: 'NOT (Major Genre):drama' })).data?.total).toBe(
      visible.filter((m) => !genre(m).includes('drama')).length,
    );
    expect((await q(dramaOrComedy, { index: 'movies', query: ') OR (*' })).error?.code).toBe(400);
    expect(
      (await q(dramaOrComedy, { index: 'movies', query: '") OR TRUE OR ("' })).data?.records.every(
        (m) => genre(m).includes('drama') || genre(m).includes('comedy'),
      ),
    ).toBe(true);
  });

  it('finds indexes by name and description with signed cursor pages', async () => {
    const find = (params: Record<string, unknown>) =>
      stack.call<{
        indexes: Array<{ name: string; dynamicViews: string[]; recordCount: number; description: string }>;
        nextCursor: string | null;
      }>(admin, 'INDEXES.FIND', params);
    const all = await find({});
    expect(all.data?.indexes.map((i) => i.name)).toEqual(['flights', 'flightsp', 'gadgets', 'movies']);
    expect(all.data?.nextCursor).toBeNull();
    const movieInfo = all.data?.indexes.find((i) => i.name === 'movies');
    expect(movieInfo).toMatchObject({
      recordCount: MOVIES.length,
      dynamicViews: ['Records', 'Directors', 'Distributors'],
      description: 'Films: grosses, budgets and ratings',
    });
    expect((await find({ searchText: 'DELAYS' })).data?.indexes.map((i) => i.name)).toEqual(['flights']);
    expect((await find({ searchText: 'flightsp' })).data?.indexes.map((i) => i.name)).toEqual(['flightsp']);
    expect((await find({ searchText: 'gad' })).data?.indexes.map((i) => i.name)).toEqual(['gadgets']);

    const seen: string[] = [];
    let cursor: string | undefined;
    do {
      const res = await find({ limit: 1, ...(cursor ? { cursor } : {}) });
      seen.push(...(res.data?.indexes.map((i) => i.name) ?? []));
      cursor = res.data?.nextCursor ?? undefined;
    } while (cursor);
    expect(seen).toEqual(['flights', 'flightsp', 'gadgets', 'movies']);

    const first = await find({ limit: 1 });
    const c = first.data!.nextCursor!;
    const forged =
      Buffer.from(JSON.stringify({ k: 'indexes', after: 'a', s: '' })).toString('base64url') + c.slice(c.indexOf('.'));
    expect((await find({ limit: 1, cursor: forged })).error).toMatchObject({
      code: 400,
      data: { detail: expect.stringMatching(/cursor is invalid/) },
    });
    expect((await find({ limit: 1, cursor: 'garbage' })).error?.code).toBe(400);
    expect((await find({ limit: 1, cursor: c, searchText: 'x' })).error?.data.detail).toMatch(/different search/);
    expect((await find({ limit: 0 })).error?.code).toBe(400);
  });
});

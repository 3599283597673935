import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parse } from 'csv-parse/sync';
import * as XLSX from 'xlsx';
import { DuckDBInstance } from '@duckdb/node-api';
import { Readable } from 'node:stream';
import { QuarryClient, QuarryError } from '@quarry/client';
import { countCsv, exportCalls } from './support/exports';
import { rawRequest, type RawResponse } from './support/http';
import { createIdentity, type Identity } from './support/identities';
import { REPO_ROOT, runCli, type RunningQuarry } from './support/quarry-process';

const VEGA = path.join(REPO_ROOT, 'node_modules', 'vega-datasets', 'data');
import { startStackWithData, type Stack } from './support/stack';

/** Labels a record could carry that break CSV lines or run as spreadsheet formulas. */
const HOSTILE = [
  'two\nlines',
  'say "hi", ok',
  '=HYPERLINK("http://evil.example","x")',
  '-2+3',
  '@x',
  '+1',
  '-5',
  '-1.5e3',
  ';cmd',
  '\uFF1DSUM(A1)',
  '\uFF0D3',
  'a=b',
];
/** A formula's first characters as the crosstab CSV lists them, full-width forms too; a plain number is left as it is. */
const defused = (label: string) =>
  /^[=+\-@;\t\r\n\uFF1D\uFF0B\uFF0D\uFF20\uFF1B]/.test(label) && !/^-?\d+(\.\d+)?([eE][-+]?\d+)?$/.test(label)
    ? `'${label}`
    : label;

const MAX_ROWS = 5000;

describe('EXPORTS.START, EXPORTS.STATUS and GET /exports/<id>', () => {
  let stack: Stack;
  let quarry: RunningQuarry;
  let analyst: Identity;
  let other: Identity;
  let comedyOnly: Identity;
  let tmp: string;

  const { call, download, start, finished } = exportCalls(() => quarry.baseUrl);

  async function searchAll(who: Identity, params: Record<string, unknown>): Promise<Array<Record<string, unknown>>> {
    const body = (await call(who, 'QUERIES.EXECUTE', { ...params, pageSize: 1000, page: 1 })).json as {
      result: { data: { total: number; records: Array<Record<string, unknown>> } };
    };
    const { total, records } = body.result.data;
    const all = [...records];
    for (let page = 2; all.length < total; page++) {
      const next = (await call(who, 'QUERIES.EXECUTE', { ...params, pageSize: 1000, page })).json as typeof body;
      all.push(...next.result.data.records);
    }
    return all;
  }

  const exportsDir = () => path.join(stack.dataDir, 'exports');

  beforeAll(async () => {
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'quarry-exports-'));
    fs.writeFileSync(path.join(tmp, 'hostile.json'), JSON.stringify(HOSTILE.map((label, i) => ({ label, n: i }))));
    stack = await startStackWithData({
      env: { QUARRY_EXPORT_MAX_ROWS: String(MAX_ROWS) },
      extra: async (env) => {
        const r = await runCli(['index', 'load', 'hostile', path.join(tmp, 'hostile.json')], env);
        if (r.code !== 0) throw new Error(r.stderr);
        // Big enough for an export to be caught in the middle.
        const big = await runCli(['index', 'load', 'flights3m', path.join(VEGA, 'flights-3m.parquet')], env);
        if (big.code !== 0) throw new Error(big.stderr);
      },
    });
    quarry = stack.quarry;
    analyst = await createIdentity(stack.dataDir, 'analyst', { indexes: '*' });
    other = await createIdentity(stack.dataDir, 'other', { indexes: '*' });
    comedyOnly = await createIdentity(stack.dataDir, 'comedy', {
      indexes: 'movies',
      realms: [{ index: 'movies', query: '(Major Genre):Comedy' }],
    });
  }, 180000);

  afterAll(async () => {
    await quarry?.stop();
    fs.rmSync(tmp, { recursive: true, force: true });
  });

  const dramas = {
    index: 'movies',
    query: '(Major Genre):Drama',
    sort: [{ field: 'Worldwide Gross', direction: 'desc' }],
  };
  const everyMovie = { ...dramas, query: '*' };

  it('a search exported as CSV is every matching record, in its sort, the file downloadable once', async () => {
    const id = await start(analyst, { method: 'QUERIES.EXECUTE', params: everyMovie, format: 'csv' });
    expect(id).toMatch(/^[0-9a-f]{32}$/);
    const s = await finished(analyst, id);
    const expected = await searchAll(analyst, everyMovie);
    expect(s).toMatchObject({ state: 'done', rowsWritten: expected.length });
    expect(expected.length).toBeGreaterThan(3000); // more than the largest page
    expect(Date.parse(s.expiresAt!)).toBeGreaterThan(Date.now() + 3600_000);
    const file = await download(analyst, id);
    expect(file.status).toBe(200);
    expect(file.headers['content-disposition']).toBe(`attachment; filename="export-${id}.csv"`);
    expect(file.headers['content-type']).toMatch(/^text\/csv/);
    expect(Buffer.byteLength(file.text)).toBe(s.bytes);
    const rows = parse(file.text, { columns: true }) as Array<Record<string, string>>;
    expect(rows.map((r) => r.Title)).toEqual(expected.map((r) => (r.Title === null ? '' : String(r.Title))));
    expect(rows.map((r) => r['Worldwide Gross'])).toEqual(
      expected.map((r) => (r['Worldwide Gross'] === null ? '' : String(r['Worldwide Gross']))),
    );
    // The file is this process's user's alone.
    expect(fs.statSync(path.join(exportsDir(), `${id}.csv`)).mode & 0o777).toBe(0o600);
  }, 60000);

  it('a CSV cell a spreadsheet would run as a formula is defused, as in the crosstab CSV', async () => {
    const id = await start(analyst, {
      method: 'QUERIES.EXECUTE',
      params: { index: 'hostile', query: '*', sort: [{ field: 'n' }] },
      format: 'csv',
    });
    expect((await finished(analyst, id)).state).toBe('done');
    const rows = parse((await download(analyst, id)).text, { columns: true }) as Array<Record<string, string>>;
    expect(rows.map((r) => r.label)).toEqual(HOSTILE.map(defused));
  }, 60000);

  it('JSON Lines, Parquet and XLSX hold the same records', async () => {
    const expected = await searchAll(analyst, dramas);
    const jsonl = await start(analyst, { method: 'QUERIES.EXECUTE', params: dramas, format: 'jsonl' });
    const parquet = await start(analyst, { method: 'QUERIES.EXECUTE', params: dramas, format: 'parquet' });
    const xlsx = await start(analyst, { method: 'QUERIES.EXECUTE', params: dramas, format: 'xlsx' });
    expect((await finished(analyst, jsonl)).state).toBe('done');
    expect((await finished(analyst, parquet)).state).toBe('done');
    const lines = (await download(analyst, jsonl)).text
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(lines.map((r) => r.Title)).toEqual(expected.map((r) => r.Title));
    const file = path.join(tmp, 'dramas.parquet');
    const res = await new Promise<Buffer>((resolve, reject) => {
      const parts: Buffer[] = [];
      void import('node:http').then(({ request }) => {
        const url = new URL(`/exports/${parquet}`, quarry.baseUrl);
        request(
          {
            host: url.hostname,
            port: url.port,
            path: url.pathname,
            headers: { Authorization: `Bearer ${analyst.token}` },
          },
          (r) => {
            r.on('data', (d: Buffer) => parts.push(d));
            r.on('end', () => resolve(Buffer.concat(parts)));
            r.on('error', reject);
          },
        ).end();
      });
    });
    fs.writeFileSync(file, res);
    const db = await DuckDBInstance.create(':memory:');
    const c = await db.connect();
    const read = await c.runAndReadAll(`SELECT "Title" FROM read_parquet('${file}')`);
    expect(read.getRowObjects().map((r) => r.Title)).toEqual(expected.map((r) => r.Title));
    c.closeSync();
    // The workbook: a header of the index's fields, then the records in the search's sort.
    expect(await finished(analyst, xlsx)).toMatchObject({ state: 'done', rowsWritten: expected.length });
    const got = await fetch(new URL(`/exports/${xlsx}`, quarry.baseUrl), {
      headers: { Authorization: `Bearer ${analyst.token}` },
    });
    expect(got.headers.get('content-type')).toBe('application/vnd.openxmlformats-officedocument.spreadsheetml.sheet');
    const book = XLSX.read(Buffer.from(await got.arrayBuffer()), { type: 'buffer' });
    const rows = XLSX.utils.sheet_to_json<Record<string, unknown>>(book.Sheets[book.SheetNames[0]]);
    expect(rows.map((r) => r.Title)).toEqual(expected.map((r) => r.Title));
    expect(Object.keys(rows[0])).toEqual(expect.arrayContaining(['Title', 'Major Genre', 'IMDB Rating']));
  }, 60000);

  it('realms apply exactly as the search applies them', async () => {
    const params = { index: 'movies', query: '*', sort: [{ field: 'Title' }] };
    const id = await start(comedyOnly, { method: 'QUERIES.EXECUTE', params, format: 'jsonl' });
    const s = await finished(comedyOnly, id);
    const expected = await searchAll(comedyOnly, params);
    expect(s.rowsWritten).toBe(expected.length);
    const lines = (await download(comedyOnly, id)).text
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(lines.every((r) => /comedy/i.test(String(r['Major Genre'])))).toBe(true);
    expect(lines.map((r) => r.Title)).toEqual(expected.map((r) => r.Title));
  }, 60000);

  const genres = {
    index: 'movies',
    query: '*',
    rows: ['Major Genre'],
    columns: [{ field: 'MPAA Rating' }],
    totals: [{ aggregationType: 'Sum', field: 'Worldwide Gross' }, { aggregationType: 'Count' }],
    subtotals: true,
  };

  async function crosstabData<T>(who: Identity, params: Record<string, unknown>): Promise<T> {
    const body = (await call(who, 'CROSSTAB.EXECUTE', params)).json as { result: { data: T } };
    return body.result.data;
  }

  it('a crosstab exports the table CROSSTAB.EXECUTE renders: CSV and XLSX as rendered, JSON Lines of its rows', async () => {
    const csv = await start(analyst, { method: 'CROSSTAB.EXECUTE', params: genres, format: 'csv' });
    const xlsx = await start(analyst, { method: 'CROSSTAB.EXECUTE', params: genres, format: 'xlsx' });
    const jsonl = await start(analyst, { method: 'CROSSTAB.EXECUTE', params: genres, format: 'jsonl' });
    const rendered = await crosstabData<{ data: string; rowCount: number }>(analyst, { ...genres, format: 'csv' });
    expect(await finished(analyst, csv)).toMatchObject({ state: 'done', rowsWritten: rendered.rowCount });
    expect((await download(analyst, csv)).text).toBe(rendered.data);
    expect((await finished(analyst, xlsx)).state).toBe('done');
    const book = await download(analyst, xlsx);
    expect(book.headers['content-type']).toBe('application/vnd.openxmlformats-officedocument.spreadsheetml.sheet');
    expect(book.headers['content-disposition']).toBe(`attachment; filename="export-${xlsx}.xlsx"`);
    const json = await crosstabData<{ data: { rows: unknown[]; grandTotal: unknown } }>(analyst, {
      ...genres,
      format: 'json',
    });
    expect((await finished(analyst, jsonl)).state).toBe('done');
    const lines = (await download(analyst, jsonl)).text
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(lines.slice(0, -1)).toEqual(json.data.rows);
    expect(lines.at(-1)).toMatchObject({ key: null, grandTotal: json.data.grandTotal });
    // The export's format says how it is written: a crosstab format or chart in params is refused, as is parquet.
    for (const bad of [
      { method: 'CROSSTAB.EXECUTE', params: { ...genres, format: 'html' }, format: 'csv' },
      { method: 'CROSSTAB.EXECUTE', params: { ...genres, chartType: 'Pie2D' }, format: 'csv' },
      { method: 'CROSSTAB.EXECUTE', params: genres, format: 'parquet' },
      { method: 'CROSSTAB.EXECUTE', params: { ...genres, saveReport: { name: 'x' } }, format: 'csv' },
    ]) {
      const res = (await call(analyst, 'EXPORTS.START', bad)).json as { error: { code: number } };
      expect(res.error.code).toBe(400);
    }
  }, 60000);

  it('a saved report exports what its method and params give, and needs reports:read', async () => {
    const saved = (
      await call(analyst, 'QUERIES.EXECUTE', {
        ...dramas,
        pageSize: 5,
        saveReport: { name: 'Dramas by gross' },
      })
    ).json as { result: { data: { report: { guid: string } } } };
    const guid = saved.result.data.report.guid;
    const id = await start(analyst, { method: 'REPORTS.EXECUTE', params: { guid }, format: 'jsonl' });
    const expected = await searchAll(analyst, dramas);
    expect(await finished(analyst, id)).toMatchObject({ state: 'done', rowsWritten: expected.length });
    const lines = (await download(analyst, id)).text
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(lines.map((r) => r.Title)).toEqual(expected.map((r) => r.Title));
    const table = (await call(analyst, 'CROSSTAB.EXECUTE', { ...genres, saveReport: { name: 'Genres' } })).json as {
      result: { data: { report: { guid: string } } };
    };
    const tableId = await start(analyst, {
      method: 'REPORTS.EXECUTE',
      params: { guid: table.result.data.report.guid },
      format: 'csv',
    });
    expect((await finished(analyst, tableId)).state).toBe('done');
    expect((await download(analyst, tableId)).text).toBe(
      (await crosstabData<{ data: string }>(analyst, { ...genres, format: 'csv' })).data,
    );
    const noReports = await createIdentity(stack.dataDir, 'analyst', { scopes: 'query:execute' });
    const refused = (
      await call(noReports, 'EXPORTS.START', { method: 'REPORTS.EXECUTE', params: { guid }, format: 'csv' })
    ).json as { error: { code: number } };
    expect(refused.error.code).toBe(403);
    const unknown = (
      await call(analyst, 'EXPORTS.START', {
        method: 'REPORTS.EXECUTE',
        params: { guid: '00000000-0000-4000-8000-000000000000' },
        format: 'csv',
      })
    ).json as { error: { code: number } };
    expect(unknown.error.code).toBe(404);
  }, 60000);

  it('another user’s export is a 404 exactly like an unknown id, for STATUS and the download', async () => {
    const id = await start(analyst, { method: 'QUERIES.EXECUTE', params: dramas, format: 'csv' });
    await finished(analyst, id);
    const unknown = '0123456789abcdef0123456789abcdef';
    const strip = (r: RawResponse) => ({ status: r.status, body: r.text });
    expect(strip(await download(other, id))).toEqual(strip(await download(other, unknown)));
    expect((await download(other, id)).status).toBe(404);
    const st = (await call(other, 'EXPORTS.STATUS', { exportId: id })).json as {
      error: { code: number; data: unknown };
    };
    const su = (await call(other, 'EXPORTS.STATUS', { exportId: unknown })).json as typeof st;
    expect(st.error.code).toBe(404);
    expect(st.error).toEqual(su.error);
    // No token at all: 401.
    expect((await rawRequest(quarry.baseUrl, { method: 'GET', path: `/exports/${id}` })).status).toBe(401);
  }, 60000);

  it('the download asks what EXPORTS.STATUS asks: an embed token or a token without query:execute is a 403', async () => {
    const id = await start(analyst, { method: 'QUERIES.EXECUTE', params: everyMovie, format: 'csv' });
    expect((await finished(analyst, id)).state).toBe('done');
    // The creator's own tokens, each issued by the creator: an embed token for the index with a realm, one
    // for a saved report, and an API token that may only list indexes.
    const embed = async (params: Record<string, unknown>) => {
      const body = (await call(analyst, 'TOKENS.EMBED', { ttlSeconds: 600, ...params })).json as {
        result?: { data: { token: string } };
        error?: unknown;
      };
      if (!body.result) throw new Error(JSON.stringify(body.error));
      return { user: analyst.user, token: body.result.data.token, tokenId: 'embed' };
    };
    const saved = (await call(analyst, 'QUERIES.EXECUTE', { ...dramas, saveReport: { name: 'download door' } }))
      .json as { result: { data: { report: { guid: string } } } };
    const guid = saved.result.data.report.guid;
    const indexEmbed = await embed({ index: 'movies', realm: '(Major Genre):Comedy' });
    const reportEmbed = await embed({ guid });
    const listOnly = await createIdentity(stack.dataDir, 'analyst', { scopes: 'indexes:read' });
    for (const [who, detail] of [
      [indexEmbed, /embed token for an index may only call/],
      [reportEmbed, /embed token for a report may only run/],
      [listOnly, /lacks the required scope "query:execute"/],
    ] as const) {
      const res = await download(who, id);
      expect({ status: res.status, type: res.headers['content-type'] }).toEqual({
        status: 403,
        type: 'application/problem+json',
      });
      expect((JSON.parse(res.text) as { detail: string }).detail).toMatch(detail);
      expect(res.text).not.toContain('Title');
      // STATUS says the same to the same token.
      const st = (await call(who, 'EXPORTS.STATUS', { exportId: id })).json as { error: { code: number } };
      expect(st.error.code).toBe(403);
    }
    // The creator's full token still downloads it.
    expect((await download(analyst, id)).status).toBe(200);
  }, 120000);

  it('an expired file is a 410, and STATUS no longer knows it', async () => {
    const id = await start(analyst, { method: 'QUERIES.EXECUTE', params: dramas, format: 'csv' });
    await finished(analyst, id);
    const recordFile = path.join(exportsDir(), `${id}.json`);
    const record = JSON.parse(fs.readFileSync(recordFile, 'utf8')) as Record<string, unknown>;
    fs.writeFileSync(recordFile, JSON.stringify({ ...record, expiresAt: new Date(Date.now() - 1000).toISOString() }));
    const res = await download(analyst, id);
    expect(res.status).toBe(410);
    expect((await call(analyst, 'EXPORTS.STATUS', { exportId: id })).json).toMatchObject({ error: { code: 404 } });
  }, 60000);

  it('an export over QUARRY_EXPORT_MAX_ROWS is a 400 naming the setting, before any work', async () => {
    const before = fs.readdirSync(exportsDir()).length;
    const res = (
      await call(analyst, 'EXPORTS.START', {
        method: 'QUERIES.EXECUTE',
        params: { index: 'flights', query: '*' },
        format: 'csv',
      })
    ).json as { error: { code: number; data: { detail: string } } };
    expect(res.error.code).toBe(400);
    expect(res.error.data.detail).toContain('QUARRY_EXPORT_MAX_ROWS');
    expect(res.error.data.detail).toContain(String(MAX_ROWS));
    expect(fs.readdirSync(exportsDir()).length).toBe(before);
  }, 60000);

  it('a crosstab with more rows than QUARRY_EXPORT_MAX_ROWS fails its export with a clear error, no file written', async () => {
    // Nearly a row per flight: record-level rows, thousands of them.
    const perFlight = { index: 'flights', rows: ['distance', 'delay'], totals: [{ aggregationType: 'Count' }] };
    const rows = (await crosstabData<{ rowCount: number }>(analyst, { ...perFlight, format: 'csv' })).rowCount;
    expect(rows).toBeGreaterThan(MAX_ROWS);
    for (const format of ['csv', 'jsonl', 'xlsx']) {
      const id = await start(analyst, { method: 'CROSSTAB.EXECUTE', params: perFlight, format });
      expect(await finished(analyst, id)).toMatchObject({
        state: 'failed',
        error: `The export failed: the table has ${rows} rows, more than QUARRY_EXPORT_MAX_ROWS (${MAX_ROWS}); narrow the query or group the rows`,
      });
      expect((await download(analyst, id)).status).toBe(409);
      expect(fs.readdirSync(exportsDir()).filter((n) => n.startsWith(id))).toEqual([`${id}.json`]);
    }
    // Grouped, the same records export.
    const byMonth = { ...perFlight, rows: [{ field: 'date', dateGroup: 'month' }] };
    const ok = await start(analyst, { method: 'CROSSTAB.EXECUTE', params: byMonth, format: 'csv' });
    expect((await finished(analyst, ok)).state).toBe('done');
  }, 120000);

  it('hostile params and ids are refused, and never reach a file outside the exports folder', async () => {
    for (const exportId of [
      '../sqlite',
      '../../etc/passwd',
      'x'.repeat(100_000),
      '',
      'ABCDEF0123456789ABCDEF0123456789',
      7,
    ]) {
      const res = (await call(analyst, 'EXPORTS.STATUS', { exportId })).json as { error: { code: number } };
      expect(res.error.code).toBe(400);
    }
    for (const p of [
      '%2e%2e%2fmetadata.sqlite',
      '..%2F..%2Fetc%2Fpasswd',
      'a'.repeat(5000),
      '%00',
      `${'0'.repeat(32)}.json`,
    ]) {
      const res = await download(analyst, p);
      expect(res.status).toBe(404);
      expect(res.text).not.toContain('root:');
    }
    const bad = [
      { method: 'REPORTS.DELETE', params: { guid: 'x' }, format: 'csv' },
      { method: 'QUERIES.EXECUTE', params: { index: 'movies', query: '*' }, format: 'exe' },
      { method: 'QUERIES.EXECUTE', params: { index: 'movies', query: '*', bogus: 1 }, format: 'csv' },
      { method: 'QUERIES.EXECUTE', params: 'movies', format: 'csv' },
      { method: 'QUERIES.EXECUTE', params: { index: 'movies', query: '*' }, format: 'csv', path: '/etc/passwd' },
    ];
    for (const params of bad) {
      const res = (await call(analyst, 'EXPORTS.START', params)).json as { error: { code: number } };
      expect(res.error.code).toBe(400);
    }
    const unknownIndex = (
      await call(analyst, 'EXPORTS.START', {
        method: 'QUERIES.EXECUTE',
        params: { index: 'nope', query: '*' },
        format: 'csv',
      })
    ).json as { error: { code: number } };
    expect(unknownIndex.error.code).toBe(404);
  }, 60000);

  it('the client starts an export, follows it and downloads it as a stream it reads piece by piece', async () => {
    const client = new QuarryClient({ url: quarry.baseUrl, token: analyst.token });
    const movies = { index: 'movies', query: '*', sort: [{ field: 'Title', direction: 'desc' as const }] };
    const total = (await client.queries.execute({ ...movies, pageSize: 1 })).total;
    expect(total).toBeGreaterThan(3000);
    const { exportId } = await client.exports.start({ method: 'QUERIES.EXECUTE', params: movies, format: 'csv' });
    // Not done yet (or just done): a download before it is done is a 409, told as a QuarryError.
    const early = await client.exports.download({ exportId }).then(
      (d) => d.body.cancel().then(() => 'done already'),
      (err: unknown) => err,
    );
    if (early !== 'done already') expect(early).toMatchObject({ code: 409 });
    let s = await client.exports.status({ exportId });
    while (s.state === 'queued' || s.state === 'running') {
      await new Promise((r) => setTimeout(r, 50));
      s = await client.exports.status({ exportId });
    }
    expect(s).toMatchObject({ state: 'done', rowsWritten: total });
    const file = await client.exports.download({ exportId });
    expect(file).toMatchObject({ fileName: `export-${exportId}.csv`, bytes: s.bytes });
    expect(file.contentType).toMatch(/^text\/csv/);
    // Read as it arrives: many pieces, none of them the whole file, the records all there.
    const sizes: number[] = [];
    const counted = countCsv(
      Readable.fromWeb(file.body as never).on('data', (chunk: Buffer) => sizes.push(chunk.length)),
    );
    expect(await counted).toBe(total);
    expect(sizes.reduce((a, b) => a + b, 0)).toBe(s.bytes);
    expect(sizes.length).toBeGreaterThan(4);
    expect(Math.max(...sizes)).toBeLessThan(s.bytes / 4);
    // Another user's export, an unknown one and an aborted download are QuarryErrors.
    const stranger = new QuarryClient({ url: quarry.baseUrl, token: other.token });
    await expect(stranger.exports.download({ exportId })).rejects.toMatchObject({ code: 404 });
    await expect(client.exports.download({ exportId: '0'.repeat(32) })).rejects.toBeInstanceOf(QuarryError);
    const abort = new AbortController();
    abort.abort();
    await expect(client.exports.download({ exportId }, { signal: abort.signal })).rejects.toMatchObject({
      code: 'ABORTED',
    });
  }, 60000);
});

import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { parse } from 'csv-parse/sync';
import { parse as parseStream } from 'csv-parse';
import { DuckDBInstance } from '@duckdb/node-api';
import { rawRequest, rpcClient, type RawResponse } from './support/http';
import { createIdentity, type Identity } from './support/identities';
import { REPO_ROOT, runCli, startQuarry, type RunningQuarry } from './support/quarry-process';

const VEGA = path.join(REPO_ROOT, 'node_modules', 'vega-datasets', 'data');
import { startStackWithData, type Stack } from './support/stack';

/** Labels a record could carry that break CSV lines or run as spreadsheet formulas. */
const HOSTILE = ['two\nlines', 'say "hi", ok', '=HYPERLINK("http://evil.example","x")', '-2+3', '@x', '+1', '-5'];
const defused = (label: string) => (/^[=+\-@\t\r]/.test(label) && !/^-?\d+$/.test(label) ? `'${label}` : label);

const MAX_ROWS = 5000;

interface Status {
  state: string;
  rowsWritten: number;
  bytes: number;
  error?: string;
  expiresAt?: string;
}

describe('EXPORTS.START, EXPORTS.STATUS and GET /exports/<id>', () => {
  let stack: Stack;
  let quarry: RunningQuarry;
  let analyst: Identity;
  let other: Identity;
  let comedyOnly: Identity;
  let tmp: string;

  const call = (who: Identity, method: string, params: unknown) =>
    rpcClient(quarry.baseUrl, who.token).call(method, params);
  const download = (who: Identity, id: string) =>
    rawRequest(quarry.baseUrl, {
      method: 'GET',
      path: `/exports/${id}`,
      headers: { Authorization: `Bearer ${who.token}` },
    });

  async function start(who: Identity, params: Record<string, unknown>): Promise<string> {
    const res = await call(who, 'EXPORTS.START', params);
    const body = res.json as { result?: { data: { exportId: string } }; error?: unknown };
    if (!body.result) throw new Error(JSON.stringify(body.error));
    return body.result.data.exportId;
  }

  async function status(who: Identity, exportId: string): Promise<Status> {
    const body = (await call(who, 'EXPORTS.STATUS', { exportId })).json as { result?: { data: Status } };
    if (!body.result) throw new Error(JSON.stringify(body));
    return body.result.data;
  }

  async function finished(who: Identity, exportId: string, timeoutMs = 60_000): Promise<Status> {
    for (let i = 0; i < timeoutMs / 100; i++) {
      const s = await status(who, exportId);
      if (s.state === 'done' || s.state === 'failed') return s;
      await new Promise((r) => setTimeout(r, 100));
    }
    throw new Error('the export did not finish');
  }

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

  /** Streams the download through a CSV parser: a 3M-row file is never held whole. */
  async function countCsvRecords(who: Identity, id: string): Promise<number> {
    const res = await fetch(new URL(`/exports/${id}`, quarry.baseUrl), {
      headers: { Authorization: `Bearer ${who.token}` },
    });
    expect(res.status).toBe(200);
    const parser = Readable.fromWeb(res.body as never).pipe(parseStream({ columns: true }));
    let n = 0;
    for await (const row of parser) if (row) n++;
    return n;
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

  it('JSON Lines and Parquet hold the same records', async () => {
    const expected = await searchAll(analyst, dramas);
    const jsonl = await start(analyst, { method: 'QUERIES.EXECUTE', params: dramas, format: 'jsonl' });
    const parquet = await start(analyst, { method: 'QUERIES.EXECUTE', params: dramas, format: 'parquet' });
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

  it('a full disk fails the export with a clear error and removes the partial file', async () => {
    await quarry.stop();
    let mounted = false;
    try {
      execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=96k', 'tmpfs', exportsDir()]);
      mounted = true;
    } catch {
      // Without the right to mount, nothing here can fill a disk: the case is not run.
    }
    try {
      quarry = await startQuarry({
        topology: 'all',
        dataDir: stack.dataDir,
        // The engine's own write fails, not the free-space guard (tested on its own below).
        env: { QUARRY_EXPORT_MAX_ROWS: String(MAX_ROWS), QUARRY_EXPORT_MIN_FREE_MB: '0' },
      });
      if (!mounted) {
        console.warn('skipped: the full-disk case needs the right to mount a tiny tmpfs');
        return;
      }
      const id = await start(analyst, {
        method: 'QUERIES.EXECUTE',
        params: { index: 'movies', query: '*' },
        format: 'csv',
      });
      const s = await finished(analyst, id);
      expect(s.state).toBe('failed');
      expect(s.error).toBe('The export failed: The export file could not be written: No space left on device');
      expect(fs.existsSync(path.join(exportsDir(), `${id}.csv`))).toBe(false);
      expect(fs.readdirSync(exportsDir()).filter((n) => n.endsWith('.part'))).toEqual([]);
      expect((await download(analyst, id)).status).toBe(409);
    } finally {
      await quarry.stop();
      if (mounted) execFileSync('umount', [exportsDir()]);
      quarry = await startQuarry({
        topology: 'all',
        dataDir: stack.dataDir,
        env: { QUARRY_EXPORT_MAX_ROWS: String(MAX_ROWS) },
      });
    }
  }, 120000);

  it('an export the server was killed in the middle of fails clearly on restart; its partial file is never served', async () => {
    // What a SIGKILL mid-export leaves: the record says running, half a file lies beside it.
    const id = 'feedfacefeedfacefeedfacefeedface';
    const mine = await start(analyst, {
      method: 'QUERIES.EXECUTE',
      params: { index: 'hostile', query: '*' },
      format: 'csv',
    });
    await finished(analyst, mine);
    const userId = (JSON.parse(fs.readFileSync(path.join(exportsDir(), `${mine}.json`), 'utf8')) as { userId: string })
      .userId;
    await quarry.kill();
    fs.writeFileSync(
      path.join(exportsDir(), `${id}.json`),
      JSON.stringify({
        id,
        userId,
        method: 'QUERIES.EXECUTE',
        format: 'csv',
        state: 'running',
        rowsWritten: 0,
        bytes: 0,
        // Older than a record whose job is still being added.
        createdAt: new Date(Date.now() - 120_000).toISOString(),
      }),
    );
    fs.writeFileSync(path.join(exportsDir(), `${id}.csv`), 'Title,Year\n"half');
    quarry = await startQuarry({
      topology: 'all',
      dataDir: stack.dataDir,
      env: { QUARRY_EXPORT_MAX_ROWS: String(MAX_ROWS) },
    });
    const s = await status(analyst, id);
    expect(s.state).toBe('failed');
    expect(s.error).toBe('The export failed: its job is no longer in the queue; start it again');
    expect(fs.existsSync(path.join(exportsDir(), `${id}.csv`))).toBe(false);
    expect((await download(analyst, id)).status).toBe(409);
  }, 120000);

  it('a server killed while an export runs takes it up again after the restart; no partial file is ever served', async () => {
    await quarry.stop();
    const env = { QUARRY_EXPORT_MAX_ROWS: '10000000' };
    quarry = await startQuarry({ topology: 'all', dataDir: stack.dataDir, env });
    const flights = { index: 'flights3m', query: '*', sort: [{ field: 'delay', direction: 'desc' }] };
    const total = (
      (await call(analyst, 'QUERIES.EXECUTE', { ...flights, pageSize: 1 })).json as {
        result: { data: { total: number } };
      }
    ).result.data.total;
    const id = await start(analyst, { method: 'QUERIES.EXECUTE', params: flights, format: 'csv' });
    // Progress while it runs: records and bytes already written, the file not yet downloadable.
    let seen: Status | undefined;
    for (let i = 0; i < 1200 && !seen; i++) {
      const s = await status(analyst, id);
      if (s.state === 'running' && s.rowsWritten > 0) seen = s;
      else if (s.state !== 'queued' && s.state !== 'running') throw new Error(JSON.stringify(s));
      else await new Promise((r) => setTimeout(r, 50));
    }
    expect(seen!.rowsWritten).toBeLessThan(total);
    expect(seen!.bytes).toBeGreaterThan(seen!.rowsWritten * 10);
    expect((await download(analyst, id)).status).toBe(409);
    await quarry.kill();
    const left = JSON.parse(fs.readFileSync(path.join(exportsDir(), `${id}.json`), 'utf8')) as { state: string };
    expect(left.state).toBe('running');
    expect(fs.existsSync(path.join(exportsDir(), `${id}.csv`))).toBe(false);
    quarry = await startQuarry({ topology: 'all', dataDir: stack.dataDir, env });
    expect((await download(analyst, id)).status).toBe(409);
    // The job's lock lapses and the restarted worker runs it again, from the start.
    const s = await finished(analyst, id, 120_000);
    expect(s).toMatchObject({ state: 'done', rowsWritten: total });
    const lines = await countCsvRecords(analyst, id);
    expect(lines).toBe(total);
    expect(fs.readdirSync(exportsDir()).filter((n) => n.startsWith(id) && n.endsWith('.part'))).toEqual([]);
  }, 240000);

  it('an export whose run is killed twice fails clearly, its partial file gone', async () => {
    const env = { QUARRY_EXPORT_MAX_ROWS: '10000000' };
    const flights = { index: 'flights3m', query: '*', sort: [{ field: 'delay', direction: 'desc' }] };
    const id = await start(analyst, { method: 'QUERIES.EXECUTE', params: flights, format: 'csv' });
    const runs = new Set<string>();
    const newRun = () =>
      fs.readdirSync(exportsDir()).find((n) => n.startsWith(`${id}.`) && n.endsWith('.part') && !runs.has(n));
    for (let round = 0; round < 2; round++) {
      // A run is under way once its own partial file appears (the record says running from the last one).
      let run: string | undefined;
      for (let i = 0; i < 6000 && !run; i++) {
        run = newRun();
        if (!run) await new Promise((r) => setTimeout(r, 10));
      }
      if (!run) throw new Error(`round ${round}: no run started: ${JSON.stringify(await status(analyst, id))}`);
      runs.add(run);
      await quarry.kill();
      quarry = await startQuarry({ topology: 'all', dataDir: stack.dataDir, env });
    }
    const s = await finished(analyst, id, 120_000);
    expect(s.state).toBe('failed');
    expect(s.error).toBe(
      'The export failed: the server stopped while it ran, and again when it was taken up again; start it again',
    );
    expect(fs.readdirSync(exportsDir()).filter((n) => n.startsWith(id))).toEqual([`${id}.json`]);
    expect((await download(analyst, id)).status).toBe(409);
  }, 240000);

  it('a volume with less free space than QUARRY_EXPORT_MIN_FREE_MB stops the export with a clear error', async () => {
    await quarry.stop();
    const env = { QUARRY_EXPORT_MAX_ROWS: '10000000', QUARRY_EXPORT_MIN_FREE_MB: '1000000000' };
    quarry = await startQuarry({ topology: 'all', dataDir: stack.dataDir, env });
    const id = await start(analyst, {
      method: 'QUERIES.EXECUTE',
      params: { index: 'flights3m', query: '*', sort: [{ field: 'delay' }] },
      format: 'jsonl',
    });
    const s = await finished(analyst, id);
    expect(s.state).toBe('failed');
    expect(s.error).toMatch(
      /^The export failed: the exports volume has \d+ MB free, less than QUARRY_EXPORT_MIN_FREE_MB \(1000000000\); the partial file was removed$/,
    );
    expect(fs.readdirSync(exportsDir()).filter((n) => n.startsWith(id))).toEqual([`${id}.json`]);
  }, 120000);
});

import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import { exportCalls, type ExportStatus } from './support/exports';
import { createIdentity, type Identity } from './support/identities';
import { VEGA } from './support/datasets';
import { runCli, startQuarry } from './support/quarry-process';
import { startStackWithData, type Stack } from './support/stack';

/*
 * EXPORTS.STATUS while a Parquet or XLSX export runs: the rows written so far move before it is done (a
 * Parquet file's rows counted from its pages as they reach the disk, a workbook's from the rows it has
 * written), never past the end, and end at every record. The status is followed every 50 ms here
 * (QUARRY_EXPORT_PROGRESS_MS) so that an export of a few seconds shows several steps.
 */

const FLIGHTS = path.join(VEGA, 'flights-3m.parquet');
const SERVER_ENV = { QUARRY_EXPORT_MAX_ROWS: '10000000', QUARRY_EXPORT_PROGRESS_MS: '50' };

describe('EXPORTS.STATUS rows while a Parquet or XLSX export runs', () => {
  let stack: Stack;
  let analyst: Identity;
  let tmp: string;
  const { start, status, underWay } = exportCalls(() => stack.quarry.baseUrl);

  /** Records of flights-3m matching a SQL condition, counted by DuckDB on the file itself. */
  async function countFlights(where: string): Promise<number> {
    const db = await DuckDBInstance.create(':memory:');
    const c = await db.connect();
    try {
      const read = await c.runAndReadAll(`SELECT count(*) AS n FROM read_parquet('${FLIGHTS}') WHERE ${where}`);
      return Number(read.getRowObjects()[0].n);
    } finally {
      c.closeSync();
    }
  }

  /** Every status seen from the start to the end, polled as fast as the server answers. */
  async function follow(id: string): Promise<ExportStatus[]> {
    const seen: ExportStatus[] = [];
    for (let i = 0; i < 20_000; i++) {
      const s = await status(analyst, id);
      seen.push(s);
      if (s.state === 'done' || s.state === 'failed') return seen;
      await new Promise((r) => setTimeout(r, 10));
    }
    throw new Error('the export did not finish');
  }

  function expectRowsToMove(seen: ExportStatus[], total: number): void {
    const last = seen.at(-1)!;
    expect(last).toMatchObject({ state: 'done', rowsWritten: total });
    const running = seen.filter((s) => s.state === 'running').map((s) => s.rowsWritten);
    // Rows seen before the end, strictly between none and all, and never going back.
    expect(running.filter((n) => n > 0 && n < total).length).toBeGreaterThanOrEqual(1);
    for (let i = 1; i < running.length; i++) expect(running[i]).toBeGreaterThanOrEqual(running[i - 1]);
    expect(Math.max(...running)).toBeLessThanOrEqual(total);
  }

  beforeAll(async () => {
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'quarry-export-progress-'));
    stack = await startStackWithData({
      env: SERVER_ENV,
      extra: async (env) => {
        const r = await runCli(['index', 'load', 'flights3m', FLIGHTS], env);
        if (r.code !== 0) throw new Error(r.stderr);
      },
    });
    analyst = await createIdentity(stack.dataDir, 'progress', { indexes: '*' });
    // Hang guards below, not targets: the exports of up to 3M records take minutes on a loaded machine.
  }, 360_000);

  afterAll(async () => {
    await stack?.quarry.stop();
    fs.rmSync(tmp, { recursive: true, force: true });
  });

  it('a Parquet export of 3M records: rows counted while DuckDB writes the file, all of them at the end', async () => {
    const total = await countFlights('true');
    const id = await start(analyst, {
      method: 'QUERIES.EXECUTE',
      params: { index: 'flights3m', query: '*', sort: [{ field: 'delay', direction: 'desc' }] },
      format: 'parquet',
    });
    const seen = await follow(id);
    expectRowsToMove(seen, total);
    // The file is the rows it says: DuckDB reads them back from the download.
    const res = await fetch(new URL(`/exports/${id}`, stack.quarry.baseUrl), {
      headers: { Authorization: `Bearer ${analyst.token}` },
    });
    const file = path.join(tmp, 'all.parquet');
    fs.writeFileSync(file, Buffer.from(await res.arrayBuffer()));
    const db = await DuckDBInstance.create(':memory:');
    const c = await db.connect();
    const read = await c.runAndReadAll(`SELECT count(*) AS n FROM read_parquet('${file}')`);
    c.closeSync();
    expect(Number(read.getRowObjects()[0].n)).toBe(total);
  }, 360_000);

  it('an XLSX export: rows counted as the workbook is written, after the engine’s staged records', async () => {
    const total = await countFlights('delay >= 30');
    expect(total).toBeGreaterThan(300_000);
    const id = await start(analyst, {
      method: 'QUERIES.EXECUTE',
      params: { index: 'flights3m', query: 'delay:[30 TO *]', sort: [{ field: 'delay' }] },
      format: 'xlsx',
    });
    const seen = await follow(id);
    expectRowsToMove(seen, total);
    expect(seen.at(-1)!.bytes).toBeGreaterThan(1_000_000);
  }, 600_000);

  // Without an EXPORTS call that cancels, a run is cancelled when its server stops (SIGTERM, a rolling
  // restart): the workbook's conversion must end then, not run on until the process exits, leaving its
  // partial files on the volume and its record saying running.
  it('an XLSX export whose server stops while the workbook is written stops converting and removes its files', async () => {
    const exportsDir = path.join(stack.dataDir, 'exports');
    const total = await countFlights('true');
    const id = await start(analyst, {
      method: 'QUERIES.EXECUTE',
      params: { index: 'flights3m', query: '*', sort: [{ field: 'delay' }] },
      format: 'xlsx',
    });
    // A workbook's rows are reported by the converter only: rows > 0 means the conversion is under way.
    const converting = await underWay(analyst, id, 10);
    expect(converting.rowsWritten).toBeLessThan(total);
    const partials = () => fs.readdirSync(exportsDir).filter((n) => n.startsWith(`${id}.`) && n.endsWith('.part'));
    // The staged JSON Lines and the workbook being written.
    expect(partials()).toHaveLength(2);
    await stack.quarry.stop();
    // The run ended before the process did: it removed both files and handed the job back.
    expect(partials()).toEqual([]);
    expect(fs.readdirSync(exportsDir).filter((n) => n.startsWith(id))).toEqual([`${id}.json`]);
    const left = JSON.parse(fs.readFileSync(path.join(exportsDir, `${id}.json`), 'utf8')) as ExportStatus;
    expect(left).toMatchObject({ state: 'queued', rowsWritten: 0 });
    // Taken up again by the next server, from the start.
    stack.quarry = await startQuarry({ topology: 'all', dataDir: stack.dataDir, env: SERVER_ENV });
    expect((await underWay(analyst, id)).rowsWritten).toBeLessThan(total);
  }, 900_000);
});

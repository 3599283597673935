import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { exportCalls } from './support/exports';
import { createIdentity, type Identity } from './support/identities';
import { REPO_ROOT, runCli, startQuarry, type RunningQuarry } from './support/quarry-process';
import { startStackWithData, type Stack } from './support/stack';

const VEGA = path.join(REPO_ROOT, 'node_modules', 'vega-datasets', 'data');
const MAX_ROWS = 5000;

/*
 * What goes wrong while an export runs: the server killed (once: the job runs again; twice: it fails), the
 * disk full, the volume short of space. The server is stopped, killed and restarted on the same data dir
 * (its private Redis keeps the queue in an append-only file there).
 */
describe('exports when the server or its disk fails', () => {
  let stack: Stack;
  let quarry: RunningQuarry;
  let analyst: Identity;

  const { call, download, start, status, finished, countCsvRecords } = exportCalls(() => quarry.baseUrl);
  const exportsDir = () => path.join(stack.dataDir, 'exports');

  /**
   * Waits for a new run of the export (its own partial file appears), then freezes the server (SIGSTOP) so
   * that what the run left can be read before the kill: how long a run takes depends on the machine, and
   * the test does not race it. Undefined when the export was published first.
   */
  async function freezeOnNewRun(id: string, seen: Set<string>): Promise<string | undefined> {
    const newRun = () =>
      fs.readdirSync(exportsDir()).find((n) => n.startsWith(`${id}.`) && n.endsWith('.part') && !seen.has(n));
    const published = () => fs.existsSync(path.join(exportsDir(), `${id}.csv`));
    for (const end = Date.now() + 300_000; Date.now() < end;) {
      const run = newRun();
      if (run) {
        for (const pid of quarry.pids()) process.kill(pid, 'SIGSTOP');
        seen.add(run);
        return run;
      }
      if (published()) return undefined;
      await new Promise((r) => setTimeout(r, 2));
    }
    throw new Error(`no run of ${id} started in 300 s: ${JSON.stringify(await status(analyst, id))}`);
  }

  beforeAll(async () => {
    stack = await startStackWithData({
      env: { QUARRY_EXPORT_MAX_ROWS: String(MAX_ROWS) },
      extra: async (env) => {
        // An export of it lasts long enough to be caught in the middle: the test freezes the server the
        // moment a run's partial file appears (freezeOnNewRun), so it need not be large, only not instant.
        const big = await runCli(['index', 'load', 'flights', path.join(VEGA, 'flights-200k.json')], env);
        if (big.code !== 0) throw new Error(big.stderr);
      },
    });
    quarry = stack.quarry;
    analyst = await createIdentity(stack.dataDir, 'analyst', { indexes: '*' });
  }, 600_000);

  afterEach(() => {
    if (process.env.DEBUG_EXPORTS)
      for (const l of quarry.logs()) if (/"level":(40|50)/.test(l)) process.stderr.write(`${l}\n`);
  });

  afterAll(async () => {
    await quarry?.stop();
  });

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
  }, 300_000);

  it('an export the server was killed in the middle of fails clearly on restart; its partial file is never served', async () => {
    // What a SIGKILL mid-export leaves: the record says running, half a file lies beside it.
    const id = 'feedfacefeedfacefeedfacefeedface';
    const mine = await start(analyst, {
      method: 'QUERIES.EXECUTE',
      params: { index: 'movies', query: '(Major Genre):Western' },
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
  }, 300_000);

  it('a server killed while an export runs takes it up again after the restart; no partial file is ever served', async () => {
    await quarry.stop();
    const env = { QUARRY_EXPORT_MAX_ROWS: '10000000' };
    quarry = await startQuarry({ topology: 'all', dataDir: stack.dataDir, env });
    const flights = { index: 'flights', query: '*', sort: [{ field: 'delay', direction: 'desc' }] };
    const total = (
      (await call(analyst, 'QUERIES.EXECUTE', { ...flights, pageSize: 1 })).json as {
        result: { data: { total: number } };
      }
    ).result.data.total;
    // The kill must land while the export runs: the server is frozen as the run starts. A run published
    // within those milliseconds proves nothing and is tried again (three times at most).
    let id = '';
    const finishedFirst: string[] = [];
    for (let attempt = 0; attempt < 3; attempt++) {
      id = await start(analyst, { method: 'QUERIES.EXECUTE', params: flights, format: 'csv' });
      const run = await freezeOnNewRun(id, new Set());
      const left = JSON.parse(fs.readFileSync(path.join(exportsDir(), `${id}.json`), 'utf8')) as { state: string };
      const published = fs.existsSync(path.join(exportsDir(), `${id}.csv`));
      await quarry.kill();
      quarry = await startQuarry({ topology: 'all', dataDir: stack.dataDir, env });
      if (!run || left.state === 'done') {
        finishedFirst.push(id);
        continue;
      }
      expect(left.state).toBe('running');
      expect(published).toBe(false);
      break;
    }
    if (finishedFirst.length === 3) throw new Error('three exports finished before the kill reached them');
    expect((await download(analyst, id)).status).toBe(409);
    // The job's lock lapses and the restarted worker runs it again, from the start.
    const s = await finished(analyst, id, 300_000);
    expect(s).toMatchObject({ state: 'done', rowsWritten: total });
    const lines = await countCsvRecords(analyst, id);
    expect(lines).toBe(total);
    expect(fs.readdirSync(exportsDir()).filter((n) => n.startsWith(id) && n.endsWith('.part'))).toEqual([]);
  }, 600_000);

  it('an export whose run is killed twice fails clearly, its partial file gone', async () => {
    const env = { QUARRY_EXPORT_MAX_ROWS: '10000000' };
    const flights = { index: 'flights', query: '*', sort: [{ field: 'delay', direction: 'desc' }] };
    const id = await start(analyst, { method: 'QUERIES.EXECUTE', params: flights, format: 'csv' });
    const runs = new Set<string>();
    for (let round = 0; round < 2; round++) {
      // A run is under way once its own partial file appears (the record says running from the last one).
      const run = await freezeOnNewRun(id, runs);
      if (!run) throw new Error(`round ${round}: the export was published before the kill reached it`);
      await quarry.kill();
      quarry = await startQuarry({ topology: 'all', dataDir: stack.dataDir, env });
    }
    const s = await finished(analyst, id, 300_000);
    expect(s.state).toBe('failed');
    expect(s.error).toBe(
      'The export failed: the server stopped while it ran, and again when it was taken up again; start it again',
    );
    expect(fs.readdirSync(exportsDir()).filter((n) => n.startsWith(id))).toEqual([`${id}.json`]);
    expect((await download(analyst, id)).status).toBe(409);
  }, 600_000);

  it('a volume with less free space than QUARRY_EXPORT_MIN_FREE_MB stops the export with a clear error', async () => {
    await quarry.stop();
    const env = { QUARRY_EXPORT_MAX_ROWS: '10000000', QUARRY_EXPORT_MIN_FREE_MB: '1000000000' };
    quarry = await startQuarry({ topology: 'all', dataDir: stack.dataDir, env });
    const id = await start(analyst, {
      method: 'QUERIES.EXECUTE',
      params: { index: 'flights', query: '*', sort: [{ field: 'delay' }] },
      format: 'jsonl',
    });
    const s = await finished(analyst, id);
    expect(s.state).toBe('failed');
    expect(s.error).toMatch(
      /^The export failed: the exports volume has \d+ MB free, less than QUARRY_EXPORT_MIN_FREE_MB \(1000000000\); nothing was written$/,
    );
    expect(fs.readdirSync(exportsDir()).filter((n) => n.startsWith(id))).toEqual([`${id}.json`]);
  }, 300_000);
});

import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import { createIdentity, type Identity } from './support/identities';
import { QUARRY_BIN, runCli } from './support/quarry-process';
import { startStackWithData, type Stack } from './support/stack';

const WRITE = 'query:execute,indexes:read,indexes:write';
const ID = /^[0-9a-f]{32}$/;

/*
 * `quarry source add|list|run|runs|drop` end to end: the real CLI, as an operator runs it, calling the
 * real server's SOURCES.* over JSON-RPC with QUARRY_URL and QUARRY_TOKEN (sources live in the server's
 * Redis, which the CLI never reaches). The source is a SQLite file in the folder QUARRY_SOURCE_FILE_DIRS
 * names; every refusal is one line, `quarry: …`, never a stack.
 */
describe('quarry source …', () => {
  let stack: Stack;
  let tmp: string;
  let outside: string;
  let ann: Identity;
  let env: Record<string, string>;

  const quarry = (args: string[], unset: string[] = []) => runCli(args, env, { unset });

  /** The CLI with this text on its standard input (runCli gives it none). */
  function quarryWithStdin(
    args: string[],
    input: string,
  ): Promise<{ code: number | null; stdout: string; stderr: string }> {
    return new Promise((resolve) => {
      const child = spawn(process.execPath, [QUARRY_BIN, ...args], {
        env: { ...process.env, ...env },
        stdio: ['pipe', 'pipe', 'pipe'],
      });
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
      child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
      child.on('close', (code) => resolve({ code, stdout, stderr }));
      child.stdin.end(input);
    });
  }

  /** A refusal as the CLI must print it: one line, `quarry: `, no stack, nothing on stdout. */
  function refused(r: { code: number | null; stdout: string; stderr: string }, code = 1): string {
    expect({ code: r.code, stdout: r.stdout }).toEqual({ code, stdout: '' });
    expect(r.stderr).toMatch(/^quarry: [^\n]+\n$/);
    expect(r.stderr).not.toMatch(/\bat .*\.js:\d+|Error:/);
    return r.stderr.trim();
  }

  beforeAll(async () => {
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'quarry-source-cli-'));
    outside = fs.mkdtempSync(path.join(os.tmpdir(), 'quarry-source-cli-outside-'));
    for (const dir of [tmp, outside]) {
      const db = new Database(path.join(dir, 'shop.sqlite'));
      db.exec(
        `CREATE TABLE items (id INTEGER, name TEXT, weight REAL);
         INSERT INTO items VALUES (1, 'bolt', 0.5), (2, 'nut', 0.25), (3, 'washer', 0.1)`,
      );
      db.close();
    }
    stack = await startStackWithData({
      env: {
        QUARRY_SOURCE_FILE_DIRS: tmp,
        // The loopback named exactly: a database source on 127.0.0.1 is admitted (and refused at its run).
        QUARRY_SOURCE_ALLOW: '127.0.0.1:*',
      },
    });
    ann = await createIdentity(stack.dataDir, 'ann', { indexes: 'movies', scopes: WRITE });
    env = { ...stack.env, QUARRY_URL: stack.quarry.baseUrl, QUARRY_TOKEN: ann.token };
  }, 600_000);

  afterAll(async () => {
    await stack?.quarry.stop();
    for (const dir of [tmp, outside]) if (dir) fs.rmSync(dir, { recursive: true, force: true });
  });

  it('adds a SQLite source, runs it to its end, lists it and its runs, and drops it', async () => {
    const added = await quarry([
      'source',
      'add',
      'shop',
      '--index',
      'shop',
      '--kind',
      'sqlite',
      '--url',
      path.join(tmp, 'shop.sqlite'),
      '--table',
      'items',
      '--view',
      'Names=name',
    ]);
    expect(added.stderr).toBe('');
    expect(added.code).toBe(0);
    const sourceId = added.stdout.trim();
    expect(sourceId).toMatch(ID);

    // Before any run: listed, never run.
    const before = await quarry(['source', 'list']);
    expect(before.code).toBe(0);
    expect(before.stdout.split('\n')[0]).toBe('id\tname\tindex\tkind\tfrom\trefresh\tlast run\tnext run');
    expect(before.stdout).toContain(`${sourceId}\tshop\tshop\tsqlite\t${path.join(tmp, 'shop.sqlite')}\t`);
    expect(before.stdout).toContain('replace, on demand\tnever run\t-');

    const run = await quarry(['source', 'run', sourceId, '--wait']);
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    const [runId, outcome, ...rest] = run.stdout.trim().split('\n');
    expect(runId).toMatch(ID);
    expect(outcome).toBe('done: 3 rows read, 3 loaded, 0 rejected; published version 1');
    expect(rest).toEqual([]);
    // The index is the file's rows, with its view; ann reads it because her source created it.
    const found = await stack.data<{ total: number; records: Array<{ name: string }> }>(ann, 'QUERIES.EXECUTE', {
      index: 'shop',
      query: '*',
      sort: [{ field: 'id', direction: 'asc' }],
    });
    expect(found.records.map((r) => r.name)).toEqual(['bolt', 'nut', 'washer']);

    const list = await quarry(['source', 'list', '--index', 'shop']);
    expect(list.code).toBe(0);
    const rows = list.stdout.trim().split('\n');
    expect(rows).toHaveLength(2);
    expect(rows[1].split('\t').slice(0, 7)).toEqual([
      sourceId,
      'shop',
      'shop',
      'sqlite',
      path.join(tmp, 'shop.sqlite'),
      'replace, on demand',
      expect.stringMatching(/^done v1 \d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/),
    ]);
    expect((await quarry(['source', 'list', '--index', 'movies'])).stdout).toBe('no sources load movies\n');

    // A second run, by the source's name: runs lists both, newest first.
    const again = await quarry(['source', 'run', 'shop', '--wait']);
    expect(again.code).toBe(0);
    expect(again.stdout.trim().split('\n')[1]).toBe('done: 3 rows read, 3 loaded, 0 rejected; published version 2');
    const runs = await quarry(['source', 'runs', sourceId]);
    expect(runs.code).toBe(0);
    const lines = runs.stdout.trim().split('\n');
    expect(lines[0]).toBe('run\tstate\ttrigger\tqueued\tended\tread\tloaded\trejected\tversion\terror');
    expect(lines.slice(1).map((l) => l.split('\t'))).toEqual([
      [again.stdout.split('\n')[0], 'done', 'manual', expect.any(String), expect.any(String), '3', '3', '0', 'v2', '-'],
      [runId, 'done', 'manual', expect.any(String), expect.any(String), '3', '3', '0', 'v1', '-'],
    ]);

    // update changes what its flags name: a cron in a time zone, then on demand again; the rest stays.
    const scheduled = await quarry(['source', 'update', 'shop', '--cron', '0 3 * * *', '--time-zone', 'Europe/Paris']);
    expect(scheduled).toMatchObject({ code: 0, stderr: '' });
    expect(scheduled.stdout).toBe(
      `updated source ${sourceId} "shop": sqlite from ${path.join(tmp, 'shop.sqlite')} into shop; replace, cron 0 3 * * * (Europe/Paris)\n`,
    );
    const listed = (await quarry(['source', 'list'])).stdout.split('\n')[1]!.split('\t');
    expect(listed[5]).toBe('replace, cron 0 3 * * * (Europe/Paris)');
    expect(listed[7]).toMatch(/^\d{4}-\d\d-\d\dT0[12]:00:00Z$/);
    expect((await quarry(['source', 'update', sourceId, '--on-demand'])).stdout).toMatch(/; replace, on demand\n$/);
    expect(refused(await quarry(['source', 'update', 'shop', '--cron', 'every day']))).toMatch(
      /^quarry: --cron must have 5 fields/,
    );
    expect(refused(await quarry(['source', 'update', 'shop']), 2)).toBe(
      'quarry: nothing to change: give the flags of what changes (quarry source update --help)',
    );

    const drop = await quarry(['source', 'drop', sourceId]);
    expect(drop).toMatchObject({ code: 0, stderr: '' });
    expect(drop.stdout).toBe(`dropped source ${sourceId} (its schedule and runs; the index keeps what it loaded)\n`);
    expect((await quarry(['source', 'list'])).stdout).toBe('no sources\n');
    expect(refused(await quarry(['source', 'runs', sourceId]))).toBe(`quarry: Source "${sourceId}" not found`);
    // The index keeps its rows.
    expect((await stack.data<{ total: number }>(ann, 'QUERIES.EXECUTE', { index: 'shop', query: '*' })).total).toBe(3);
  });

  it('says which setting is missing, before asking anything', async () => {
    expect(refused(await quarry(['source', 'list'], ['QUARRY_TOKEN']), 2)).toBe(
      'quarry: QUARRY_TOKEN must be an API token (quarry token create)',
    );
    expect(refused(await quarry(['source', 'run', 'f'.repeat(32)], ['QUARRY_URL']), 2)).toBe(
      'quarry: QUARRY_URL must be the server (http://host:port), as npm start prints it',
    );
  });

  it('prints what the server refuses as one line in the words of the flags', async () => {
    // A file outside the folders QUARRY_SOURCE_FILE_DIRS names.
    const outsideFile = path.join(outside, 'shop.sqlite');
    const outsider = refused(
      await quarry([
        'source',
        'add',
        'x',
        '--index',
        'x',
        '--kind',
        'sqlite',
        '--url',
        outsideFile,
        '--table',
        'items',
      ]),
    );
    expect(outsider).toMatch(/^quarry: --url: .*not in a folder QUARRY_SOURCE_FILE_DIRS names/);
    expect(outsider).toContain(outsideFile);
    // The API's parameter names become the flags that set them.
    const sqlite = ['source', 'add', 'y', '--index', 'y', '--kind', 'sqlite', '--url', path.join(tmp, 'shop.sqlite')];
    expect(refused(await quarry([...sqlite, '--table', 'items', '--cron', 'every day']))).toMatch(
      /^quarry: --cron must have 5 fields/,
    );
    expect(refused(await quarry([...sqlite, '--table', 'items', '--mode', 'upsert']))).toBe(
      'quarry: --key is required with --mode upsert',
    );
    expect(refused(await quarry(sqlite))).toBe(
      'quarry: --query: a sqlite source reads a query or a table (one of them)',
    );
    // A server that is not there; a token it does not know; an index another user owns.
    const gone = await runCli(['source', 'list'], { ...env, QUARRY_URL: 'http://127.0.0.1:9' });
    expect(refused(gone)).toMatch(/^quarry: cannot reach the server at http:\/\/127\.0\.0\.1:9 \(QUARRY_URL\): /);
    const stranger = await runCli(['source', 'list'], { ...env, QUARRY_TOKEN: `qk_${'x'.repeat(43)}` });
    expect(refused(stranger)).toMatch(/^quarry: .+ \(QUARRY_TOKEN\)$/);
    expect(
      refused(
        await quarry([
          'source',
          'add',
          'm',
          '--index',
          'movies',
          '--kind',
          'sqlite',
          '--url',
          path.join(tmp, 'shop.sqlite'),
          '--table',
          'items',
        ]),
      ),
    ).toBe('quarry: Index "movies" may be written only by its owner or an admin');
    // Nothing was kept.
    expect((await quarry(['source', 'list'])).stdout).toBe('no sources\n');
  });

  it('takes a password from standard input only, and never shows it', async () => {
    const password = 'pw-Zq8#never-shown';
    const pg = [
      'source',
      'add',
      'pg',
      '--index',
      'pg',
      '--kind',
      'postgres',
      '--host',
      '127.0.0.1',
      '--port',
      '9',
      '--database',
      'shop',
      '--user',
      'quarry',
      '--table',
      'orders',
    ];
    // On the command line it is refused, saying why, before anything is sent.
    expect(refused(await quarry([...pg, '--password', password]), 2)).toMatch(
      /^quarry: the password is never taken on the command line .*--password-stdin, or put it inside --url$/,
    );
    expect((await quarry(['source', 'add', '--help'])).stdout).toMatch(
      /The password is never taken on the command line[^\n]*\n[^\n]*--password-stdin, or put it inside --url/,
    );
    const added = await quarryWithStdin([...pg, '--password-stdin'], `${password}\n`);
    expect(added.stderr).toBe('');
    expect(added.code).toBe(0);
    const sourceId = added.stdout.trim();
    expect(sourceId).toMatch(ID);
    const list = await quarry(['source', 'list']);
    expect(list.stdout).toContain(`${sourceId}\tpg\tpg\tpostgres\tquarry@127.0.0.1:9/shop (password kept)\t`);
    // Its run fails (nothing listens on port 9): the error is printed, the exit is 1, the password in neither.
    const run = await quarry(['source', 'run', sourceId, '--wait']);
    expect(run.code).toBe(1);
    expect(run.stdout.trim()).toMatch(ID);
    expect(run.stderr).toMatch(new RegExp(`^quarry: run ${run.stdout.trim()} failed: .+\\n$`));
    const runs = await quarry(['source', 'runs', sourceId]);
    expect(runs.stdout).toMatch(/\tfailed\tmanual\t/);
    for (const out of [added, list, run, runs]) expect(out.stdout + out.stderr).not.toContain(password);
    expect(stack.quarry.logs().join('\n')).not.toContain(password);
    // A password for a --url goes inside it; an empty standard input is no password.
    const url = ['source', 'add', 'u', '--index', 'u', '--kind', 'postgres', '--url', 'postgres://q@127.0.0.1:9/db'];
    expect(refused(await quarryWithStdin([...url, '--table', 't', '--password-stdin'], password), 2)).toMatch(
      /^quarry: --password-stdin goes with --host/,
    );
    expect(refused(await quarryWithStdin([...pg.slice(0, 2), 'p2', ...pg.slice(3), '--password-stdin'], ''), 2)).toBe(
      'quarry: --password-stdin read no password from standard input',
    );
    expect((await quarry(['source', 'drop', 'pg'])).code).toBe(0);
  });
});

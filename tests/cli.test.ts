import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { linesEventually, makeDataDir, runCli, startQuarry } from './support/quarry-process';
import { rpcClient } from './support/http';

describe('quarry CLI', () => {
  const env = { QUARRY_DATA_DIR: makeDataDir('quarry-cli-') };
  const lastLine = (s: string) => s.trim().split('\n').pop() ?? '';

  it('creates and lists users, refusing duplicates and bad names', async () => {
    const created = await runCli(
      ['user', 'create', 'ana', '--indexes', 'movies,airports', '--realm', 'movies=Major_Genre:Drama'],
      env,
    );
    expect(created.code).toBe(0);
    expect(created.stdout).toContain('created user ana');
    const again = await runCli(['user', 'create', 'ana'], env);
    expect(again.code).toBe(1);
    expect(again.stderr).toContain('User "ana" already exists');
    expect((await runCli(['user', 'create', 'bad name!'], env)).code).toBe(1);
    const list = await runCli(['user', 'list'], env);
    expect(list.stdout.split('\n')[0]).toBe('name\tstatus\tadmin\tindexes\trealms');
    expect(list.stdout).toMatch(/^ana\tactive\t-\tmovies,airports\tmovies=Major_Genre:Drama$/m);
  });

  it('names the columns of every list, as audit does', async () => {
    const heads = {
      user: 'name\tstatus\tadmin\tindexes\trealms',
      token: 'id\ttoken\tuser\tstatus\tscopes\texpires',
    };
    await runCli(['token', 'create', '--user', 'ana', '--scopes', 'query:execute'], env);
    for (const [what, head] of Object.entries(heads)) {
      const out = (await runCli([what, 'list'], env)).stdout.split('\n');
      expect(out[0]).toBe(head);
      expect(out.length).toBeGreaterThan(1);
    }
  });

  it('refuses to invent a data directory for a command that only reads, and says which one it reads', async () => {
    const missing = `${env.QUARRY_DATA_DIR}-nowhere`;
    for (const args of [['user', 'list'], ['token', 'list'], ['index', 'list'], ['report', 'list'], ['audit']]) {
      const res = await runCli(args, { QUARRY_DATA_DIR: missing });
      expect({ args, code: res.code, stderr: res.stderr }).toEqual({
        args,
        code: 1,
        stderr: expect.stringContaining(`no Quarry data in ${missing}`),
      });
    }
    expect(fs.existsSync(missing)).toBe(false);
    // Without QUARRY_DATA_DIR: ./data of where it runs, said on stderr.
    const cwd = fs.mkdtempSync(path.join(os.tmpdir(), 'quarry-cwd-'));
    const unset = await runCli(['user', 'list'], {}, { cwd, unset: ['QUARRY_DATA_DIR'] });
    expect(unset.code).toBe(1);
    expect(unset.stderr).toContain('no Quarry data in ./data (QUARRY_DATA_DIR is not set)');
    expect(fs.existsSync(path.join(cwd, 'data'))).toBe(false);
    fs.mkdirSync(path.join(cwd, 'data'));
    const read = await runCli(['index', 'list'], {}, { cwd, unset: ['QUARRY_DATA_DIR'] });
    expect(read.stderr).toContain(`reading ${fs.realpathSync(cwd)}/data (QUARRY_DATA_DIR is not set)`);
    expect(read.stdout.trim()).toBe('no indexes');
    fs.rmSync(cwd, { recursive: true, force: true });
  });

  it('refuses a blank, unparsable or ungranted realm at user create, storing nothing', async () => {
    for (const [realm, why] of [
      ['movies= ', 'error: --realm for index "movies" has a blank query'],
      ['movies=Major_Genre:(Drama', 'error: --realm for index "movies": Query syntax error at position'],
      ['flights=origin:SFO', 'error: --realm names index "flights", which the user is not given'],
      ['movies', 'error: --realm must be INDEX=QUERY'],
    ]) {
      const res = await runCli(
        ['user', 'create', 'rex', '--indexes', 'movies', '--realm', 'movies=Major_Genre:Comedy', '--realm', realm],
        env,
      );
      expect({ realm, code: res.code, stderr: res.stderr.trim() }).toEqual({
        realm,
        code: 1,
        stderr: expect.stringContaining(why),
      });
    }
    expect((await runCli(['user', 'list'], env)).stdout).not.toMatch(/^rex\t/m);
    const ok = await runCli(
      ['user', 'create', 'rex', '--indexes', 'movies', '--realm', 'movies=(Major Genre):Drama'],
      env,
    );
    expect(ok.code).toBe(0);
    expect((await runCli(['user', 'list'], env)).stdout).toMatch(
      /^rex\tactive\t-\tmovies\tmovies=\(Major Genre\):Drama$/m,
    );
  });

  it('creates tokens with known scopes only, unless told otherwise', async () => {
    const ok = await runCli(
      ['token', 'create', '--user', 'ana', '--scopes', 'query:execute,indexes:read', '--expires-in', '12h'],
      env,
    );
    expect(ok.code).toBe(0);
    expect(lastLine(ok.stdout)).toMatch(/^qk_[0-9A-Za-z]{43}$/);
    const expires = /expires: (\S+)/.exec(ok.stdout)?.[1] ?? '';
    const hours = (Date.parse(expires) - Date.now()) / 3_600_000;
    expect(hours).toBeGreaterThan(11.9);
    expect(hours).toBeLessThanOrEqual(12);

    const unknown = await runCli(['token', 'create', '--user', 'ana', '--scopes', 'admin:all'], env);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain('unknown scope(s) admin:all');
    const allowed = await runCli(
      ['token', 'create', '--user', 'ana', '--scopes', 'admin:all', '--allow-unknown-scopes'],
      env,
    );
    expect(allowed.code).toBe(0);

    for (const bad of ['5w', '0d', 'soon']) {
      const res = await runCli(
        ['token', 'create', '--user', 'ana', '--scopes', 'query:execute', '--expires-in', bad],
        env,
      );
      expect(res.code).toBe(1);
      expect(res.stderr).toContain('--expires-in takes a duration');
    }
    expect((await runCli(['token', 'create', '--user', 'ghost', '--scopes', 'query:execute'], env)).stderr).toContain(
      'User "ghost" not found',
    );
  });

  it('revokes by id or by the token itself, and the server refuses it at once', async () => {
    const quarry = await startQuarry({ topology: 'all', dataDir: env.QUARRY_DATA_DIR });
    try {
      const a = await runCli(['token', 'create', '--user', 'ana', '--scopes', 'query:execute'], env);
      const b = await runCli(['token', 'create', '--user', 'ana', '--scopes', 'query:execute'], env);
      const tokenA = lastLine(a.stdout);
      const idB = /id:\s+(\S+)/.exec(b.stdout)?.[1] ?? '';
      expect((await rpcClient(quarry.baseUrl, tokenA).call('NOPE')).status).toBe(200);
      expect((await runCli(['token', 'revoke', tokenA], env)).code).toBe(0);
      expect((await rpcClient(quarry.baseUrl, tokenA).call('NOPE')).status).toBe(401);
      expect((await runCli(['token', 'revoke', idB], env)).code).toBe(0);
      const again = await runCli(['token', 'revoke', idB], env);
      expect(again.stdout).toMatch(new RegExp(`^token ${idB} \\(qk_\\w+…\\) was already revoked, at \\d{4}-`));
      expect((await rpcClient(quarry.baseUrl, lastLine(b.stdout)).call('NOPE')).status).toBe(401);
      const list = await runCli(['token', 'list'], env);
      expect(list.stdout).toContain(`${idB}\t`);
      expect(list.stdout.split('\n').find((l) => l.startsWith(idB))).toContain('\trevoked\t');
      expect(list.stdout).not.toContain(tokenA);
      expect((await runCli(['token', 'revoke', 'no-such-id'], env)).code).toBe(1);

      expect((await runCli(['user', 'disable', 'ana'], env)).code).toBe(0);
      expect((await runCli(['user', 'delete', 'ana'], env)).code).toBe(0);
      expect((await runCli(['user', 'delete', 'ana'], env)).stderr).toContain('not found');
    } finally {
      const codes = await quarry.stop();
      expect(codes).toEqual([0]);
    }
    // A hang guard: a server start and a dozen CLI processes on a loaded machine.
  }, 180_000);

  it('lists every configuration problem and exits 2', async () => {
    const res = await runCli(['user', 'list'], {
      ...env,
      PORT: 'abc',
      QUARRY_TARGET: 'everything',
      MONGODB_URL: 'http://x',
    });
    expect(res.code).toBe(2);
    expect(res.stderr).toContain('PORT');
    expect(res.stderr).toContain('unknown target "everything"');
    expect(res.stderr).toContain('MONGODB_URL');
  });
});

describe('graceful shutdown', () => {
  it('stops cleanly on SIGTERM and exits 0 in both topologies', async () => {
    for (const topology of ['all', 'split'] as const) {
      const dataDir = makeDataDir();
      const quarry = await startQuarry({ topology, dataDir });
      const codes = await quarry.stop();
      // The last lines can trail an exit through the pipe: wait (a hang guard of 30 s) for the "stopped" one.
      await linesEventually(quarry.logs, (lines) => lines.some((l) => l.includes('"msg":"stopped"')), 30_000);
      // On failure: which process did not exit 0 (null: killed after the harness's 15 s wait), and its log.
      expect({ topology, codes, lastLines: codes.every((c) => c === 0) ? [] : quarry.logs().slice(-15) }).toEqual({
        topology,
        codes: codes.map(() => 0),
        lastLines: [],
      });
      expect(quarry.logs().some((l) => l.includes('"msg":"stopped"'))).toBe(true);
    }
    // A hang guard: seven processes started and stopped, six of them at once, on a loaded machine.
  }, 300_000);
});

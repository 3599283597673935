import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import {
  E2E_INTERNAL_TOKEN,
  freePort,
  makeDataDir,
  QUARRY_BIN,
  runCli,
  spawnServe,
  stopProc,
} from './support/quarry-process';

/*
 * With the built CLI and server on the embedded side (no Typesense runs here; none is
 * needed to show that a process configured for it is refused before it touches anything).
 */
const RECORDS = JSON.stringify([{ name: 'Ada' }, { name: 'Alan' }]);

/**
 * Runs `quarry serve` until it exits or `ms` pass (then it is stopped): its exit code and output. The bound is
 * a hang guard, as spawnServe's: a start can take most of a minute on a loaded machine.
 */
function serveUntilExit(env: Record<string, string>, ms = 60_000) {
  return new Promise<{ code: number | null; output: string; ready: boolean }>((resolve) => {
    const child = spawn(process.execPath, [QUARRY_BIN, 'serve'], {
      env: { ...process.env, HOST: '127.0.0.1', PORT: '0', LOG_LEVEL: 'info', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    const onData = (d: Buffer) => {
      output += d.toString();
      if (output.includes('"quarry ready"')) child.kill('SIGTERM');
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    const timer = setTimeout(() => child.kill('SIGKILL'), ms);
    child.on('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, output, ready: output.includes('"quarry ready"') });
    });
  });
}

describe('the search backend as an explicit setting', () => {
  const dataDir = makeDataDir('quarry-backend-');
  const file = path.join(dataDir, 'people.json');
  fs.writeFileSync(file, RECORDS);
  const base = { QUARRY_DATA_DIR: dataDir, QUARRY_TARGET: '', MONGODB_URL: '', REDIS_URL: '' };
  // The run's own environment may carry neither these nor empty ones: each case sets what it means.
  const env = (extra: Record<string, string>) => {
    const out: Record<string, string> = { ...base, ...extra };
    for (const name of ['QUARRY_TARGET', 'MONGODB_URL', 'REDIS_URL']) if (out[name] === '') delete out[name];
    return out;
  };
  const clean = () => {
    for (const name of ['MONGODB_URL', 'REDIS_URL', 'TYPESENSE_URL', 'TYPESENSE_API_KEY', 'QUARRY_SEARCH_BACKEND'])
      delete process.env[name];
  };
  const typesense = {
    QUARRY_SEARCH_BACKEND: 'typesense',
    TYPESENSE_URL: 'http://127.0.0.1:9',
    TYPESENSE_API_KEY: 'search-only-key',
  };

  beforeAll(() => clean());

  it('loads with the embedded engine and marks the data directory so', async () => {
    const res = await runCli(['index', 'load', 'people', file], env({ QUARRY_SEARCH_BACKEND: 'embedded' }));
    expect(res.stderr).toBe('');
    expect(res.code).toBe(0);
    expect(fs.readFileSync(path.join(dataDir, 'search-backend'), 'utf8')).toBe('embedded\n');
  }, 60000);

  it('refuses a load configured for Typesense into it, says what to set, and publishes nothing', async () => {
    const res = await runCli(['index', 'load', 'people', file], env(typesense));
    expect(res.code).toBe(1);
    expect(res.stderr).toContain('were loaded into the embedded search backend');
    expect(res.stderr).toContain('refusing loading into it');
    expect(res.stderr).toContain('Set QUARRY_SEARCH_BACKEND=embedded');
    const list = await runCli(['index', 'list'], env({}));
    expect(list.stdout).toMatch(/^people\tv1\t2 records/m);
  }, 60000);

  it('refuses to start a query service on the other backend, with the same message', async () => {
    const res = await serveUntilExit(
      env({
        ...typesense,
        QUARRY_TARGET: 'query',
        QUARRY_INTERNAL_TOKEN: E2E_INTERNAL_TOKEN,
        QUARRY_QUERY_ADDR: `127.0.0.1:${await freePort()}`,
      }),
    );
    expect(res.ready).toBe(false);
    expect(res.code).not.toBe(0);
    expect(res.output).toContain('refusing searching them');
  }, 120_000);

  it('starts the query service on the backend the indexes were loaded into', async () => {
    const res = await serveUntilExit(
      env({
        QUARRY_SEARCH_BACKEND: 'embedded',
        QUARRY_TARGET: 'query',
        QUARRY_INTERNAL_TOKEN: E2E_INTERNAL_TOKEN,
        QUARRY_QUERY_ADDR: `127.0.0.1:${await freePort()}`,
      }),
    );
    expect(res.ready).toBe(true);
  }, 120_000);

  it('turns a running query service not ready once its data directory is marked for the other backend', async () => {
    const fresh = makeDataDir('quarry-backend-late-');
    const opsPort = await freePort();
    const { proc } = await spawnServe({
      QUARRY_DATA_DIR: fresh,
      QUARRY_TARGET: 'query',
      QUARRY_SEARCH_BACKEND: 'embedded',
      QUARRY_QUERY_ADDR: `127.0.0.1:${await freePort()}`,
      QUARRY_OPS_PORT: String(opsPort),
    });
    const readyz = async () => {
      const res = await fetch(`http://127.0.0.1:${opsPort}/readyz`);
      return { status: res.status, body: (await res.json()) as { detail?: string } };
    };
    try {
      expect((await readyz()).status).toBe(200);
      // What a first load configured for Typesense writes (the loader runs elsewhere).
      fs.writeFileSync(path.join(fresh, 'search-backend'), 'typesense\n');
      const after = await readyz();
      expect(after.status).toBe(503);
      expect(after.body.detail).toContain('were loaded into the typesense search backend');
      expect((await fetch(`http://127.0.0.1:${opsPort}/healthz`)).status).toBe(200);
    } finally {
      await stopProc(proc);
    }
  }, 120_000);

  it('refuses at start-up a TYPESENSE_URL that does not go with the backend, and an empty key', async () => {
    const leftover = await runCli(['index', 'list'], env({ TYPESENSE_URL: 'http://127.0.0.1:9' }));
    expect(leftover.code).toBe(2);
    expect(leftover.stderr).toContain('TYPESENSE_URL: is set, but QUARRY_SEARCH_BACKEND is unset (embedded)');
    const empty = await runCli(['index', 'list'], env({ ...typesense, TYPESENSE_API_KEY: '' }));
    expect(empty.code).toBe(2);
    expect(empty.stderr).toContain('TYPESENSE_API_KEY: is set but empty');
  }, 30000);
});

import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { transformFileSync } from '@swc/core';
import { DATA_DIR_KEYS, KeyFileError, loadDataDirKey, requireDataDirKey } from './data-dir-key';

const run = promisify(execFile);
const dirs: string[] = [];
/** A folder another user may enter (the permission cases run as one when the tests run as root). */
const tempDir = () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'quarry-key-'));
  fs.chmodSync(dir, 0o755);
  dirs.push(dir);
  return dir;
};
// Root reads and writes whatever the mode says: as root, the permission cases run as nobody.
const AS_POD = process.getuid?.() === 0 ? { uid: 65534, gid: 65534 } : {};
let compiled = '';

beforeAll(() => {
  // The helper as plain JavaScript, for processes of its own (no build needed).
  compiled = path.join(tempDir(), 'data-dir-key.js');
  const { code } = transformFileSync(path.join(__dirname, 'data-dir-key.ts'), {
    jsc: { parser: { syntax: 'typescript' }, target: 'es2022' },
    module: { type: 'commonjs' },
  });
  fs.writeFileSync(compiled, code, { mode: 0o644 });
});

afterAll(() => {
  for (const dir of dirs) fs.rmSync(dir, { recursive: true, force: true });
});

/** loadDataDirKey in another process (as `as`), answering its key, its reason or its error's message. */
async function loadInProcess(
  key: keyof typeof DATA_DIR_KEYS,
  dataDir: string,
  opts: { at?: number; as?: { uid?: number; gid?: number }; require?: boolean } = {},
): Promise<{ key?: string; reason?: string; error?: string }> {
  const script = `
    const { loadDataDirKey, requireDataDirKey, DATA_DIR_KEYS } = require(${JSON.stringify(compiled)});
    while (Date.now() < ${opts.at ?? 0}) {}
    let out;
    try {
      const spec = { ...DATA_DIR_KEYS[${JSON.stringify(key)}], configured: undefined, dataDir: ${JSON.stringify(dataDir)} };
      const loaded = ${opts.require ? '{ key: requireDataDirKey(spec) }' : 'loadDataDirKey(spec)'};
      out = loaded.key ? { key: loaded.key.toString() } : { reason: loaded.reason };
    } catch (err) {
      out = { error: err.message };
    }
    process.stdout.write(JSON.stringify(out));
  `;
  const { stdout } = await run(process.execPath, ['-e', script], { ...opts.as });
  return JSON.parse(stdout) as { key?: string; reason?: string; error?: string };
}

const spec = (dataDir: string, configured?: string) => ({ ...DATA_DIR_KEYS.cursor, configured, dataDir });

describe('loadDataDirKey', () => {
  it('takes the configured value as it is, writing nothing', () => {
    const dir = tempDir();
    const loaded = loadDataDirKey(spec(dir, 'a-configured-secret-of-32-characters!'));
    expect(loaded).toEqual({ key: Buffer.from('a-configured-secret-of-32-characters!'), source: 'configured' });
    expect(fs.readdirSync(dir)).toEqual([]);
  });

  it('makes a key in the data directory once (0600), then reads the same one back', () => {
    const dataDir = path.join(tempDir(), 'not', 'yet');
    const first = requireDataDirKey(spec(dataDir));
    expect(first.toString()).toMatch(/^[0-9a-f]{64}$/);
    expect(fs.statSync(path.join(dataDir, 'cursor.secret')).mode & 0o777).toBe(0o600);
    expect(requireDataDirKey(spec(dataDir))).toEqual(first);
    // Nothing of the making is left behind.
    expect(fs.readdirSync(dataDir)).toEqual(['cursor.secret']);
  });

  it('makes the embed key folder private when it makes the folder', () => {
    const dataDir = path.join(tempDir(), 'data');
    requireDataDirKey({ ...DATA_DIR_KEYS.embed, configured: undefined, dataDir });
    expect(fs.statSync(dataDir).mode & 0o777).toBe(0o700);
  });

  it('reads a kept key without its trailing newline', () => {
    const dir = tempDir();
    fs.writeFileSync(path.join(dir, 'cursor.secret'), `${'k'.repeat(40)}\n`);
    expect(requireDataDirKey(spec(dir)).toString()).toBe('k'.repeat(40));
  });

  it('refuses an empty key file rather than sign with nothing', () => {
    const dir = tempDir();
    fs.writeFileSync(path.join(dir, 'cursor.secret'), '\n');
    expect(() => loadDataDirKey(spec(dir))).toThrow(KeyFileError);
    expect(() => loadDataDirKey(spec(dir))).toThrow(
      /cursor\.secret holds no key; remove it .* or set QUARRY_CURSOR_SECRET/,
    );
  });

  it('refuses a key file shorter than 32 characters', () => {
    const dir = tempDir();
    fs.writeFileSync(path.join(dir, 'cursor.secret'), 'short');
    expect(() => loadDataDirKey(spec(dir))).toThrow(/holds a key shorter than 32 characters/);
  });

  it('refuses a key file it cannot read, naming the file and why', async () => {
    const dir = tempDir();
    const file = path.join(dir, 'cursor.secret');
    fs.writeFileSync(file, 'k'.repeat(64), { mode: 0o000 });
    expect(await loadInProcess('cursor', dir, { as: AS_POD })).toEqual({
      error: `cannot read ${file} (EACCES); fix it, or set QUARRY_CURSOR_SECRET`,
    });
  });

  it('refuses a key "file" that is a folder', () => {
    const dir = tempDir();
    fs.mkdirSync(path.join(dir, 'cursor.secret'));
    expect(() => loadDataDirKey(spec(dir))).toThrow(/cannot read .*cursor\.secret \(EISDIR\)/);
  });

  it('answers no key when a read-only data directory keeps none, and leaves nothing there', async () => {
    const dir = tempDir();
    fs.chmodSync(dir, 0o555);
    expect(await loadInProcess('webhook', dir, { as: AS_POD })).toEqual({
      reason: `QUARRY_WEBHOOK_KEY is not set and the data directory ${dir} cannot keep a key (EACCES)`,
    });
    expect(fs.readdirSync(dir)).toEqual([]);
  });

  it('requireDataDirKey throws, naming the variable to set, when the data directory cannot keep a key', async () => {
    const dir = tempDir();
    fs.chmodSync(dir, 0o555);
    expect(await loadInProcess('embed', dir, { as: AS_POD, require: true })).toEqual({
      error:
        `QUARRY_EMBED_SECRET is not set and the data directory ${dir} cannot keep a key (EACCES); ` +
        'set QUARRY_EMBED_SECRET or QUARRY_EMBED_SECRET_FILE',
    });
  });

  it('reads the key a read-only data directory already keeps', async () => {
    const dir = tempDir();
    fs.writeFileSync(path.join(dir, 'webhook.key'), 'w'.repeat(64), { mode: 0o644 });
    fs.chmodSync(dir, 0o555);
    expect(await loadInProcess('webhook', dir, { as: AS_POD })).toEqual({ key: 'w'.repeat(64) });
  });

  it('gives processes racing to make the key one and the same key, never a half-written one', async () => {
    for (let round = 0; round < 3; round++) {
      const dataDir = tempDir();
      // Each process waits for the same instant, then loads: their creates collide on the file system.
      const at = Date.now() + 1000;
      const answers = await Promise.all(Array.from({ length: 6 }, () => loadInProcess('cursor', dataDir, { at })));
      expect(answers[0].key).toMatch(/^[0-9a-f]{64}$/);
      expect(answers).toEqual(answers.map(() => ({ key: answers[0].key })));
      expect(fs.readdirSync(dataDir)).toEqual(['cursor.secret']);
    }
    // A hang guard, not a target: 18 processes start (and spin) on 2 loaded cores.
  }, 120_000);
});

import { execFile, spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { freePort, REPO_ROOT } from './support/quarry-process';

/*
 * The README's first command as a newcomer runs it: `npm start` in a fresh copy of the tree, with a scrubbed
 * environment (`env -i`: PATH and HOME, plus only the variables the README documents), waiting for the
 * banner and then running the curl it prints, verbatim, in another scrubbed shell. Once with nothing set
 * at all, then for each combination the README offers (PORT, HOST as 127.0.0.1, 0.0.0.0 and ::,
 * QUARRY_DATA_DIR). Nothing here sets what a user would not: the server's own defaults decide the rest.
 *
 * The copy is the work tree's files (tracked and new, as a clone would have them, nothing git ignores) with
 * this run's node_modules and turbo cache linked in, so start.sh's install finds nothing missing and its
 * build is a cache hit: the install path itself is what `npm test` ran before jest.
 */

const run = promisify(execFile);
// A hang guard, not a target: install check, cached build, sample load and start, on a loaded machine.
const BANNER_TIMEOUT_MS = 240_000;

let clone: string;

function scrubbedEnv(extra: Record<string, string>): NodeJS.ProcessEnv {
  return { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: os.homedir(), ...extra };
}

async function freshClone(): Promise<string> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'quarry-fresh-clone-'));
  const { stdout } = await run('git', ['ls-files', '-z', '--cached', '--others', '--exclude-standard'], {
    cwd: REPO_ROOT,
    maxBuffer: 64 * 1024 * 1024,
  });
  const files = stdout.split('\0').filter((f) => f && fs.existsSync(path.join(REPO_ROOT, f)));
  const list = path.join(dir, '.files');
  fs.writeFileSync(list, files.join('\0'));
  // tar keeps modification times, so the lock file stays older than the installed tree, as after a clone
  // and an install.
  await run('bash', ['-c', `tar -C "${REPO_ROOT}" --null -T "${list}" -cf - | tar -C "${dir}" -xf -`]);
  fs.rmSync(list);
  const linked = ['node_modules', '.turbo'];
  for (const top of ['packages', 'services', 'apps'])
    for (const name of fs.readdirSync(path.join(REPO_ROOT, top)))
      if (fs.existsSync(path.join(REPO_ROOT, top, name, 'node_modules'))) linked.push(`${top}/${name}/node_modules`);
  for (const rel of linked)
    if (fs.existsSync(path.join(REPO_ROOT, rel)))
      await run('cp', ['-al', path.join(REPO_ROOT, rel), path.join(dir, rel)]);
  return dir;
}

interface Started {
  child: ChildProcess;
  output: () => string;
  exited: Promise<number | null>;
}

function npmStart(env: NodeJS.ProcessEnv): Started {
  // Its own process group, as a terminal gives it: Ctrl-C reaches npm, start.sh and the server alike.
  const child = spawn('npm', ['start'], { cwd: clone, env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (out += d.toString()));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  return { child, output: () => out, exited };
}

async function banner(started: Started): Promise<string> {
  const deadline = Date.now() + BANNER_TIMEOUT_MS;
  let exitCode: number | null | undefined;
  void started.exited.then((c) => (exitCode = c));
  while (Date.now() < deadline) {
    const text = started.output();
    if (/Stop with Ctrl-C\./.test(text)) return text;
    if (exitCode !== undefined)
      throw new Error(`npm start exited (${exitCode}) before its banner:\n${text.slice(-3000)}`);
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`no banner in ${BANNER_TIMEOUT_MS / 1000} s:\n${started.output().slice(-3000)}`);
}

/**
 * Ctrl-C, as the banner says; true when everything stopped by itself in time: the server lets calls in
 * flight finish for up to QUARRY_SHUTDOWN_GRACE_MS (10 s) before its modules stop.
 */
async function ctrlC(started: Started): Promise<boolean> {
  const signal = (s: NodeJS.Signals) => {
    try {
      process.kill(-started.child.pid!, s);
    } catch {
      // already gone
    }
  };
  signal('SIGINT');
  let forced = false;
  const timer = setTimeout(() => {
    forced = true;
    process.stderr.write(
      `npm start did not stop 45 s after Ctrl-C; its last output:\n${started.output().slice(-2000)}\n`,
    );
    signal('SIGKILL');
  }, 45_000);
  await started.exited;
  clearTimeout(timer);
  return !forced;
}

/** Runs the banner's exports and its "Try" command, verbatim, in a shell that has nothing else set. */
async function runPrintedCurl(text: string): Promise<{ records: Array<Record<string, unknown>> }> {
  const exports = text.match(/^ {2}export QUARRY_(URL|TOKEN)=.*$/gm) ?? [];
  expect(exports).toHaveLength(2);
  const command = /^Try.*\n\n([\s\S]*?)\n\n/m.exec(text)?.[1];
  expect(command).toMatch(/^ {2}curl /);
  const { stdout } = await run('bash', ['-euo', 'pipefail', '-c', `${exports.join('\n')}\n${command}`], {
    env: scrubbedEnv({}),
  }).catch((err: Error & { stderr?: string }) => {
    throw new Error(`the printed curl failed: ${err.message} ${err.stderr ?? ''}\n${text.slice(-2000)}`);
  });
  let answer: { result?: { data: { records: Array<Record<string, unknown>> } }; error?: unknown } = {};
  try {
    answer = JSON.parse(stdout) as typeof answer;
  } catch {
    throw new Error(`the printed curl answered no JSON: ${JSON.stringify(stdout.slice(0, 500))}\n${text.slice(-2000)}`);
  }
  if (!answer.result) throw new Error(`the printed curl answered ${stdout.slice(0, 500)}\n${text.slice(-2000)}`);
  return answer.result.data;
}

function portIsFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = net.createServer();
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
}

beforeAll(async () => {
  clone = await freshClone();
}, 120_000);

afterAll(() => {
  if (clone) fs.rmSync(clone, { recursive: true, force: true });
});

describe('npm start in a fresh copy, environment scrubbed (README: the first command)', () => {
  it('with nothing set: serves on 127.0.0.1:8080 with ./data, and the printed curl works as printed', async () => {
    // The README's defaults are the point of this case: it cannot move to another port.
    expect(await portIsFree(8080)).toBe(true);
    const started = npmStart(scrubbedEnv({}));
    try {
      const text = await banner(started);
      expect(text).toContain('export QUARRY_URL=http://127.0.0.1:8080\n');
      expect(text).toContain(`(data in ./data)`);
      expect(fs.existsSync(path.join(clone, 'data'))).toBe(true);
      const { records } = await runPrintedCurl(text);
      expect(records.length).toBeGreaterThan(0);
      expect(records.every((r) => /toy story/i.test(String(r.Title)))).toBe(true);
    } finally {
      expect(await ctrlC(started)).toBe(true);
    }
  }, 360_000);

  // [what is set, HOST if any, whether QUARRY_DATA_DIR is set]; every one is called on 127.0.0.1.
  const combos: Array<[string, string | undefined, boolean]> = [
    ['PORT and QUARRY_DATA_DIR (a second copy beside the first)', undefined, true],
    ['PORT and HOST=127.0.0.1', '127.0.0.1', false],
    ['PORT and HOST=0.0.0.0 (every interface)', '0.0.0.0', false],
    ['PORT and HOST=:: (every interface, IPv6 too)', '::', true],
  ];

  it.each(combos)(
    'with %s: the banner names where it serves and its curl works',
    async (_name, host, ownDir) => {
      const port = await freePort();
      const env: Record<string, string> = { PORT: String(port) };
      if (host) env.HOST = host;
      if (ownDir) env.QUARRY_DATA_DIR = path.join(os.tmpdir(), `quarry-start-${port}`);
      const url = (p: number) => `http://127.0.0.1:${p}`;
      const started = npmStart(scrubbedEnv(env));
      try {
        const text = await banner(started);
        expect(text).toContain(`export QUARRY_URL=${url(port)}\n`);
        expect(text).toContain(`(data in ${env.QUARRY_DATA_DIR ?? './data'})`);
        const { records } = await runPrintedCurl(text);
        expect(records.length).toBeGreaterThan(0);
        if (host === '::') {
          // Bound on every interface: it answers on IPv6 loopback too.
          const res = await fetch(`http://[::1]:${port}/healthz`);
          expect(res.status).toBe(200);
        }
      } finally {
        expect(await ctrlC(started)).toBe(true);
        if (env.QUARRY_DATA_DIR) fs.rmSync(env.QUARRY_DATA_DIR, { recursive: true, force: true });
      }
    },
    360_000,
  );
});

import { execFileSync, spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import readline from 'node:readline';
import { rpcClient } from './support/http';
import { movies, wordsOf } from './support/datasets';
import { REPO_ROOT } from './support/quarry-process';

/**
 * The production image's tree, made here as infra/Dockerfile makes it: infra/build-image-tree.sh prunes
 * a copy of this built checkout, and the image's CLI then loads the sample and serves a search from it.
 * Only the build step (npm install, turbo) is left out: the checkout is already built.
 */

const SCRIPT = path.join(REPO_ROOT, 'infra', 'build-image-tree.sh');
// What the Dockerfile's build stage holds when it prunes, and what the image then copies from it.
const TREE = ['package.json', 'package-lock.json', 'packages', 'services', 'apps', 'proto'];

const tempDirs: string[] = [];

/** The environment of the image's processes: none of this shell's npm, node or Quarry settings. */
function cleanEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env))
    if (!/^(npm_|QUARRY_|NODE_)/i.test(k) && k !== 'PORT' && k !== 'HOST') env[k] = v;
  // npm must not reach the registry from a test: prune works from the lock file and the tree alone.
  return { ...env, npm_config_offline: 'true', npm_config_update_notifier: 'false', ...extra };
}

function copyBuiltTree(): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'quarry-image-tree-'));
  tempDirs.push(dir);
  execFileSync('cp', ['-a', ...TREE.map((p) => path.join(REPO_ROOT, p)), dir]);
  const from = path.join(REPO_ROOT, 'node_modules');
  const to = path.join(dir, 'node_modules');
  // Hard links make the copy take a fraction of a second; prune only unlinks in there, which leaves the
  // checkout's files alone. A tmp on another filesystem cannot link: then a real copy.
  if (spawnSync('cp', ['-al', from, to]).status !== 0) {
    fs.rmSync(to, { recursive: true, force: true });
    execFileSync('cp', ['-a', from, to]);
  }
  // npm rewrites its hidden lock file: a file of the copy's own, not a link into the checkout's.
  const hidden = path.join(to, '.package-lock.json');
  if (fs.existsSync(hidden)) {
    fs.rmSync(hidden);
    fs.copyFileSync(path.join(from, '.package-lock.json'), hidden);
  }
  return dir;
}

/** Every file and link of a tree, relative to it, not following links (node_modules/@quarry/* are links). */
function listTree(dir: string): Set<string> {
  const out = new Set<string>();
  for (const entry of fs.readdirSync(dir, { recursive: true, withFileTypes: true })) {
    if (!entry.isDirectory()) out.add(path.relative(dir, path.join(entry.parentPath, entry.name)));
  }
  return out;
}

function runInTree(
  tree: string,
  args: string[],
  env: Record<string, string>,
): { code: number | null; stdout: string; stderr: string } {
  const res = spawnSync(process.execPath, [path.join(tree, 'apps', 'quarry', 'bin', 'quarry.js'), ...args], {
    cwd: tree,
    env: cleanEnv(env),
    encoding: 'utf8',
  });
  return { code: res.status, stdout: res.stdout, stderr: res.stderr };
}

/** `quarry serve` of the tree; resolves with its port once it logs "quarry ready". */
function serveTree(tree: string, env: Record<string, string>): Promise<{ port: number; stop: () => Promise<void> }> {
  const child = spawn(process.execPath, [path.join(tree, 'apps', 'quarry', 'bin', 'quarry.js'), 'serve'], {
    cwd: tree,
    env: cleanEnv({ ...env, LOG_LEVEL: 'info' }),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const lines: string[] = [];
  const stop = () =>
    new Promise<void>((resolve) => {
      if (child.exitCode !== null || child.signalCode !== null) return resolve();
      const timer = setTimeout(() => child.kill('SIGKILL'), 10000);
      child.once('exit', () => {
        clearTimeout(timer);
        resolve();
      });
      child.kill('SIGTERM');
    });
  return new Promise((resolve, reject) => {
    // A hang guard, as spawnServe's: a start can take most of a minute on a loaded machine.
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`quarry serve did not start:\n${lines.join('\n')}`));
    }, 60_000);
    const onLine = (line: string) => {
      lines.push(line);
      if (!line.includes('"quarry ready"')) return;
      clearTimeout(timer);
      resolve({ port: (JSON.parse(line) as { port: number }).port, stop });
    };
    readline.createInterface({ input: child.stdout }).on('line', onLine);
    readline.createInterface({ input: child.stderr }).on('line', onLine);
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`quarry serve exited with ${code}:\n${lines.join('\n')}`));
    });
  });
}

describe('the production image tree (infra/build-image-tree.sh, as infra/Dockerfile runs it)', () => {
  let pruned: string;
  let npmOnly: string;

  beforeAll(() => {
    pruned = copyBuiltTree();
    for (const step of ['samples', 'prune'])
      execFileSync('sh', [SCRIPT, step, pruned], { env: cleanEnv(), stdio: 'pipe' });
    // The reference: the same copy after npm's own prune and nothing else.
    npmOnly = copyBuiltTree();
    execFileSync('npm', ['prune', '--omit=dev', '--no-audit', '--no-fund'], {
      cwd: npmOnly,
      env: cleanEnv(),
      stdio: 'pipe',
    });
    // A hang guard: two copies of the built tree and two prunes, slow on a loaded machine.
  }, 300_000);

  afterAll(() => {
    for (const dir of tempDirs) fs.rmSync(dir, { recursive: true, force: true });
  });

  it('is what the Dockerfile runs to build and prune', () => {
    const dockerfile = fs.readFileSync(path.join(REPO_ROOT, 'infra', 'Dockerfile'), 'utf8');
    expect(dockerfile).toMatch(/^COPY infra\/build-image-tree\.sh infra\/build-image-tree\.sh$/m);
    expect(dockerfile).toMatch(/^RUN sh infra\/build-image-tree\.sh all$/m);
    // No pruning of its own beside the script's.
    expect(dockerfile).not.toMatch(/-name src|tsbuildinfo|npm prune/);
  });

  it("removes exactly the workspaces' src folders and build info beyond what npm prune removes, nothing under node_modules", () => {
    const workspaces = JSON.parse(
      execFileSync('npm', ['query', '.workspace'], { cwd: npmOnly, env: cleanEnv(), encoding: 'utf8' }),
    ) as Array<{ location: string }>;
    expect(workspaces.map((w) => w.location)).toEqual(
      expect.arrayContaining(['packages/rpc', 'apps/quarry', 'services/gateway']),
    );
    const ownSource = (file: string) =>
      workspaces.some(
        ({ location }) =>
          file.startsWith(`${location}/src/`) ||
          (file.startsWith(`${location}/`) && !file.includes('/node_modules/') && file.endsWith('.tsbuildinfo')),
      );
    const before = listTree(npmOnly);
    const after = listTree(pruned);
    const removed = [...before].filter((f) => !after.has(f));
    const added = [...after].filter((f) => !before.has(f));
    expect(removed.filter((f) => !ownSource(f))).toEqual([]);
    expect(removed.length).toBeGreaterThan(0);
    expect([...after].filter(ownSource)).toEqual([]);
    expect(added.sort()).toEqual(['sample/airports.csv', 'sample/movies.json']);
    // The nested install the former `find -name src` deleted is there, and dev dependencies are gone.
    expect(after.has('packages/rpc/node_modules/@grpc/proto-loader/build/src/index.js')).toBe(true);
    expect(after.has('node_modules/typescript/package.json')).toBe(false);
    expect(fs.existsSync(path.join(REPO_ROOT, 'node_modules', 'typescript', 'package.json'))).toBe(true);
  });

  it('loads the sample and serves a search from the pruned tree alone (QUARRY_TARGET=all)', async () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'quarry-image-data-'));
    tempDirs.push(dataDir);
    const env = { QUARRY_DATA_DIR: dataDir };
    const load = runInTree(
      pruned,
      ['index', 'load', 'movies', path.join(pruned, 'sample', 'movies.json'), '--view', 'Directors=Director'],
      env,
    );
    expect({ code: load.code, stderr: load.stderr }).toEqual({ code: 0, stderr: expect.not.stringContaining('rror') });
    expect(load.stdout).toContain(`published movies version 1: ${movies().length} records`);
    expect(runInTree(pruned, ['user', 'create', 'admin', '--admin'], env).code).toBe(0);
    const token = runInTree(
      pruned,
      ['token', 'create', '--user', 'admin', '--scopes', 'query:execute,indexes:read'],
      env,
    );
    expect(token.code).toBe(0);

    const server = await serveTree(pruned, { ...env, QUARRY_TARGET: 'all', PORT: '0', HOST: '127.0.0.1' });
    try {
      const client = rpcClient(`http://127.0.0.1:${server.port}`, token.stdout.trim().split('\n').pop() ?? '');
      const res = await client.call('QUERIES.EXECUTE', { index: 'movies', query: 'Director:spielberg', pageSize: 100 });
      const expected = movies().filter((m) => wordsOf(m.Director).includes('spielberg'));
      expect(expected.length).toBeGreaterThan(5);
      expect({ status: res.status, body: res.json }).toMatchObject({
        status: 200,
        body: { result: { data: { total: expected.length } } },
      });
      const data = (res.json as { result: { data: { records: Array<{ Title: string }> } } }).result.data;
      expect(data.records.map((r) => r.Title).sort()).toEqual(expected.map((m) => String(m.Title)).sort());
    } finally {
      await server.stop();
    }
    // A hang guard: CLI processes, a load and a server start, on a loaded machine.
  }, 180_000);

  // Last: it spoils the npm-only copy the comparison above reads.
  it("cannot even start after the Dockerfile's former prune line, which also deleted a dependency's build/src", () => {
    execFileSync('sh', ['-c', 'find packages services apps -name src -type d -prune -exec rm -rf {} +'], {
      cwd: npmOnly,
    });
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'quarry-image-data-'));
    tempDirs.push(dataDir);
    // A command that loads the services (and so gRPC); `index list` loads only the catalog.
    const res = runInTree(npmOnly, ['index', 'drop', 'movies'], { QUARRY_DATA_DIR: dataDir });
    expect(res.code).not.toBe(0);
    expect(res.stderr).toContain("Cannot find module '");
    expect(res.stderr).toContain('packages/rpc/node_modules/@grpc/proto-loader/build/src/index.js');
  });
});

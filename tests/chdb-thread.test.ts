/*
 * chDB in a thread that ends: the all-in-one server runs the crosstab service in a worker thread, and
 * Node unloads a thread's native addons as it ends. chDB's library must outlive that thread (its own
 * thread pools, and the ending thread's key destructors, are code inside it): before it was pinned, every
 * stop of a server that had run a ClickHouse crosstab could die of SIGSEGV.
 */
import { spawn } from 'node:child_process';
import path from 'node:path';
import { REPO_ROOT } from './support/quarry-process';

const RUNNER = path.join(REPO_ROOT, 'services/crosstab/dist/adapters/clickhouse/chdb-runner.js');

/** A process whose worker thread loads chDB the way the crosstab service does, queries it, and ends. */
const PROGRAM = `
const { Worker } = require('node:worker_threads');
const fs = require('node:fs');
const mapped = () => fs.readFileSync('/proc/self/maps', 'utf8').split('\\n').some((l) => l.includes('libchdb'));
const w = new Worker(\`
  const { loadChdb } = require(${JSON.stringify(RUNNER)});
  loadChdb().queryBindAsync('SELECT sum(number) AS s FROM numbers(100000)', {}, { format: 'JSONEachRow' })
    .then((r) => console.log('thread answered', r.text().trim()));
\`, { eval: true });
w.on('exit', (code) => setTimeout(() => console.log('thread ended', code, 'library still mapped', mapped()), 500));
`;

function run(): Promise<{ code: number | null; signal: NodeJS.Signals | null; out: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['-e', PROGRAM], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (c: Buffer) => (out += c.toString()));
    child.stderr.on('data', (c: Buffer) => (out += c.toString()));
    child.on('close', (code, signal) => resolve({ code, signal, out }));
  });
}

describe('chDB loaded in a worker thread', () => {
  it('stays loaded after the thread ends, and the process exits cleanly', async () => {
    // Three runs: an unpinned library crashed the ending thread every time here, a stopping server only sometimes.
    for (let i = 0; i < 3; i++) {
      const got = await run();
      expect(got.out).toContain('thread answered {"s":4999950000}');
      expect(got.out).toContain('thread ended 0 library still mapped true');
      expect({ code: got.code, signal: got.signal }).toEqual({ code: 0, signal: null });
    }
    // A hang guard: each run loads chDB's large library, which takes a while on a loaded machine.
  }, 300_000);
});

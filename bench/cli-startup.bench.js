#!/usr/bin/env node
// CLI start-up: the short commands (`index list`, `user list`, `token create`) as they run now, next to
// the same commands run after loading every module the CLI used to load eagerly (all services, gRPC,
// DuckDB, the MongoDB and Typesense clients, Chromium's driver), measured in the same run.
//   node bench/cli-startup.bench.js [runs]
const { execFileSync, spawnSync } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');

const ROOT = path.join(__dirname, '..');
const BIN = path.join(ROOT, 'apps', 'quarry', 'bin', 'quarry.js');
const runs = Number(process.argv[2] ?? 15);
const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'quarry-cli-bench-'));
const env = { ...process.env, QUARRY_DATA_DIR: dataDir };

execFileSync(
  process.execPath,
  [BIN, 'index', 'load', 'movies', path.join(ROOT, 'node_modules/vega-datasets/data/movies.json')],
  { env, stdio: 'ignore' },
);
execFileSync(process.execPath, [BIN, 'user', 'create', 'bench', '--indexes', '*'], { env, stdio: 'ignore' });

// What the former main.ts imported before parsing the command line.
const EAGER = [
  '@quarry/gateway',
  '@quarry/query',
  '@quarry/crosstab',
  '@quarry/chart',
  '@quarry/reports',
  '@quarry/snapshots',
  '@quarry/metadata-store/mongo',
  '@quarry/metadata-store/sqlite',
];
const eagerScript = `${EAGER.map((m) => `require(${JSON.stringify(m)});`).join('')}require(${JSON.stringify(path.join(ROOT, 'apps/quarry/dist/main.js'))}).main(process.argv);`;

function median(xs) {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)];
}

function time(args, eager) {
  const started = process.hrtime.bigint();
  const res = eager
    ? spawnSync(process.execPath, ['-e', eagerScript, 'quarry', ...args], { env, cwd: ROOT })
    : spawnSync(process.execPath, [BIN, ...args], { env, cwd: ROOT });
  if (res.status !== 0) throw new Error(`${args.join(' ')} failed: ${res.stderr}`);
  return Number(process.hrtime.bigint() - started) / 1e6;
}

const commands = [
  ['index', 'list'],
  ['user', 'list'],
  ['token', 'create', '--user', 'bench', '--scopes', 'query:execute'],
];
console.log(`CLI start-up, median of ${runs} runs (ms): lazy (now) vs every module loaded first (before)`);
console.log('| command | now | before | ratio |');
console.log('| --- | --- | --- | --- |');
for (const args of commands) {
  const now = [];
  const before = [];
  for (let i = 0; i < runs; i++) {
    now.push(time(args, false));
    before.push(time(args, true));
  }
  const a = median(now);
  const b = median(before);
  console.log(`| quarry ${args.slice(0, 2).join(' ')} | ${a.toFixed(0)} | ${b.toFixed(0)} | ${(a / b).toFixed(2)} |`);
}
fs.rmSync(dataDir, { recursive: true, force: true });

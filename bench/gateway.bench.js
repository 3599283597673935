#!/usr/bin/env node
// Gateway throughput: an authenticated JSON-RPC call that crosses gRPC to the query service and back,
// beside a bare Express handler on the same machine, 10 s x 50 connections each, run side by side.
// Usage: npm run build && node bench/gateway.bench.js [--duration 10] [--connections 50]
const { spawn } = require('node:child_process');
const path = require('node:path');
const fs = require('node:fs');
const os = require('node:os');
const autocannon = require('autocannon');

const args = process.argv.slice(2);
const opt = (name, dflt) => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? Number(args[i + 1]) : dflt;
};
const DURATION = opt('duration', 10);
const CONNECTIONS = opt('connections', 50);
const ROOT = path.resolve(__dirname, '..');
const BIN = path.join(ROOT, 'apps', 'quarry', 'bin', 'quarry.js');

function waitForLine(child, pattern) {
  return new Promise((resolve, reject) => {
    let buf = '';
    const onData = (d) => {
      buf += d.toString();
      for (const line of buf.split('\n')) {
        const m = pattern.exec(line);
        if (m) {
          child.stdout.off('data', onData);
          resolve(m);
          return;
        }
      }
    };
    child.stdout.on('data', onData);
    child.once('exit', (c) => reject(new Error(`exited ${c}: ${buf}`)));
  });
}

function cli(argv, env) {
  return new Promise((resolve, reject) => {
    const c = spawn(process.execPath, [BIN, ...argv], { env: { ...process.env, ...env } });
    let out = '';
    c.stdout.on('data', (d) => (out += d));
    c.stderr.on('data', (d) => process.stderr.write(d));
    c.on('exit', (code) => (code === 0 ? resolve(out) : reject(new Error(`${argv.join(' ')} exited ${code}`))));
  });
}

function run(url, opts) {
  return new Promise((resolve, reject) => {
    autocannon({ url, connections: CONNECTIONS, duration: DURATION, ...opts }, (err, res) =>
      err ? reject(err) : resolve(res),
    );
  });
}

function summary(name, r) {
  return {
    name,
    reqPerSec: Math.round(r.requests.average),
    p50ms: r.latency.p50,
    p99ms: r.latency.p99,
    non2xx: r.non2xx,
    errors: r.errors,
  };
}

async function main() {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'quarry-bench-'));
  const env = { QUARRY_DATA_DIR: dataDir };
  await cli(['user', 'create', 'bench', '--indexes', '*'], env);
  const token = (await cli(['token', 'create', '--user', 'bench', '--scopes', 'indexes:read'], env))
    .trim()
    .split('\n')
    .pop();

  const bare = spawn(
    process.execPath,
    [
      '-e',
      `
    const express = require('express');
    const app = express();
    app.post('/api/v1', (req, res) => { req.resume(); req.on('end', () => res.json({ jsonrpc: '2.0', id: 1, result: { data: { indexes: [], nextCursor: null }, meta: { requestId: 'x' } } })); });
    const s = app.listen(0, '127.0.0.1', () => console.log('PORT ' + s.address().port));
  `,
    ],
    { cwd: path.join(ROOT, 'services', 'gateway'), stdio: ['ignore', 'pipe', 'inherit'] },
  );
  const barePort = (await waitForLine(bare, /^PORT (\d+)/))[1];

  const quarry = spawn(process.execPath, [BIN, 'serve'], {
    env: { ...process.env, ...env, PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'info' },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const port = (await waitForLine(quarry, /"port":(\d+),"msg":"quarry ready"/))[1];
  // From here on the gateway logs one line per request; send them nowhere but keep the pipe drained.
  quarry.stdout.resume();

  const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'INDEXES.FIND', params: {} });
  const headers = { 'content-type': 'application/json', authorization: `Bearer ${token}` };
  // Warm both up so JIT and connection set-up do not count.
  await run(`http://127.0.0.1:${port}/api/v1`, { method: 'POST', body, headers, duration: 2 });
  await run(`http://127.0.0.1:${barePort}/api/v1`, { method: 'POST', body, headers, duration: 2 });

  const full = summary(
    'quarry: auth + JSON-RPC + gRPC INDEXES.FIND',
    await run(`http://127.0.0.1:${port}/api/v1`, { method: 'POST', body, headers }),
  );
  const base = summary(
    'bare Express handler',
    await run(`http://127.0.0.1:${barePort}/api/v1`, { method: 'POST', body, headers }),
  );
  bare.kill();
  quarry.kill('SIGTERM');

  console.table([full, base]);
  const ratio = full.reqPerSec / base.reqPerSec;
  console.log(`ratio quarry/bare throughput: ${(ratio * 100).toFixed(1)}% (target >= 40%)`);
  console.log(`cores: ${os.cpus().length}, node ${process.version}, ${DURATION}s x ${CONNECTIONS} connections`);
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});

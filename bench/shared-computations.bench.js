#!/usr/bin/env node
// Many callers asking the same thing at once (issue 62), on flights-3m through JSON-RPC, side by side in
// one run: a cold heavy crosstab alone, eight identical ones sent at once (computed once and shared),
// and eight different ones at once (what eight identical ones cost before they were shared: each its own
// computation). Each round asks with a query no round asked before, so every call starts cold. Then a
// heavy crosstab whose client goes away: how long the server's process goes on burning CPU after the
// socket is closed (the core freed), against the same crosstab left to run.
// With --millions N (120 for the figure) only the cancellation is measured, on flights-3m copied to
// N million records (bench/lib.js writeFlights, as bench/scale.bench.js does): the crosstab abandoned
// --after ms in (default 3000), and the same saving a report (never cancelled) once, as the control.
// Usage: npm run build && node bench/shared-computations.bench.js [--runs 5] [--millions 120 [--after 3000]]
// The CPU is sampled from /proc every 50 ms: "freed" is known to within one sample.
const fs = require('node:fs');
const http = require('node:http');
const os = require('node:os');
const path = require('node:path');
const { VEGA, benchData, startServer, rpc, cpuMsOf, fmt, writeFlights } = require('./lib');

const arg = (name) => (process.argv.includes(name) ? Number(process.argv[process.argv.indexOf(name) + 1]) : undefined);
const RUNS = arg('--runs') || 5;
const MILLIONS = arg('--millions');
const AFTER_MS = arg('--after') || 3000;
const HEAVY = {
  index: 'flights',
  rows: ['origin', 'destination'],
  totals: [
    { aggregationType: 'Median', field: 'delay' },
    { aggregationType: 'Median', field: 'distance' },
    { aggregationType: 'CountDistinct', field: 'date' },
  ],
  format: 'json',
};

let fresh = 0;
/** The heavy crosstab under a query no call has asked yet (every record still matches): a cold start. */
const cold = () => ({ ...HEAVY, query: `delay:>${-1_000_000 - fresh++}` });

async function wall(fn) {
  const started = performance.now();
  await fn();
  return performance.now() - started;
}

const p50 = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

/** Sends a crosstab and destroys its socket after `ms`; resolves when the socket is gone. */
function abandoned(port, token, params, ms) {
  const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'CROSSTAB.EXECUTE', params });
  return new Promise((resolve) => {
    const req = http.request({
      host: '127.0.0.1',
      port,
      path: '/api/v1',
      method: 'POST',
      agent: false,
      headers: {
        'content-type': 'application/json',
        authorization: `Bearer ${token}`,
        'content-length': Buffer.byteLength(body),
      },
    });
    req.on('error', () => undefined);
    req.on('response', () => resolve({ answered: true }));
    req.end(body);
    setTimeout(() => {
      req.destroy();
      resolve({ answered: false, closedAt: performance.now() });
    }, ms);
  });
}

/** Ms after `from` until the process has used less than 10 ms of CPU in a 50 ms window (its cores idle). */
async function idleAfter(pid, from) {
  let last = cpuMsOf(pid);
  let lastAt = performance.now();
  for (;;) {
    await new Promise((r) => setTimeout(r, 50));
    const now = cpuMsOf(pid);
    const at = performance.now();
    if (now - last < 10) return lastAt - from;
    last = now;
    lastAt = at;
  }
}

/** The cancellation alone, on N million records: how soon the core is free after the caller leaves. */
async function atScale(millions) {
  const work = fs.mkdtempSync(path.join(os.tmpdir(), 'quarry-bench-cancel-'));
  try {
    const file = path.join(work, `flights-${millions}m.parquet`);
    let t = performance.now();
    await writeFlights(millions, file, path.join(work, 'gen-tmp'));
    console.log(`wrote ${millions}M records in ${fmt((performance.now() - t) / 1000)} s`);
    t = performance.now();
    const { env, token, dataDir } = await benchData(`c${millions}`, [['flights', file]], 'query:execute,reports:write');
    fs.rmSync(file, { force: true });
    console.log(`loaded in ${fmt((performance.now() - t) / 1000)} s`);
    const server = await startServer({ ...env, QUARRY_GRPC_DEADLINE_MS: '900000' });
    try {
      const freed = [];
      for (let r = 0; r < Math.min(RUNS, 3); r++) {
        const gone = await abandoned(server.port, token, cold(), AFTER_MS);
        if (!gone.answered) freed.push(await idleAfter(server.child.pid, gone.closedAt));
      }
      // The control runs to its end (it saves a report): what every abandoned call cost before.
      const saving = { ...cold(), saveReport: { name: `bench ${fresh}` } };
      const left = await abandoned(server.port, token, saving, AFTER_MS);
      const kept = left.answered ? undefined : await idleAfter(server.child.pid, left.closedAt);
      console.table([
        {
          what: `CPU after its client went away (${AFTER_MS} ms in), ${millions}M records`,
          'p50 ms': freed.length ? fmt(p50(freed)) : 'answered before',
          runs: freed.length,
          target: '<= 200 ms',
        },
        {
          what: 'the same saving a report (never cancelled)',
          'p50 ms': kept === undefined ? 'answered before' : fmt(kept),
        },
      ]);
    } finally {
      await server.stop();
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  } finally {
    fs.rmSync(work, { recursive: true, force: true });
  }
}

async function main() {
  if (MILLIONS) return atScale(MILLIONS);
  const { env, token } = await benchData(
    's',
    [['flights', path.join(VEGA, 'flights-3m.parquet')]],
    'query:execute,reports:write',
  );
  const server = await startServer(env);
  const call = (params) => rpc(server.port, token, 'CROSSTAB.EXECUTE', params);
  try {
    await call(cold()); // warm the snapshot's files and the engine
    const alone = [];
    const identical = [];
    const different = [];
    for (let r = 0; r < RUNS; r++) {
      alone.push(await wall(() => call(cold())));
      const same = cold();
      identical.push(await wall(() => Promise.all(Array.from({ length: 8 }, () => call(same)))));
      different.push(await wall(() => Promise.all(Array.from({ length: 8 }, () => call(cold())))));
    }
    const one = p50(alone);
    console.table([
      { what: 'one cold heavy crosstab alone', 'p50 ms': fmt(one), 'x alone': '1.00' },
      {
        what: '8 identical at once (shared)',
        'p50 ms': fmt(p50(identical)),
        'x alone': fmt(p50(identical) / one),
        target: '<= 1.5x',
      },
      {
        what: '8 different at once (each computed)',
        'p50 ms': fmt(p50(different)),
        'x alone': fmt(p50(different) / one),
      },
    ]);

    // Cancellation: the same crosstab left to run, then abandoned a third of the way in.
    // The control: the same crosstab saving a report, which is never cancelled (it must save).
    const full = [];
    const freed = [];
    const kept = [];
    for (let r = 0; r < RUNS; r++) {
      full.push(await wall(() => call(cold())));
      const gone = await abandoned(server.port, token, cold(), Math.max(50, p50(full) / 3));
      if (!gone.answered) freed.push(await idleAfter(server.child.pid, gone.closedAt));
      const saving = { ...cold(), saveReport: { name: `bench ${fresh}` } };
      const left = await abandoned(server.port, token, saving, Math.max(50, p50(full) / 3));
      if (!left.answered) kept.push(await idleAfter(server.child.pid, left.closedAt));
    }
    console.table([
      { what: 'the crosstab run to its end', 'p50 ms': fmt(p50(full)) },
      {
        what: 'CPU after its client went away (a third in)',
        'p50 ms': freed.length ? fmt(p50(freed)) : 'answered before',
        target: '<= 200 ms',
      },
      {
        what: 'the same saving a report (never cancelled)',
        'p50 ms': kept.length ? fmt(p50(kept)) : 'answered before',
      },
    ]);
  } finally {
    await server.stop();
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});

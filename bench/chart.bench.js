#!/usr/bin/env node
// Chart benchmark: cold start of a chart worker, then an 800x600 MSColumn2D of 12 categories x 4 series
// through the whole JSON-RPC path (gateway, crosstab, gRPC, BullMQ, worker, Chromium) beside a direct
// in-process render of the same chart with a page pool of the same size, in one run; peak RSS of the
// worker process and its Chromium.
// Usage: npm run build && node bench/chart.bench.js [--seconds 10]
const { spawn } = require('node:child_process');
const os = require('node:os');
const path = require('node:path');
const { sqliteFile } = require('../packages/metadata-store/dist');
const { SqliteMetadataStore } = require('../packages/metadata-store/dist/sqlite');
const { SnapshotEngine } = require('../packages/snapshots/dist');
const { RunCrosstabUseCase } = require('../services/crosstab/dist');
const { DuckDbPivotEngine } = require('../services/crosstab/dist/duckdb');
const { buildChartOption, chartKind } = require('../services/chart/dist');
const { ChromiumRenderer } = require('../services/chart/dist/chromium');
const { renderSvg } = require('../services/chart/dist/echarts');
const { LruResultCache } = require('../packages/result-cache/dist');
const { completeCrosstabExecute } = require('../packages/contract/dist');
const { silentLogger } = require('../packages/logger/dist');
const { VEGA, BIN, benchData, rpc, timeIt, fmt, clientLoops, processTree, freePort } = require('./lib');

const SECONDS = Number(process.argv[process.argv.indexOf('--seconds') + 1]) || 10;
const CONCURRENCY = 2; // worker pages
const CLIENTS = 4;
const PARAMS = {
  index: 'movies',
  query: '(Major Genre):* AND (MPAA Rating):(G OR PG OR "PG-13" OR R)',
  rows: ['Major Genre'],
  columns: [{ field: 'MPAA Rating' }],
  totals: [{ aggregationType: 'Count' }],
  chartType: 'MSColumn2D',
  width: 800,
  height: 600,
};

function spawnLogged(args, env) {
  const child = spawn(process.execPath, [BIN, ...args], {
    env: { ...process.env, ...env, LOG_LEVEL: 'info' },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  children.add(child);
  const lines = [];
  let tail = '';
  child.stdout.on('data', (d) => {
    tail += d;
    const parts = tail.split('\n');
    tail = parts.pop();
    lines.push(...parts);
  });
  const waitFor = (re) =>
    new Promise((resolve, reject) => {
      let buf = '';
      const on = (d) => {
        buf += d;
        const m = re.exec(buf);
        if (m) {
          child.stdout.off('data', on);
          resolve(m);
        }
      };
      child.stdout.on('data', on);
      child.once('exit', (c) => reject(new Error(`exited ${c}: ${buf.slice(-1500)}`)));
    });
  return { child, waitFor, lines };
}

/**
 * Memory in MB of a process and, separately, of all its descendants (Chromium): PSS (shared pages split
 * between Chromium's processes) and plain RSS (summed over the processes, so shared pages count once each).
 */
function rss(pid) {
  const [self = { pssKb: 0, rssKb: 0 }, ...kids] = processTree(pid);
  const mb = (k) => kids.reduce((sum, p) => sum + p[k], 0) / 1024;
  return { self: self.pssKb / 1024, chromium: mb('pssKb'), selfRss: self.rssKb / 1024, chromiumRss: mb('rssKb') };
}

/** Sum and count of the crosstab service's ExecuteCrosstab histogram on the main process's /metrics (its ops port). */
async function crosstabSeconds(port) {
  const text = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
  const read = (suffix) => {
    const line = text
      .split('\n')
      .find(
        (l) => l.startsWith(`quarry_grpc_server_duration_seconds_${suffix}{`) && l.includes('rpc="ExecuteCrosstab"'),
      );
    if (!line) throw new Error(`no ExecuteCrosstab ${suffix} in /metrics`);
    return Number(line.slice(line.lastIndexOf(' ') + 1));
  };
  return { sum: read('sum'), count: read('count') };
}

async function throughput(fn) {
  return (await clientLoops(CLIENTS, SECONDS, () => fn())) / SECONDS;
}

async function main() {
  const { dataDir, env, token } = await benchData('c', [['movies', path.join(VEGA, 'movies.json')]]);

  const redisPort = await freePort();
  const redis = spawn('redis-server', ['--port', String(redisPort), '--save', '', '--appendonly', 'no'], {
    stdio: 'ignore',
  });
  children.add(redis);
  await new Promise((r) => setTimeout(r, 300));
  const shared = { ...env, REDIS_URL: `redis://127.0.0.1:${redisPort}` };

  // /metrics is served on the ops port only.
  const opsPort = await freePort();
  const main = spawnLogged(['serve'], {
    ...shared,
    PORT: '0',
    HOST: '127.0.0.1',
    QUARRY_OPS_PORT: String(opsPort),
    QUARRY_TARGET: 'gateway,query,crosstab,chart,reports',
  });
  const port = Number((await main.waitFor(/"port":(\d+),"msg":"quarry ready"/))[1]);
  const t0 = Date.now();
  const worker = spawnLogged(['serve'], {
    ...shared,
    QUARRY_TARGET: 'chart-worker',
    CHART_WORKER_CONCURRENCY: String(CONCURRENCY),
    // Warm from start-up, as the split deployment's chart pods run: the cold start is measured here.
    QUARRY_CHROMIUM_IDLE_S: '0',
  });
  const warm = Number((await worker.waitFor(/"warmMs":(\d+),"msg":"chart worker ready"/))[1]);
  const coldStart = Date.now() - t0;

  // The same chart, drawn directly: grid in process, then the renderer with the same pool size.
  const store = new SqliteMetadataStore(sqliteFile(dataDir));
  const engine = new SnapshotEngine(dataDir);
  const crosstab = await new RunCrosstabUseCase(store, new DuckDbPivotEngine(engine), new LruResultCache(0)).run(
    { admin: true, indexes: ['*'], realms: [] },
    completeCrosstabExecute({
      index: 'movies',
      query: PARAMS.query,
      rows: PARAMS.rows,
      columns: [{ field: 'MPAA Rating' }],
      totals: [{ aggregationType: 'Count' }],
    }),
    'grid',
  );
  const grid = JSON.parse(crosstab.payload);
  if (grid.rows.length !== 12 || grid.columns.length !== 4)
    throw new Error(`expected 12x4, got ${grid.rows.length}x${grid.columns.length}`);
  const option = buildChartOption(grid, chartKind('MSColumn2D'), 800, 600, 'movies');
  const renderer = new ChromiumRenderer(
    { executablePath: process.env.CHROMIUM_PATH || '/usr/bin/chromium', pages: CONCURRENCY, renderTimeoutMs: 10000 },
    silentLogger(),
  );
  await renderer.start();
  const direct = () => renderer.render({ option, width: 800, height: 600 });
  const e2e = () => rpc(port, token, 'CROSSTAB.EXECUTE', PARAMS);
  const { chartType: _c, width: _w, height: _h, ...htmlParams } = PARAMS;
  const html = () => rpc(port, token, 'CROSSTAB.EXECUTE', htmlParams);

  for (let i = 0; i < 10; i++) {
    await e2e();
    await direct();
  }
  const before = worker.lines.length;
  const crosstabBefore = await crosstabSeconds(opsPort);
  // Sequential calls, each timed: paired with the worker's own render time of the same job (jobs run one
  // at a time, so the n-th call is the n-th render) the overhead is measured per request.
  const e2eMs = [];
  for (let i = 0; i < 50; i++) {
    const t = process.hrtime.bigint();
    await e2e();
    e2eMs.push(Number(process.hrtime.bigint() - t) / 1e6);
  }
  const crosstabAfter = await crosstabSeconds(opsPort);
  // The crosstab service's own time for the 50 grids (its gRPC server histogram): computing the pivot
  // is not queue or transport, so it comes off the end-to-end time too.
  const crosstabMean = ((crosstabAfter.sum - crosstabBefore.sum) / (crosstabAfter.count - crosstabBefore.count)) * 1000;
  if (crosstabAfter.count - crosstabBefore.count !== e2eMs.length)
    throw new Error('crosstab calls do not match chart calls');
  await new Promise((r) => setTimeout(r, 300));
  const rendered = worker.lines
    .slice(before)
    .filter((l) => l.includes('"chart rendered"'))
    .map((l) => JSON.parse(l).ms);
  if (rendered.length !== e2eMs.length) throw new Error(`paired ${e2eMs.length} calls with ${rendered.length} renders`);
  const sorted = (xs) => [...xs].sort((a, b) => a - b);
  const q = (xs, p) => sorted(xs)[Math.min(xs.length - 1, Math.floor(p * xs.length))];
  const latE2e = { p50: q(e2eMs, 0.5), p95: q(e2eMs, 0.95) };
  const workerP50 = q(rendered, 0.5);
  const outsideRender = e2eMs.map((ms, i) => ms - rendered[i]);
  const latDirect = await timeIt(50, direct);
  for (let i = 0; i < 10; i++) await html();
  const latHtml = await timeIt(50, html);
  // In a chart call the crosstab engine has sat idle for one render since the previous call, and DuckDB
  // answers ~4 ms slower after such a pause than back to back (measured with timestamps in each step), so
  // the HTML call is also timed with the same pause before each.
  const spacedMs = [];
  for (let i = 0; i < 50; i++) {
    await new Promise((r) => setTimeout(r, workerP50));
    const t = process.hrtime.bigint();
    await html();
    spacedMs.push(Number(process.hrtime.bigint() - t) / 1e6);
  }
  const latHtmlSpaced = { p50: q(spacedMs, 0.5) };
  const strictOverhead = q(outsideRender, 0.5) - crosstabMean;
  const pairedOverhead = q(outsideRender, 0.5) - latHtmlSpaced.p50;

  const peak = { self: 0, chromium: 0, selfRss: 0, chromiumRss: 0 };
  const sampler = setInterval(() => {
    const r = rss(worker.child.pid);
    for (const k of Object.keys(peak)) peak[k] = Math.max(peak[k], r[k]);
  }, 200);
  const tputE2e = await throughput(e2e);
  clearInterval(sampler);
  const tputDirect = await throughput(direct);
  // imageFormat svg: ECharts' server-side SVG renderer in the chart service, no queue and no Chromium.
  const svgE2e = () => rpc(port, token, 'CROSSTAB.EXECUTE', { ...PARAMS, imageFormat: 'svg' });
  const svgDirect = async () => renderSvg({ option, width: 800, height: 600, format: 'svg' });
  for (let i = 0; i < 10; i++) {
    await svgE2e();
    await svgDirect();
  }
  const latSvgE2e = await timeIt(50, svgE2e);
  const latSvgDirect = await timeIt(50, svgDirect);
  const tputSvgE2e = await throughput(svgE2e);
  const tputSvgDirect = await throughput(svgDirect);

  await renderer.close();
  await engine.close();
  await store.close();
  for (const p of [worker.child, main.child]) {
    p.kill('SIGTERM');
    await new Promise((r) => p.once('exit', r));
  }
  redis.kill('SIGKILL');

  console.log(
    `chart worker cold start: ${coldStart} ms to ready (Chromium launch and ${CONCURRENCY} warm pages: ${warm} ms)`,
  );
  console.table([
    {
      path: 'end to end (JSON-RPC → crosstab → gRPC → BullMQ → worker)',
      'p50 ms': fmt(latE2e.p50),
      'p95 ms': fmt(latE2e.p95),
      'charts/s': fmt(tputE2e),
    },
    {
      path: 'direct in-process render, same pool size',
      'p50 ms': fmt(latDirect.p50),
      'p95 ms': fmt(latDirect.p95),
      'charts/s': fmt(tputDirect),
    },
    {
      path: 'SVG end to end (JSON-RPC → crosstab → gRPC → chart service)',
      'p50 ms': fmt(latSvgE2e.p50),
      'p95 ms': fmt(latSvgE2e.p95),
      'charts/s': fmt(tputSvgE2e),
    },
    {
      path: 'SVG direct in-process (renderSvg)',
      'p50 ms': fmt(latSvgDirect.p50),
      'p95 ms': fmt(latSvgDirect.p95),
      'charts/s': fmt(tputSvgDirect),
    },
  ]);
  console.log(
    `SVG vs PNG end to end: p50 ${fmt(latSvgE2e.p50)} vs ${fmt(latE2e.p50)} ms (ratio ${fmt(latSvgE2e.p50 / latE2e.p50)}), ${fmt(tputSvgE2e)} vs ${fmt(tputE2e)} charts/s`,
  );
  const overhead = latE2e.p50 - latDirect.p50;
  console.log(
    `end to end minus direct render at p50: ${fmt(overhead)} ms; ratio p50 ${fmt(latE2e.p50 / latDirect.p50)}`,
  );
  console.log(
    `  the render itself inside the worker (its own log) p50: ${workerP50} ms, vs ${fmt(latDirect.p50)} ms direct`,
  );
  console.log(
    `  the crosstab service computing the grid inside those chart calls (its gRPC histogram), mean: ${fmt(crosstabMean)} ms`,
  );
  console.log(
    `  the crosstab alone as an HTML JSON-RPC call: ${fmt(latHtml.p50)} ms back to back, ${fmt(latHtmlSpaced.p50)} ms after a pause of one render`,
  );
  console.log(`queue and transport overhead at p50, per request (e2e minus that job's own render):`);
  console.log(
    `  minus the crosstab service's compute time (everything else: HTTP, auth, both gRPC hops, queue, PNG back): ${fmt(strictOverhead)} ms (target < 15 ms)`,
  );
  console.log(
    `  minus the whole HTML crosstab call after the same pause (its HTTP and gRPC hop come off too): ${fmt(pairedOverhead)} ms`,
  );
  console.log(
    `  from independent p50s (e2e - spaced crosstab call - worker render): ${fmt(latE2e.p50 - latHtmlSpaced.p50 - workerP50)} ms`,
  );
  console.log(
    `throughput end to end: ${fmt(tputE2e)} charts/s with ${CLIENTS} clients (target >= 15 on ${os.cpus().length} cores)`,
  );
  console.log(
    `peak memory during the run: chart worker RSS ${fmt(peak.selfRss)} MB (PSS ${fmt(peak.self)}), its Chromium RSS summed over its processes ${fmt(peak.chromiumRss)} MB (PSS ${fmt(peak.chromium)})`,
  );
}

const children = new Set();
process.on('exit', () => {
  for (const c of children)
    try {
      c.kill('SIGKILL');
    } catch {
      // already gone
    }
});
main().catch((err) => {
  console.error(err);
  process.exit(1);
});

#!/usr/bin/env node
// Ranked search (issue 64) on a generated corpus of multi-word text: 1M records by default, words drawn
// from a Zipf vocabulary. Side by side in one run, through JSON-RPC with the result cache off:
//   - a ranked first page against the same query unranked (sorted by record number: the same matches,
//     the same top-N work, no scores), and its p50;
//   - a fuzzy word (~1) against the same word ranked;
//   - facets over 3 fields against the same ranked search alone;
//   - by hand: the first page a user would compute over the same records in DuckDB with SQL they write
//     themselves (their own BM25 over a words table), for scale;
//   - what the term counts cost at load (their statements timed on the loaded version) and their size per
//     million records (the tables written alone into a DuckDB file).
// Usage: npm run build && node bench/ranking.bench.js [--records 1000000] [--runs 21]
// (QUARRY_BENCH_KEEP=1 keeps the corpus and its data folder, and says where.)
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { DuckDBInstance } = require('@duckdb/node-api');
const { termsSql, textStatsSql } = require('../packages/snapshots/dist/text-terms');
const { cli, startServer, rpc, timeTurns, fmt, benchToken } = require('./lib');

const arg = (name, dflt) => {
  const i = process.argv.indexOf(name);
  return i > 0 ? Number(process.argv[i + 1]) : dflt;
};
const RECORDS = arg('--records', 1_000_000);
const RUNS = arg('--runs', 21);
const VOCABULARY = 50_000;

/** Pseudo-words, distinct, pronounceable enough to read in a log: consonant-vowel syllables. */
function vocabulary(n) {
  const c = 'bcdfghjklmnprstvz';
  const v = 'aeiou';
  const out = [];
  for (let i = 0; out.length < n; i++) {
    let x = i;
    let w = '';
    do {
      w += c[x % c.length] + v[Math.floor(x / c.length) % v.length];
      x = Math.floor(x / (c.length * v.length));
    } while (x > 0);
    out.push(w);
  }
  return out;
}

function seeded(seed) {
  let s = seed >>> 0;
  return () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

/** A Zipf sampler (s = 1) over n ranks: binary search on the cumulative weights. */
function zipf(n, rnd) {
  const cdf = new Float64Array(n);
  let sum = 0;
  for (let i = 0; i < n; i++) cdf[i] = sum += 1 / (i + 1);
  return () => {
    const x = rnd() * sum;
    let lo = 0;
    let hi = n - 1;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (cdf[mid] < x) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  };
}

async function writeCorpus(file, words) {
  const rnd = seeded(64);
  const pick = zipf(words.length, rnd);
  const categories = Array.from({ length: 40 }, (_, i) => `category ${i}`);
  const category = zipf(categories.length, rnd);
  const csv = `${file}.csv`;
  const out = fs.createWriteStream(csv);
  const text = (min, max) => {
    const n = min + Math.floor(rnd() * (max - min + 1));
    let s = '';
    for (let i = 0; i < n; i++) s += (i ? ' ' : '') + words[pick()];
    return s;
  };
  out.write('id,title,body,category,lang,year\n');
  for (let id = 0; id < RECORDS; id++) {
    const line = `${id},${text(2, 8)},${text(10, 60)},${categories[category()]},${['en', 'fr', 'de', 'es', 'it'][id % 5]},${1990 + (id % 35)}\n`;
    if (!out.write(line)) await new Promise((r) => out.once('drain', r));
  }
  await new Promise((r) => out.end(r));
  const db = await DuckDBInstance.create(':memory:');
  const c = await db.connect();
  await c.run(`COPY (SELECT * FROM read_csv('${csv}', header = true)) TO '${file}' (FORMAT parquet)`);
  c.closeSync();
  db.closeSync();
  fs.rmSync(csv);
}

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

async function main() {
  const work = fs.mkdtempSync(path.join(os.tmpdir(), 'quarry-bench-rank-'));
  const words = vocabulary(VOCABULARY);
  const file = path.join(work, 'corpus.parquet');
  let t = Date.now();
  await writeCorpus(file, words);
  console.log(
    `corpus: ${RECORDS.toLocaleString()} records, ${VOCABULARY.toLocaleString()}-word Zipf vocabulary, written in ${fmt((Date.now() - t) / 1000)} s`,
  );

  const dataDir = path.join(work, 'data');
  const env = { QUARRY_DATA_DIR: dataDir };
  t = Date.now();
  await cli(['index', 'load', 'corpus', file], env);
  const loadSecs = (Date.now() - t) / 1000;

  // The term counts' statements, timed alone on the loaded version's own records (as the load runs them).
  const dir = path.join(dataDir, 'indexes', 'corpus');
  const attached = fs.readdirSync(dir).find((f) => f.endsWith('.duckdb'));
  if (!attached) throw new Error('the corpus has no attachable DuckDB file: was it below ATTACH_MIN_RECORDS?');
  const fields = [
    { name: 'title', type: 'string' },
    { name: 'body', type: 'string' },
    { name: 'category', type: 'string' },
    { name: 'lang', type: 'string' },
  ];
  const db = await DuckDBInstance.create(':memory:', { memory_limit: '512MB', preserve_insertion_order: 'false' });
  const c = await db.connect();
  await c.run(`ATTACH '${path.join(dir, attached)}' AS v (READ_ONLY)`);
  const termsFile = path.join(work, 'terms.duckdb');
  await c.run(`ATTACH '${termsFile}' AS t`);
  const termTimes = [];
  for (let i = 0; i < 3; i++) {
    t = Date.now();
    await c.run(
      `CREATE OR REPLACE TABLE t.terms AS SELECT * FROM (${termsSql('v.main.records', fields)}) ORDER BY field, word`,
    );
    await c.run(`CREATE OR REPLACE TABLE t.stats AS ${textStatsSql('v.main.records', fields)}`);
    termTimes.push((Date.now() - t) / 1000);
  }
  await c.run('CHECKPOINT t');
  const termsSecs = median(termTimes);
  const [{ n: termRows }] = (await c.runAndReadAll('SELECT count(*) AS n FROM t.terms')).getRowObjectsJS();
  await c.run('DETACH t');
  const termsMb = fs.statSync(termsFile).size / 1e6;
  const fileMb = fs.statSync(path.join(dir, attached)).size / 1e6;

  const token = await benchToken(env);
  const server = await startServer(env);
  const call = (params) =>
    rpc(server.port, token, 'QUERIES.EXECUTE', { index: 'corpus', pageSize: 20, cache: false, ...params });
  // Everyday queries: one mid-frequency word, two words together; each run takes the next.
  const mid = (i) => words[100 + ((i * 37) % 900)];
  const pair = (i) => `${words[10 + ((i * 13) % 190)]} ${words[10 + ((i * 29 + 7) % 190)]}`;
  const queries = (i) => (i % 2 ? mid(i) : pair(i));
  await call({ query: queries(0) }); // opens the version, reads its term counts
  let i = 0;
  let j = 0;
  let k = 0;
  const searches = await timeTurns(RUNS, {
    unranked: () => call({ query: queries(i), sort: [{ field: 'id' }] }),
    ranked: () => call({ query: queries(i++) }),
  });
  const fuzzy = await timeTurns(RUNS, {
    ranked: () => call({ query: `body:${mid(j)}` }),
    fuzzy: () => call({ query: `body:${mid(j++)}~1` }),
  });
  const facets = await timeTurns(RUNS, {
    alone: () => call({ query: queries(k) }),
    facets: () =>
      call({
        query: queries(k++),
        facets: [{ field: 'category' }, { field: 'lang' }, { field: 'year' }],
      }),
  });
  // A sanity check a reader can see: the ranked page is best first.
  const sample = await call({ query: pair(3) });
  const scores = sample.scores ?? [];
  if (scores.some((s, x) => x > 0 && s > scores[x - 1])) throw new Error('the ranked page is not best first');
  await server.stop();

  // By hand, over the same records in DuckDB: the user's own words table and BM25 in SQL.
  const hand = await DuckDBInstance.create(':memory:');
  const h = await hand.connect();
  t = Date.now();
  await h.run(`CREATE TABLE docs AS SELECT id, body FROM read_parquet('${file}')`);
  await h.run(
    `CREATE TABLE postings AS SELECT id, word, count(*) AS tf FROM (SELECT id, unnest(regexp_split_to_array(lower(body), '[^a-z0-9]+')) AS word FROM docs) WHERE word <> '' GROUP BY id, word`,
  );
  await h.run(
    `CREATE TABLE lens AS SELECT id, count(*) AS len FROM (SELECT id, unnest(regexp_split_to_array(lower(body), '[^a-z0-9]+')) AS w FROM docs) WHERE w <> '' GROUP BY id`,
  );
  const handBuildSecs = (Date.now() - t) / 1000;
  let m = 0;
  const byHand = await timeTurns(RUNS, {
    hand: async () => {
      const w = mid(m++);
      await h.runAndReadAll(
        `WITH s AS (SELECT avg(len) AS avglen, count(*) AS n FROM lens), df AS (SELECT count(*) AS df FROM postings WHERE word = '${w}')
         SELECT p.id, ln(1 + (s.n - df.df + 0.5) / (df.df + 0.5)) * p.tf * 2.2 / (p.tf + 1.2 * (0.25 + 0.75 * l.len / s.avglen)) AS score
         FROM postings p JOIN lens l USING (id), s, df WHERE p.word = '${w}' ORDER BY score DESC, p.id LIMIT 20`,
      );
    },
  });
  h.closeSync();
  hand.closeSync();
  c.closeSync();
  db.closeSync();

  const r = (a, b) => fmt(a / b);
  console.log(
    `\nload: ${fmt(loadSecs)} s in all; the term counts' statements alone ${fmt(termsSecs)} s (median of 3) → they add ${fmt((100 * termsSecs) / (loadSecs - termsSecs))} % (target ≤ 30 %)`,
  );
  console.log(
    `term counts: ${Number(termRows).toLocaleString()} rows, ${fmt(termsMb)} MB in a DuckDB file of their own (${fmt(termsMb / (RECORDS / 1e6))} MB per million records); the version's file is ${fmt(fileMb)} MB with them`,
  );
  console.log('\nthrough JSON-RPC, first page of 20, result cache off, p50 / p95 ms:');
  console.log(`  unranked (sort by record number)  ${fmt(searches.unranked.p50)} / ${fmt(searches.unranked.p95)}`);
  console.log(
    `  ranked                            ${fmt(searches.ranked.p50)} / ${fmt(searches.ranked.p95)}   → ${r(searches.ranked.p50, searches.unranked.p50)}× unranked (target ≤ 2×), p50 target ≤ 150 ms`,
  );
  console.log(`  body:word ranked                  ${fmt(fuzzy.ranked.p50)} / ${fmt(fuzzy.ranked.p95)}`);
  console.log(
    `  body:word~1 (fuzzy)               ${fmt(fuzzy.fuzzy.p50)} / ${fmt(fuzzy.fuzzy.p95)}   → ${r(fuzzy.fuzzy.p50, fuzzy.ranked.p50)}× ranked (target ≤ 3×)`,
  );
  console.log(`  ranked alone                      ${fmt(facets.alone.p50)} / ${fmt(facets.alone.p95)}`);
  console.log(
    `  ranked + facets on 3 fields       ${fmt(facets.facets.p50)} / ${fmt(facets.facets.p95)}   → ${r(facets.facets.p50, facets.alone.p50)}× the search alone (target ≤ 1.5×)`,
  );
  console.log(
    `\nby hand in DuckDB (a postings table built in ${fmt(handBuildSecs)} s, BM25 in SQL, one word in body): p50 ${fmt(byHand.hand.p50)} ms, p95 ${fmt(byHand.hand.p95)} ms`,
  );
  if (process.env.QUARRY_BENCH_KEEP) console.log(`kept ${work}`);
  else fs.rmSync(work, { recursive: true, force: true });
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});

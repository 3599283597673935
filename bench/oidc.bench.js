#!/usr/bin/env node
// What a JWT from an OpenID provider costs against an API token (issue #58: ≤ 1.2× at p50): the same
// QUERIES.EXECUTE on the movies sample, end to end over HTTP on the built server, called in turns with the
// user's API token and with an access token of a real provider (oidc-provider on loopback, as the tests
// run it), both for users with the same realm. The JWT's call verifies RS256 against cached keys, maps
// the claims and reads the user and the sign-in token; the API token's reads the token.
// Usage: npm run build && node bench/oidc.bench.js [--calls 2000]
const { spawn } = require('node:child_process');
const path = require('node:path');
const readline = require('node:readline');
const { URLSearchParams } = require('node:url');
const { benchData, cli, rpc, startServer, timeTurns } = require('./lib');

const at = process.argv.indexOf('--calls');
const CALLS = at > 0 ? Number(process.argv[at + 1]) : 2000;
const MOVIES = path.join(__dirname, '..', 'node_modules', 'vega-datasets', 'data', 'movies.json');

async function startProvider() {
  const child = spawn(process.execPath, [path.join(__dirname, '..', 'tests', 'support', 'oidc-provider.mjs')], {
    stdio: ['ignore', 'pipe', 'ignore'],
  });
  const line = await new Promise((resolve, reject) => {
    readline.createInterface({ input: child.stdout }).once('line', resolve);
    child.once('exit', (code) => reject(new Error(`the provider exited ${code}`)));
  });
  return { ...JSON.parse(line), stop: () => child.kill('SIGTERM') };
}

async function main() {
  const provider = await startProvider();
  const { env } = await benchData('oidc', [['movies', MOVIES]], 'query:execute,indexes:read');
  // The API token's user gets the realm the JWT's claims give theirs, so both calls filter alike.
  await cli(['user', 'create', 'realm-bench', '--indexes', '*', '--realm', 'movies=(Major Genre):=Drama'], env);
  const apiToken = (await cli(['token', 'create', '--user', 'realm-bench', '--scopes', 'query:execute'], env))
    .trim()
    .split('\n')
    .pop();
  const server = await startServer({
    ...env,
    QUARRY_OIDC_ISSUER: provider.issuer,
    QUARRY_OIDC_AUDIENCE: provider.audience,
    QUARRY_OIDC_INDEXES_CLAIM: 'indexes',
    // tenant-a's tenant claim is "acme"; the template fills a genre from it so both users have one realm.
    QUARRY_OIDC_REALMS: JSON.stringify({ movies: '(Major Genre):=Drama AND NOT Title:={tenant}' }),
  });
  try {
    const res = await fetch(`${provider.issuer}/token`, {
      method: 'POST',
      headers: { Authorization: `Basic ${Buffer.from('tenant-a:secret-a').toString('base64')}` },
      body: new URLSearchParams({ grant_type: 'client_credentials', scope: 'query:execute indexes:read' }),
    });
    const jwt = (await res.json()).access_token;
    const params = { index: 'movies', query: 'Title:the', pageSize: 10, cache: false };
    const totals = {};
    for (const [name, token] of Object.entries({ api: apiToken, jwt })) {
      totals[name] = (await rpc(server.port, token, 'QUERIES.EXECUTE', params)).total;
    }
    console.log(
      `QUERIES.EXECUTE movies "Title:the", realm Drama: ${totals.api} records (API token), ${totals.jwt} (JWT)`,
    );
    const rows = [];
    for (let round = 1; round <= 3; round++) {
      const t = await timeTurns(CALLS, {
        api: () => rpc(server.port, apiToken, 'QUERIES.EXECUTE', params),
        jwt: () => rpc(server.port, jwt, 'QUERIES.EXECUTE', params),
      });
      rows.push({ round, ...t });
    }
    const ms = (v) => `${v.toFixed(2)} ms`;
    console.log('| round | API token p50 | JWT p50 | ratio p50 | API token p95 | JWT p95 |');
    console.log('| --- | --- | --- | --- | --- | --- |');
    for (const r of rows)
      console.log(
        `| ${r.round} | ${ms(r.api.p50)} | ${ms(r.jwt.p50)} | **${(r.jwt.p50 / r.api.p50).toFixed(2)}×** | ${ms(r.api.p95)} | ${ms(r.jwt.p95)} |`,
      );
  } finally {
    await server.stop();
    provider.stop();
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});

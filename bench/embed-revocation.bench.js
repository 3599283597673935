#!/usr/bin/env node
// What checking single embed-token revocation (TOKENS.REVOKE_EMBED, issue #27) adds to each call made with
// an embed token: the gateway's whole authentication of one (JWT verify, the issuing token's credential,
// and the revocation check) on the built code and a SQLite metadata store, in one run:
//   before:  no revocation check (the authentication as it was);
//   after:   the check as shipped, answered from the gateway's lookup cache (one store read per token per 2 s);
//   naive:   the same check asking the store on every call, the hand-written baseline;
// and the cached lookup on its own (EmbedTokenRegistry.isRevoked, a cache hit).
// Usage: npm run build && flock /tmp/quarry-heavy.lock node bench/embed-revocation.bench.js [--calls 20000]
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { SqliteMetadataStore } = require('../packages/metadata-store/dist/adapters/sqlite-metadata-store.adapter');
const { hashToken } = require('../packages/metadata-store/dist');
const { silentLogger } = require('../packages/logger/dist');
const { JoseEmbedSigner } = require('../services/gateway/dist/adapters/jose-embed-signer.adapter');
const { AuthenticateUseCase } = require('../services/gateway/dist/domain/authenticate.use-case');
const { EmbedTokenRegistry } = require('../services/gateway/dist/domain/embed-token-registry');

const at = process.argv.indexOf('--calls');
const CALLS = at > 0 ? Number(process.argv[at + 1]) : 20000;

async function perCall(fn, calls = CALLS) {
  for (let i = 0; i < 500; i++) await fn();
  const t = process.hrtime.bigint();
  for (let i = 0; i < calls; i++) await fn();
  return Number(process.hrtime.bigint() - t) / 1e3 / calls;
}

async function main() {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'quarry-bench-embed-'));
  const store = new SqliteMetadataStore(path.join(dir, 'quarry.db'));
  const user = await store.createUser({ name: 'bench', admin: false, indexes: ['*'], realms: [] });
  const apiToken = await store.createToken({
    userId: user.id,
    hash: hashToken('qk_bench'),
    prefix: 'qk_bench',
    scopes: ['query:execute', 'embed:create'],
    expiresAt: null,
  });
  const signer = new JoseEmbedSigner(new Uint8Array(32).fill(7));
  const { token, claims } = await signer.sign({ issuerTokenId: apiToken.id, userId: user.id, index: 'movies' }, 3600);
  await store.recordEmbedToken({
    id: claims.id,
    userId: user.id,
    tokenId: apiToken.id,
    expiresAt: new Date(claims.expiresAt * 1000).toISOString(),
  });
  const header = `Bearer ${token}`;
  const log = silentLogger();
  const cached = new EmbedTokenRegistry(store, log);
  // The hand-written alternative: ask the store on every call (lru-cache's ttl 0 would mean "forever").
  const uncached = {
    isRevoked: async (id) => (await store.findEmbedToken(id))?.revokedAt != null,
    revokedByThisGateway: () => false,
  };
  const auth = {
    before: new AuthenticateUseCase(store, signer),
    after: new AuthenticateUseCase(store, signer, Date.now, cached),
    naive: new AuthenticateUseCase(store, signer, Date.now, uncached),
  };
  for (const a of Object.values(auth)) {
    const r = await a.authenticate(header);
    if (!r.ok) throw new Error(`authentication failed: ${r.error.detail}`);
  }
  const rows = [];
  for (let round = 1; round <= 5; round++) {
    const before = await perCall(() => auth.before.authenticate(header));
    const after = await perCall(() => auth.after.authenticate(header));
    const naive = await perCall(() => auth.naive.authenticate(header));
    const hit = await perCall(() => cached.isRevoked(claims.id), CALLS * 5);
    rows.push({ round, before, after, naive, hit });
  }
  const us = (v) => `${v.toFixed(2)} µs`;
  console.log(
    '| round | before (no check) | after (cached) | naive (store each call) | added by the check | cache hit alone |',
  );
  console.log('| --- | --- | --- | --- | --- | --- |');
  for (const r of rows)
    console.log(
      `| ${r.round} | ${us(r.before)} | ${us(r.after)} | ${us(r.naive)} | ${us(r.after - r.before)} (${(
        ((r.after - r.before) / r.before) *
        100
      ).toFixed(1)} %) | ${us(r.hit)} |`,
    );
  await store.close();
  fs.rmSync(dir, { recursive: true, force: true });
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});

// A real OpenID provider (the `oidc-provider` package) on loopback, for the sign-in tests. Started as a
// child process (the package is ESM only); it prints one JSON line {issuer} once it listens.
//
// Clients: `tenant-a`, `tenant-b` and `tenant-evil` (client credentials, secret `secret-a` / `secret-b` /
// `secret-evil`) get access tokens for the API whose `tenant` claim is `acme` / `globex` / query syntax,
// and whose `indexes` claim is orders and movies; `quarry-console` is a public client (authorization
// code with PKCE, registered by the test at POST /reg with the gateway's /console/ as its redirect URI)
// whose users sign in on the provider's own login page with any name: `<name>@<tenant>` gives tenant
// `<tenant>`. Every access token is a JWT (RS256) with audience `urn:quarry:api`.
import { generateKeyPairSync } from 'node:crypto';
import process from 'node:process';
import Provider from 'oidc-provider';

const AUDIENCE = 'urn:quarry:api';
const API_SCOPES = 'indexes:read query:execute reports:read reports:write embed:create tokens:write';

const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
const jwk = { ...privateKey.export({ format: 'jwk' }), kid: 'test-key-1', use: 'sig', alg: 'RS256' };

// `tenant-evil`'s tenant is query syntax: a realm must match it as text, never as `OR`, `*` and a field.
const TENANTS = { 'tenant-a': 'acme', 'tenant-b': 'globex', 'tenant-evil': '* OR tenant:globex' };
const tenantOf = (token) =>
  token.accountId ? (token.accountId.split('@')[1] ?? 'none') : (TENANTS[token.clientId] ?? 'none');

const port = Number(process.env.OIDC_PORT ?? 0);
const server = (await import('node:http')).createServer();
await new Promise((resolve) => server.listen(port, '127.0.0.1', resolve));
const issuer = `http://127.0.0.1:${server.address().port}`;

const provider = new Provider(issuer, {
  jwks: { keys: [jwk] },
  clients: [
    ...Object.keys(TENANTS).map((id) => ({
      client_id: id,
      client_secret: `secret-${id.split('-')[1]}`,
      grant_types: ['client_credentials'],
      response_types: [],
      redirect_uris: [],
      scope: API_SCOPES,
    })),
  ],
  scopes: ['openid', ...API_SCOPES.split(' ')],
  pkce: { required: () => true },
  features: {
    clientCredentials: { enabled: true },
    // The console's client is registered once the gateway's address is known (POST /reg), as `quarry-console`.
    registration: { enabled: true, idFactory: () => 'quarry-console' },
    devInteractions: { enabled: true },
    resourceIndicators: {
      enabled: true,
      defaultResource: () => AUDIENCE,
      useGrantedResource: () => true,
      // Another API's tokens (`resource=urn:other:api`) are signed by the same keys for another audience.
      getResourceServerInfo: (_ctx, resource) => ({
        scope: API_SCOPES,
        audience: resource === 'urn:other:api' ? resource : AUDIENCE,
        accessTokenTTL: 3600,
        accessTokenFormat: 'jwt',
        jwt: { sign: { alg: 'RS256' } },
      }),
    },
  },
  findAccount: async (_ctx, id) => ({ accountId: id, claims: async () => ({ sub: id }) }),
  extraTokenClaims: async (_ctx, token) => ({ tenant: tenantOf(token), indexes: ['orders', 'movies'] }),
  // CORS for the console's token request from the gateway's origin.
  clientBasedCORS: () => true,
});
provider.proxy = false;
server.on('request', provider.callback());
process.stdout.write(`${JSON.stringify({ issuer, audience: AUDIENCE })}\n`);
process.on('SIGTERM', () => server.close(() => process.exit(0)));

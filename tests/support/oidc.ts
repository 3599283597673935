import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import readline from 'node:readline';

export interface OidcProvider {
  issuer: string;
  audience: string;
  /** An access token (a JWT) for a client-credentials client, with these scopes, for `resource` (default the API). */
  token(client: string, scope: string, resource?: string): Promise<string>;
  /** The provider's public signing keys (its JWKS). */
  keys(): Promise<Array<Record<string, unknown>>>;
  stop(): Promise<void>;
}

const SCRIPT = path.join(__dirname, 'oidc-provider.mjs');

/** Starts tests/support/oidc-provider.mjs on a free loopback port and waits for the line it prints when it listens. */
export async function startOidcProvider(env: Record<string, string> = {}): Promise<OidcProvider> {
  const child: ChildProcess = spawn(process.execPath, [SCRIPT], {
    env: { PATH: process.env.PATH ?? '', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr!.on('data', (c: Buffer) => (stderr += c.toString()));
  const first = await new Promise<string>((resolve, reject) => {
    const lines = readline.createInterface({ input: child.stdout! });
    lines.once('line', resolve);
    child.once('exit', (code) => reject(new Error(`the OpenID provider exited (${code}): ${stderr}`)));
  });
  const { issuer, audience } = JSON.parse(first) as { issuer: string; audience: string };
  return {
    issuer,
    audience,
    async token(client, scope, resource) {
      const secret = `secret-${client.split('-')[1]}`;
      const body = new URLSearchParams({ grant_type: 'client_credentials', scope, ...(resource ? { resource } : {}) });
      const res = await fetch(`${issuer}/token`, {
        method: 'POST',
        headers: { Authorization: `Basic ${Buffer.from(`${client}:${secret}`).toString('base64')}` },
        body,
      });
      const json = (await res.json()) as { access_token?: string };
      if (!json.access_token) throw new Error(`token for ${client}: HTTP ${res.status} ${JSON.stringify(json)}`);
      return json.access_token;
    },
    async keys() {
      const doc = (await (await fetch(`${issuer}/.well-known/openid-configuration`)).json()) as { jwks_uri: string };
      return ((await (await fetch(doc.jwks_uri)).json()) as { keys: Array<Record<string, unknown>> }).keys;
    },
    stop: () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null) return resolve();
        child.once('exit', () => resolve());
        child.kill('SIGTERM');
      }),
  };
}

/**
 * The gateway's settings for this provider as the sign-in tests use it: the `indexes` claim gives the
 * indexes, and the `tenant` claim the realm on orders (exact match).
 */
export function oidcSettings(provider: OidcProvider, more: Record<string, string> = {}): Record<string, string> {
  return {
    QUARRY_OIDC_ISSUER: provider.issuer,
    QUARRY_OIDC_AUDIENCE: provider.audience,
    QUARRY_OIDC_INDEXES_CLAIM: 'indexes',
    QUARRY_OIDC_REALMS: JSON.stringify({ orders: 'tenant:={tenant}' }),
    ...more,
  };
}

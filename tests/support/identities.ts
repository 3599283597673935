import { createToken, createUser } from '../../apps/quarry/src/commands/identity.commands';
import { sqliteFile, type Realm } from '@quarry/metadata-store';
import { SqliteMetadataStore } from '@quarry/metadata-store/sqlite';

export const ALL_SCOPES = 'query:execute,indexes:read,reports:read,reports:write,embed:create';

export interface Identity {
  user: string;
  token: string;
  tokenId: string;
  /** When the token stops being accepted (ISO), or null for none: wait for it rather than guess. */
  expiresAt?: string | null;
}

/** Creates a user and a token through the same code `quarry user/token create` runs, on the server's store. */
export async function createIdentity(
  dataDir: string,
  name: string,
  opts: {
    scopes?: string;
    indexes?: string;
    admin?: boolean;
    realms?: Realm[];
    expiresIn?: string;
    allowUnknownScopes?: boolean;
  } = {},
): Promise<Identity> {
  const store = new SqliteMetadataStore(sqliteFile(dataDir));
  try {
    if (!(await store.findUserByName(name))) {
      await createUser(store, name, {
        indexes: opts.indexes ?? '*',
        admin: opts.admin,
        realm: (opts.realms ?? []).map((r) => `${r.index}=${r.query}`),
      });
    }
    const out = await createToken(store, {
      user: name,
      scopes: opts.scopes ?? ALL_SCOPES,
      expiresIn: opts.expiresIn,
      allowUnknownScopes: opts.allowUnknownScopes,
    });
    const lines = out.split('\n');
    const expires = lines.find((l) => l.startsWith('expires:'))?.replace(/^expires:\s+/, '');
    return {
      user: name,
      token: lines[lines.length - 1],
      tokenId: lines[0].replace(/^id:\s+/, ''),
      expiresAt: expires === undefined || expires === 'never' ? null : expires,
    };
  } finally {
    await store.close();
  }
}

/** Sleeps until a token created with `expiresIn` has expired by its own expiry, and a little more. */
export async function waitOutExpiry(identity: Identity): Promise<void> {
  if (!identity.expiresAt) throw new Error(`the token of ${identity.user} never expires`);
  await new Promise((r) => setTimeout(r, Math.max(0, Date.parse(identity.expiresAt!) - Date.now()) + 100));
}

export async function withStore<T>(dataDir: string, fn: (store: SqliteMetadataStore) => Promise<T>): Promise<T> {
  const store = new SqliteMetadataStore(sqliteFile(dataDir));
  try {
    return await fn(store);
  } finally {
    await store.close();
  }
}

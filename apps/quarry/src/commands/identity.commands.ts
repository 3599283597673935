import { listing } from './listing';
import { AppError } from '@quarry/errors';
import {
  SCOPES,
  hashToken,
  isScope,
  issueToken,
  parseDuration,
  tokenStatus,
  type MetadataStore,
} from '@quarry/metadata-store';
import { parseRealms } from './parse-realms';

const USER_NAME = /^[A-Za-z0-9._@-]{1,100}$/;

export interface CreateUserOptions {
  indexes?: string;
  realm?: string[];
  admin?: boolean;
}

export async function createUser(store: MetadataStore, name: string, opts: CreateUserOptions): Promise<string> {
  if (!USER_NAME.test(name)) throw AppError.invalid('user names are 1-100 letters, digits or . _ @ -');
  const indexes = (opts.indexes ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  const admin = opts.admin ?? false;
  // Checked before the store is touched: a refused realm leaves no user behind.
  const realms = parseRealms(opts.realm ?? [], { indexes, admin });
  const user = await store.createUser({ name, admin, indexes, realms });
  const reach = user.admin
    ? 'admin: every index'
    : indexes.length
      ? `indexes: ${indexes.join(', ')}`
      : 'no index yet (use --indexes)';
  return `created user ${user.name} (${user.id}); ${reach}`;
}

export async function listUsers(store: MetadataStore): Promise<string> {
  const users = await store.listUsers();
  if (users.length === 0) return 'no users';
  return listing(
    ['name', 'status', 'admin', 'indexes', 'realms'],
    users.map((u) => {
      const realms = u.realms.map((r) => `${r.index}=${r.query}`).join(' ; ');
      return [u.name, u.status, u.admin ? 'admin' : '-', u.indexes.join(',') || '-', realms || '-'];
    }),
  );
}

export interface CreateTokenOptions {
  user: string;
  scopes: string;
  expiresIn?: string;
  allowUnknownScopes?: boolean;
}

/** Prints the token alone on the last line: scripts take `tail -n 1`. */
export async function createToken(store: MetadataStore, opts: CreateTokenOptions, now = Date.now()): Promise<string> {
  const user = await store.findUserByName(opts.user);
  if (!user) throw AppError.notFound(`User "${opts.user}" not found`);
  const scopes = [
    ...new Set(
      opts.scopes
        .split(',')
        .map((s) => s.trim())
        .filter(Boolean),
    ),
  ];
  if (scopes.length === 0) throw AppError.invalid(`--scopes needs at least one of ${SCOPES.join(', ')}`);
  const unknown = scopes.filter((s) => !isScope(s));
  if (unknown.length && !opts.allowUnknownScopes) {
    throw AppError.invalid(
      `unknown scope(s) ${unknown.join(', ')}; known: ${SCOPES.join(', ')} (or pass --allow-unknown-scopes)`,
    );
  }
  let expiresAt: string | null = null;
  if (opts.expiresIn !== undefined) {
    const ms = parseDuration(opts.expiresIn);
    if (ms === null)
      throw AppError.invalid(`--expires-in takes a duration like 90s, 15m, 12h or 30d, got "${opts.expiresIn}"`);
    expiresAt = new Date(now + ms).toISOString();
  }
  // The same making as TOKENS.CREATE's: only the hash and a short head are stored.
  const { record, token } = await issueToken(store, { userId: user.id, scopes, expiresAt });
  return [
    `id:      ${record.id}`,
    `prefix:  ${record.prefix}`,
    `user:    ${user.name}`,
    `scopes:  ${scopes.join(',')}`,
    `expires: ${expiresAt ?? 'never'}`,
    token,
  ].join('\n');
}

export async function listTokens(store: MetadataStore, now = Date.now()): Promise<string> {
  const [tokens, users] = await Promise.all([store.listTokens(), store.listUsers()]);
  if (tokens.length === 0) return 'no tokens';
  const names = new Map(users.map((u) => [u.id, u.name]));
  return listing(
    ['id', 'token', 'user', 'status', 'scopes', 'expires'],
    tokens.map((t) => [
      t.id,
      `${t.prefix}…`,
      names.get(t.userId) ?? '(deleted user)',
      tokenStatus(t, now),
      t.scopes.join(','),
      t.expiresAt ?? 'never',
    ]),
  );
}

/** Accepts the token id, or the clear token itself (looked up by its hash). */
export async function revokeToken(store: MetadataStore, idOrToken: string): Promise<string> {
  let id = idOrToken.trim();
  if (id.startsWith('qk_')) {
    const record = await store.findTokenByHash(hashToken(id));
    if (!record) throw AppError.notFound('No such token');
    id = record.id;
  }
  const before = (await store.listTokens()).find((t) => t.id === id);
  if (before?.revokedAt) return `token ${before.id} (${before.prefix}…) was already revoked, at ${before.revokedAt}`;
  const revoked = await store.revokeToken(id);
  return `revoked token ${revoked.id} (${revoked.prefix}…)`;
}

/**
 * Revokes one embed token (the id TOKENS.EMBED returned, also in `quarry audit`) of any user. The gateways
 * refuse it within EMBED_REVOCATION_CACHE_MS (2 s): they learn it from the store, not from this process.
 */
export async function revokeEmbedToken(store: MetadataStore, id: string): Promise<string> {
  const revoked = await store.revokeEmbedToken(id.trim());
  const users = await store.listUsers();
  const owner = users.find((u) => u.id === revoked.userId)?.name ?? '(deleted user)';
  return `revoked embed token ${revoked.id} (user ${owner}, would have expired ${revoked.expiresAt})`;
}

import { z } from 'zod';
import * as L from '../limits';
import { SCOPES } from '../scopes';
import { arrayOf, oneOf, optionalBoolean, PARAM, requiredString, string } from './param-builders';

/**
 * A user's name, as `quarry user create` takes it: what tokens, audit entries and reports name the user by;
 * or a user made by an OpenID Connect sign-in, `oidc:` and the claim's printable characters.
 */
export const USER_NAME = /^(?:[A-Za-z0-9._@-]{1,100}|oidc:[\x21-\x7E]{1,95})$/;
export const USER_NAME_MAX = 100;
/** Indexes one user may be given, and realm queries per index: far beyond a real grant, small enough to read. */
export const USER_INDEXES_MAX = 1000;
export const USER_REALMS_PER_INDEX_MAX = 20;
export const TOKEN_NAME_MAX = 100;
/** How far ahead TOKENS.CREATE may set an expiry: a token made through the API always ends. */
export const TOKEN_EXPIRES_IN_MAX_DAYS = 366;
export const DEFAULT_TOKEN_EXPIRES_IN = '30d';
/** `90s`, `15m`, `12h`, `30d`, as `quarry token create --expires-in` takes them. */
export const TOKEN_EXPIRES_IN = /^\s*\d{1,6}[smhd]\s*$/;

const userName = z
  .string({ error: `${PARAM} is required` })
  .max(USER_NAME_MAX, { error: `${PARAM} must be at most ${USER_NAME_MAX} characters` })
  .regex(USER_NAME, {
    error: `${PARAM} must be 1-${USER_NAME_MAX} letters, digits or . _ @ -, or oidc: and a signed-in user's claim`,
  });

const indexName = z
  .string({ error: `${PARAM} must be a string` })
  .max(L.INDEX_NAME_MAX, { error: `${PARAM} must be at most ${L.INDEX_NAME_MAX} characters` })
  .regex(L.INDEX_NAME, {
    error: `${PARAM} is not an index name: 1-64 letters, digits, ".", "_" or "-", starting with a letter or digit`,
  });

const indexes = (meta: { description: string; default?: string[] }) =>
  arrayOf(z.union([indexName, z.literal('*')], { error: `${PARAM} must be an index name or "*"` }), USER_INDEXES_MAX)
    .optional()
    .meta(meta);
const INDEXES = 'The indexes the user may read; ["*"]: every index (an admin reads them all anyway).';

const realms = (description: string) =>
  z
    .record(
      indexName,
      arrayOf(requiredString(L.QUERY_MAX_LENGTH), USER_REALMS_PER_INDEX_MAX).min(1, {
        error: `${PARAM} needs at least one query (leave the index out instead)`,
      }),
      { error: `${PARAM} must be an object of index name → [query, …]` },
    )
    .optional()
    .meta({ description });
const REALMS =
  'Index → queries: a row of that index the user sees matches one of them (several are ORed), ANDed into every call of the user on it. Each index must be one the user is given, each query must parse and, when the index exists, name only its fields; an admin takes none.';

const admin = (meta: { description: string; default?: boolean }) => optionalBoolean().meta(meta);
const ADMIN = 'Reads every row of every index, and may use the admin API.';

export const usersCreateParams = z
  .strictObject({
    name: userName.meta({ description: 'The new user’s name: 1-100 letters, digits or . _ @ -.' }),
    indexes: indexes({ default: [], description: INDEXES }),
    realms: realms(REALMS),
    admin: admin({ default: false, description: ADMIN }),
  })
  .meta({ title: 'UsersCreateParams' });

export const usersUpdateParams = z
  .strictObject({
    name: userName.meta({ description: 'The user to change.' }),
    indexes: indexes({ description: 'Replaces the indexes the user may read.' }),
    realms: realms('Replaces every realm of the user ({}: none), checked as USERS.CREATE checks it.'),
    admin: admin({ description: 'Makes the user an admin or not (an admin may not demote their own user).' }),
  })
  .meta({ title: 'UsersUpdateParams' });

export const usersFindParams = z
  .strictObject({ name: userName.optional().meta({ description: 'One user; absent: every user, by name.' }) })
  .meta({ title: 'UsersFindParams' });

export const usersNameParams = (title: string, description: string) =>
  z.strictObject({ name: userName.meta({ description }) }).meta({ title });

export const usersDisableParams = usersNameParams(
  'UsersDisableParams',
  'The user whose tokens stop working from the next call on.',
);
export const usersEnableParams = usersNameParams('UsersEnableParams', 'The disabled user whose tokens work again.');
export const usersDeleteParams = usersNameParams('UsersDeleteParams', 'The user to remove.');

export const userSummary = z
  .strictObject({
    name: z.string(),
    status: z.enum(['active', 'disabled']).meta({ description: 'A disabled user’s tokens are refused (401).' }),
    admin: z.boolean(),
    indexes: z.array(z.string()).meta({ description: 'The indexes the user may read (`*`: every index).' }),
    realms: z.record(z.string(), z.array(z.string())).meta({
      description: 'Index → queries, ORed with each other and ANDed into every call of the user on that index.',
    }),
    createdAt: z.string(),
  })
  .meta({ title: 'UserSummary' });

export const usersCreateResult = userSummary.meta({ title: 'UsersCreateResult' });
export const usersUpdateResult = userSummary.meta({ title: 'UsersUpdateResult' });
export const usersDisableResult = userSummary.meta({ title: 'UsersDisableResult' });
export const usersEnableResult = userSummary.meta({ title: 'UsersEnableResult' });
export const usersFindResult = z.strictObject({ users: z.array(userSummary) }).meta({ title: 'UsersFindResult' });
export const usersDeleteResult = z
  .strictObject({ name: z.string(), deleted: z.literal(true) })
  .meta({ title: 'UsersDeleteResult' });

export const tokensCreateParams = z
  .strictObject({
    user: userName.optional().meta({
      description:
        'Whose token: absent, the caller’s own user; another user needs the users:admin scope and an admin user.',
    }),
    scopes: arrayOf(oneOf(SCOPES), SCOPES.length * 4)
      .min(1, { error: `${PARAM} needs at least one scope` })
      .meta({ description: 'What the new token may do: only scopes the calling token holds itself.' }),
    expiresIn: string(16, 'a duration like 90s, 15m, 12h or 30d')
      .regex(TOKEN_EXPIRES_IN, { error: `${PARAM} must be a duration like 90s, 15m, 12h or 30d` })
      .optional()
      .meta({
        default: DEFAULT_TOKEN_EXPIRES_IN,
        description: `How long the token works: 90s, 15m, 12h, 30d (at most ${TOKEN_EXPIRES_IN_MAX_DAYS}d), and never past the calling token’s own expiry (absent: ${DEFAULT_TOKEN_EXPIRES_IN}, or that expiry when it is sooner).`,
      }),
    name: requiredString(TOKEN_NAME_MAX)
      .optional()
      .meta({ description: 'What the token is for, shown by TOKENS.FIND (never secret: the token is).' }),
  })
  .meta({ title: 'TokensCreateParams' });

export const tokensCreateResult = z
  .strictObject({
    id: z.string().meta({ description: 'The token’s id: what TOKENS.FIND lists and TOKENS.REVOKE takes.' }),
    token: z.string().meta({
      description:
        'The token itself, to send as `Authorization: Bearer …`. Shown this once: only its SHA-256 is kept, so it cannot be shown again.',
    }),
    prefix: z.string().meta({ description: 'Its first characters, as TOKENS.FIND shows them.' }),
    user: z.string(),
    scopes: z.array(z.string()),
    expiresAt: z.string().nullable().meta({ description: 'When it stops working (ISO-8601 UTC).' }),
    name: z.string().optional(),
  })
  .meta({ title: 'TokensCreateResult' });

export const tokensFindParams = z
  .strictObject({
    user: userName.optional().meta({
      description:
        'Whose tokens: absent, the caller’s own user’s; another user needs the users:admin scope and an admin user.',
    }),
  })
  .meta({ title: 'TokensFindParams' });

export const tokenSummary = z
  .strictObject({
    id: z.string(),
    user: z.string(),
    prefix: z.string().meta({ description: 'The token’s first characters, to tell tokens apart; never the token.' }),
    scopes: z.array(z.string()),
    createdAt: z.string(),
    expiresAt: z.string().nullable().meta({ description: 'null: it does not expire (a token of the CLI’s).' }),
    status: z.enum(['active', 'revoked', 'expired']),
    revokedAt: z.string().optional(),
    name: z.string().optional(),
  })
  .meta({ title: 'TokenSummary' });

export const tokensFindResult = z
  .strictObject({ tokens: z.array(tokenSummary).meta({ description: 'Oldest first.' }) })
  .meta({ title: 'TokensFindResult' });

export const tokensRevokeParams = z
  .strictObject({
    id: requiredString(L.KEYWORD_MAX).meta({ description: 'The token’s id (TOKENS.CREATE, TOKENS.FIND).' }),
  })
  .meta({ title: 'TokensRevokeParams' });

export const tokensRevokeResult = z
  .strictObject({
    id: z.string(),
    revokedAt: z.string().meta({ description: 'When it was first revoked: revoking again keeps that time.' }),
  })
  .meta({ title: 'TokensRevokeResult' });

export type UserSummary = z.output<typeof userSummary>;
export type TokenSummary = z.output<typeof tokenSummary>;
export type UsersCreateParams = z.output<typeof usersCreateParams>;
export type TokensCreateParams = z.output<typeof tokensCreateParams>;

/** indexes and admin as the document states their defaults. */
export function completeUsersCreate(p: UsersCreateParams): UsersCreateParams & { indexes: string[]; admin: boolean } {
  return { ...p, indexes: p.indexes ?? [], admin: p.admin ?? false };
}

/** expiresIn as the document states its default (the gateway shortens it to the calling token's expiry). */
export function completeTokensCreate(p: TokensCreateParams): TokensCreateParams & { expiresIn: string } {
  return { ...p, expiresIn: p.expiresIn?.trim() ?? DEFAULT_TOKEN_EXPIRES_IN };
}

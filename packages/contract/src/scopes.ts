/** The scopes a token can hold (docs/api.md lists which method needs which). */
export const SCOPES = [
  'query:execute',
  'indexes:read',
  'indexes:write',
  'reports:read',
  'reports:write',
  'embed:create',
  // The admin API (USERS.*, and TOKENS.* for another user's tokens): also needs the token's user to be an admin.
  'users:admin',
  // TOKENS.CREATE, TOKENS.FIND, TOKENS.REVOKE on one's own tokens.
  'tokens:write',
] as const;
export type Scope = (typeof SCOPES)[number];

export function isScope(value: string): value is Scope {
  return (SCOPES as readonly string[]).includes(value);
}

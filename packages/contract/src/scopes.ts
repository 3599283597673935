/** The scopes a token can hold (docs/api.md lists which method needs which). */
export const SCOPES = [
  'query:execute',
  'indexes:read',
  'indexes:write',
  'reports:read',
  'reports:write',
  'embed:create',
] as const;
export type Scope = (typeof SCOPES)[number];

export function isScope(value: string): value is Scope {
  return (SCOPES as readonly string[]).includes(value);
}

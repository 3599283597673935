import { AppError, quoteInput } from '@quarry/errors';
import { isScope, type Realm, type Scope } from '@quarry/metadata-store';
import { checkQuerySyntax, escapeQueryText } from '@quarry/query-language';

/** How a verified token's claims become a Quarry user (QUARRY_OIDC_*_CLAIM, QUARRY_OIDC_REALMS). */
export interface OidcClaimMapping {
  /** The claim naming the user (default `sub`): the user is `oidc:<value>`. */
  userClaim: string;
  /** The claim holding the scopes (default `scope`): a space-separated string or an array. */
  scopesClaim: string;
  /** The claim holding the indexes the user reads; unset: the user's stored grant (USERS.UPDATE) applies. */
  indexesClaim?: string;
  /** Index → a query template over claims (`Tenant:{tenant}`): the user's realm on that index. */
  realms: Readonly<Record<string, string>>;
}

/** A user made from a token: the `oidc:` prefix keeps them apart from users an admin names. */
export const OIDC_USER_PREFIX = 'oidc:';
/** What a user claim may hold: printable ASCII without spaces, so the name can be typed in a CLI or a call. */
const USER_VALUE = /^[\x21-\x7E]{1,95}$/;
const MAX_LIST = 1000;
const MAX_VALUE = 1000;
/** `{claim}` in a realm template; a name has no spaces, so a range (`{1 TO 9}`) is never taken for one. */
const PLACEHOLDER = /\{([A-Za-z_][A-Za-z0-9_.:/-]*)\}/g;

/**
 * A claim by name: the name as it is first (a namespaced claim such as `https://example.com/tenant` holds
 * dots), else as a dotted path into nested objects (`realm_access.roles`).
 */
export function claimAt(claims: Readonly<Record<string, unknown>>, name: string): unknown {
  if (Object.prototype.hasOwnProperty.call(claims, name)) return claims[name];
  let at: unknown = claims;
  for (const part of name.split('.')) {
    if (typeof at !== 'object' || at === null || Array.isArray(at)) return undefined;
    if (!Object.prototype.hasOwnProperty.call(at, part)) return undefined;
    at = (at as Record<string, unknown>)[part];
  }
  return at;
}

/** A claim read as a list of words: a space-separated string or an array of strings. */
function wordsOf(value: unknown, claim: string, what: string): string[] {
  const refuse = () =>
    AppError.forbidden(`Token claim ${quoteInput(claim)} (${what}) must be a string of words or an array of strings`);
  let words: string[];
  if (typeof value === 'string') words = value.split(/\s+/).filter((w) => w !== '');
  else if (Array.isArray(value) && value.every((v) => typeof v === 'string')) words = value as string[];
  else throw refuse();
  if (words.length > MAX_LIST || words.some((w) => w.length > MAX_VALUE))
    throw AppError.forbidden(
      `Token claim ${quoteInput(claim)} (${what}) holds more than ${MAX_LIST} values or one longer than ${MAX_VALUE} characters`,
    );
  return [...new Set(words)];
}

/** A claim that fills a realm template: one string, number or boolean, never blank. */
function scalarOf(claims: Readonly<Record<string, unknown>>, claim: string, index: string): string {
  const value = claimAt(claims, claim);
  const needs = `the realm of index ${quoteInput(index)} needs it`;
  if (value === undefined || value === null)
    throw AppError.forbidden(`Token claim ${quoteInput(claim)} is missing: ${needs}`);
  const text =
    typeof value === 'string'
      ? value
      : typeof value === 'number' && Number.isFinite(value)
        ? String(value)
        : typeof value === 'boolean'
          ? String(value)
          : undefined;
  if (text === undefined)
    throw AppError.forbidden(`Token claim ${quoteInput(claim)} must be a string or a number: ${needs}`);
  if (text.trim() === '') throw AppError.forbidden(`Token claim ${quoteInput(claim)} is blank: ${needs}`);
  if (text.length > MAX_VALUE)
    throw AppError.forbidden(`Token claim ${quoteInput(claim)} is longer than ${MAX_VALUE} characters: ${needs}`);
  return text;
}

/** The claims a template names, in order. */
export function templateClaims(template: string): string[] {
  return [...template.matchAll(PLACEHOLDER)].map((m) => m[1]!);
}

/**
 * The template with each claim put in as an escaped literal: whatever a claim holds (`*`, `OR`, quotes,
 * `Field:value`, parentheses) is matched as that text, never read as query syntax.
 */
export function fillTemplate(template: string, claims: Readonly<Record<string, unknown>>, index: string): string {
  return template.replace(PLACEHOLDER, (_, claim: string) => escapeQueryText(scalarOf(claims, claim, index)));
}

/** QUARRY_OIDC_REALMS checked at start-up: each template, filled with a word, must be a query. */
export function checkRealmTemplates(realms: Readonly<Record<string, string>>): void {
  for (const [index, template] of Object.entries(realms)) {
    try {
      checkQuerySyntax(template.replace(PLACEHOLDER, 'x'));
    } catch (err) {
      const detail = err instanceof AppError ? err.detail : String(err);
      throw new Error(`QUARRY_OIDC_REALMS.${index}: ${detail}`, { cause: err });
    }
  }
}

/** What a token's claims say of its bearer. */
export interface MappedIdentity {
  userName: string;
  /** The recognised scopes (others are ignored, as an API token's are). */
  scopes: Scope[];
  /** The indexes the claim gives, when the mapping names an indexes claim. */
  indexes?: string[];
}

/** The user, scopes and indexes a verified token's claims give; a FORBIDDEN AppError saying which claim is wrong. */
export function mapClaims(claims: Readonly<Record<string, unknown>>, mapping: OidcClaimMapping): MappedIdentity {
  const rawUser = claimAt(claims, mapping.userClaim);
  const user = typeof rawUser === 'number' && Number.isFinite(rawUser) ? String(rawUser) : rawUser;
  if (typeof user !== 'string' || !USER_VALUE.test(user))
    throw AppError.forbidden(
      `Token claim ${quoteInput(mapping.userClaim)} (the user) must be 1-95 printable characters without spaces`,
    );
  const rawScopes = claimAt(claims, mapping.scopesClaim);
  const scopes = rawScopes === undefined ? [] : wordsOf(rawScopes, mapping.scopesClaim, 'the scopes').filter(isScope);
  const out: MappedIdentity = { userName: `${OIDC_USER_PREFIX}${user}`, scopes };
  if (mapping.indexesClaim !== undefined) {
    const raw = claimAt(claims, mapping.indexesClaim);
    out.indexes = raw === undefined ? [] : wordsOf(raw, mapping.indexesClaim, 'the indexes');
  }
  return out;
}

/**
 * The realms a user holds with these claims: the templates' on every index the user reads (none on an
 * admin, who sees every row), the stored ones on the other indexes.
 */
export function realmsFor(
  user: { admin: boolean; indexes: readonly string[]; realms: readonly Realm[] },
  claims: Readonly<Record<string, unknown>>,
  mapping: OidcClaimMapping,
): Realm[] {
  const templated = Object.keys(mapping.realms);
  if (templated.length === 0) return [...user.realms];
  if (user.admin) return [];
  const kept = user.realms.filter((r) => !templated.includes(r.index));
  const reads = (index: string) => user.indexes.includes('*') || user.indexes.includes(index);
  const filled = Object.entries(mapping.realms)
    .filter(([index]) => reads(index))
    .map(([index, template]) => ({ index, query: fillTemplate(template, claims, index) }));
  return [...kept, ...filled];
}

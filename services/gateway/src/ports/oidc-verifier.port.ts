/** What a verified OpenID Connect bearer says: its subject and every claim, for the claim mapping. */
export interface OidcIdentity {
  subject: string;
  claims: Readonly<Record<string, unknown>>;
}

/** A refused JWT: expired (the spec's "Token expired"), or invalid, with why (for the log, never the caller). */
export type OidcVerdict = { ok: true; identity: OidcIdentity } | { ok: false; expired: boolean; reason: string };

/**
 * Verifies JWT bearers issued by the configured OpenID provider. Adapters guarantee:
 * - asymmetric algorithms only (RS*, PS*, ES*, EdDSA): `alg: none` and HMAC are refused whatever key the
 *   header points at;
 * - iss is the configured issuer exactly, aud holds the configured audience, exp and nbf hold within
 *   clockToleranceS;
 * - keys come from the jwks_uri of the issuer's discovery document, are cached, and are fetched again on
 *   a kid they do not know at most once per cooldown; every fetch is bounded in time and size;
 * - a fetch that fails, hangs or answers garbage keeps the last good keys: a call is never held by the
 *   provider longer than the fetch bound, and tokens signed with known keys keep working;
 * - a verdict never carries the token.
 */
export interface OidcVerifier {
  /** The configured issuer, as tokens' iss must say it. */
  readonly issuer: string;
  /** Whether the token's unverified `iss` is this provider's (routing only: verify decides). */
  accepts(token: string): boolean;
  verify(token: string): Promise<OidcVerdict>;
}

import { z } from 'zod';
import { setting, settingGroup } from '../setting';
import { url } from '../setting-rules';

/** A claim's name: a plain name, a dotted path (`realm_access.roles`) or a namespaced URL claim. */
const claimName = z
  .string()
  .regex(/^[A-Za-z0-9_.:/-]{1,200}$/, 'must be a claim name: 1 to 200 letters, digits or _ . : / -');

/** Index → realm template, as JSON; the templates' query syntax is checked when the gateway starts. */
const realmTemplates = z.string().transform((raw, ctx) => {
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch {
    ctx.addIssue({ code: 'custom', message: 'must be JSON: {"<index>": "<query with {claim}>", …}' });
    return z.NEVER;
  }
  const shape = z.record(z.string().min(1).max(200), z.string().trim().min(1).max(4000));
  const checked = shape.safeParse(parsed);
  if (!checked.success || typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    ctx.addIssue({ code: 'custom', message: 'must be a JSON object of index name → a non-blank query template' });
    return z.NEVER;
  }
  return checked.data;
});

export const oidcSettings = settingGroup('Sign-in with OpenID Connect', {
  QUARRY_OIDC_ISSUER: setting(url(['https:', 'http:']).optional(), {
    doc:
      "the OpenID provider's issuer URL, exactly as its tokens' `iss` says it; set: a bearer JWT with that `iss` is " +
      'verified against its discovery document and keys (docs/identity.md). Not a secret: compose and k8s set it as plain config',
    default: 'unset (API tokens only)',
    readBy: ['gateway'],
  }),
  QUARRY_OIDC_AUDIENCE: setting(z.string().min(1).max(500).optional(), {
    doc: "what a JWT's `aud` must hold (the API's identifier at the provider); required with `QUARRY_OIDC_ISSUER`",
    default: 'unset',
    readBy: ['gateway'],
  }),
  QUARRY_OIDC_USER_CLAIM: setting(claimName.default('sub'), {
    doc: 'the claim naming the user: a JWT acts as user `oidc:<value>`, made on first sight',
    readBy: ['gateway'],
  }),
  QUARRY_OIDC_SCOPES_CLAIM: setting(claimName.default('scope'), {
    doc: "the claim holding Quarry's scopes (a space-separated string or an array, e.g. `groups` named after scopes)",
    readBy: ['gateway'],
  }),
  QUARRY_OIDC_INDEXES_CLAIM: setting(claimName.optional(), {
    doc: "the claim holding the indexes the user reads (`*`: all); unset: the user's own grant (`USERS.UPDATE`)",
    default: 'unset',
    readBy: ['gateway'],
  }),
  QUARRY_OIDC_REALMS: setting(realmTemplates.optional(), {
    doc:
      'JSON, index → a query template over claims (`{"orders": "Tenant:{tenant}"}`): the user\'s realm on that index, ' +
      'each `{claim}` put in as an escaped literal; a claim it needs and the token lacks refuses the call (403)',
    default: 'unset',
    readBy: ['gateway'],
  }),
  QUARRY_OIDC_CLIENT_ID: setting(z.string().min(1).max(500).optional(), {
    doc:
      "the console's public client at the provider: the console signs in with it (authorization code with PKCE, " +
      'redirect URI `<gateway>/console/`); unset: the console asks for a pasted token',
    default: 'unset',
    readBy: ['gateway'],
  }),
});

import { AppError } from '@quarry/errors';
import type { TokensEmbedResult, TokensRevokeEmbedResult, TokensWhoamiResult } from '@quarry/contract';
import type { Scope } from '@quarry/metadata-store';
import type { EmbedSigner } from '../../ports/embed-signer.port';
import type { RequestTrace, ServiceClients } from '../../ports/service-clients.port';
import { narrowToIndex } from '../authenticate.use-case';
import type { EmbedTokenRegistry } from '../embed-token-registry';
import type { ManageTokensUseCase } from '../manage-tokens.use-case';
import type { SentParams } from '../method-params';
import { checkSettings } from '../report-parameters';
import { callerOf, type Principal } from '../principal';
import type { MethodHandlers } from './method-handler';

export interface TokensHandlerDeps {
  services: ServiceClients;
  signer?: EmbedSigner;
  embedTokens?: EmbedTokenRegistry;
  /** API tokens on the gateway's metadata store (TOKENS.CREATE, .FIND, .REVOKE); absent, those answer 503. */
  tokens?: ManageTokensUseCase;
}

type TokenMethod =
  'TOKENS.EMBED' | 'TOKENS.REVOKE_EMBED' | 'TOKENS.WHOAMI' | 'TOKENS.CREATE' | 'TOKENS.FIND' | 'TOKENS.REVOKE';

/**
 * TOKENS.EMBED and TOKENS.REVOKE_EMBED: embed tokens, issued and revoked by this gateway; TOKENS.WHOAMI:
 * the caller as authentication resolved it; TOKENS.CREATE, .FIND, .REVOKE: API tokens on the store.
 */
export function tokensHandlers(deps: TokensHandlerDeps): Pick<MethodHandlers, TokenMethod> {
  const checkAvailable = () => {
    if (!deps.tokens) throw AppError.unavailable('API tokens cannot be managed on this gateway (no metadata store)');
  };
  return {
    'TOKENS.CREATE': {
      checkAvailable,
      handle: async ({ principal, sent, complete }) => {
        checkAvailable();
        // The answer carries the clear token; the audit trail keeps only the params' digest, never results.
        return { data: await deps.tokens!.create(principal, complete, sent.expiresIn !== undefined) };
      },
    },
    'TOKENS.FIND': {
      checkAvailable,
      handle: async ({ principal, sent }) => {
        checkAvailable();
        const data = await deps.tokens!.find(principal, sent.user);
        return { data, returned: data.tokens.length };
      },
    },
    'TOKENS.REVOKE': {
      checkAvailable,
      handle: async ({ principal, sent }) => {
        checkAvailable();
        return { data: await deps.tokens!.revoke(principal, sent.id) };
      },
    },
    'TOKENS.WHOAMI': { handle: ({ principal }) => Promise.resolve({ data: whoami(principal) }) },
    'TOKENS.EMBED': {
      handle: async ({ principal, sent, trace }) => ({ data: await issueEmbedToken(deps, principal, sent, trace) }),
    },
    'TOKENS.REVOKE_EMBED': {
      handle: async ({ principal, sent }) => ({ data: await revokeEmbedToken(deps, principal, sent.id) }),
    },
  };
}

async function issueEmbedToken(
  deps: TokensHandlerDeps,
  principal: Principal,
  p: SentParams<'TOKENS.EMBED'>,
  trace: RequestTrace,
): Promise<TokensEmbedResult> {
  const { signer, embedTokens } = deps;
  if (!signer || !embedTokens) throw AppError.unavailable('Embed tokens are not enabled on this gateway');
  // What the embed token's bearer will need (REPORTS.EXECUTE runs a query too): the issuer must hold it.
  const needed: Scope[] = p.guid === undefined ? ['query:execute'] : ['reports:read', 'query:execute'];
  for (const scope of needed)
    if (!principal.scopes.has(scope))
      throw AppError.forbidden(`Token lacks the scope "${scope}" the embed token would need`);
  await embedTokens.checkRoom(principal.user.id);
  let index: string;
  if (p.guid !== undefined) {
    const report = await deps.services.reportMetadata(callerOf(principal), { guid: p.guid }, trace);
    index = report.index;
    // Values checked now as a run would check them: a token fixing a wrong one would fail every call.
    checkSettings(report.parameters, p.parameters);
    // Visible to the narrowed permissions the embed token will have, or the token would be useless.
    await deps.services.reportMetadata(
      callerOf({ ...principal, user: narrowToIndex(principal.user, index) }),
      { guid: p.guid },
      trace,
    );
  } else {
    index = p.index!;
  }
  const narrowed = callerOf({ ...principal, user: narrowToIndex(principal.user, index) });
  // One record is enough to prove the index is readable (else 404) and the realm fits it (else 400).
  try {
    await deps.services.search(
      narrowed,
      { index, query: p.realm ?? '*', page: 1, pageSize: 1, sort: [], bypassCache: false },
      trace,
    );
  } catch (err) {
    if (err instanceof AppError && err.code === 'INVALID_ARGUMENT' && p.realm !== undefined)
      throw AppError.invalid(`realm: ${err.detail}`);
    throw err;
  }
  const { token, claims } = await signer.sign(
    {
      issuerTokenId: principal.tokenId,
      userId: principal.user.id,
      index,
      ...(p.guid === undefined ? {} : { guid: p.guid }),
      ...(p.realm === undefined ? {} : { realm: p.realm }),
      ...(p.parameters === undefined ? {} : { parameters: p.parameters }),
    },
    p.ttlSeconds,
  );
  const expiresAt = new Date(claims.expiresAt * 1000).toISOString();
  // Recorded before it is handed out, so that whoever holds it can already be cut off by id.
  await embedTokens.record({ id: claims.id, userId: claims.userId, tokenId: claims.issuerTokenId, expiresAt });
  return { token, id: claims.id, expiresAt };
}

/** The caller's own user's embed tokens only: another user's id is as unknown as a made-up one. */
async function revokeEmbedToken(
  deps: TokensHandlerDeps,
  principal: Principal,
  id: string,
): Promise<TokensRevokeEmbedResult> {
  if (!deps.embedTokens) throw AppError.unavailable('Embed tokens are not enabled on this gateway');
  const record = await deps.embedTokens.revoke(id, principal.user.id);
  return { id: record.id, revokedAt: record.revokedAt!, expiresAt: record.expiresAt };
}

/** Read off the principal: the store was asked for the token and its owner on this very call. */
function whoami(principal: Principal): TokensWhoamiResult {
  const { user } = principal;
  return {
    user: user.name,
    admin: user.admin,
    indexes: [...user.indexes],
    realms: user.realms.map((r) => ({ index: r.index, query: r.query })),
    scopes: [...principal.scopes].sort(),
    token: {
      id: principal.tokenId,
      prefix: principal.token?.prefix ?? '',
      expiresAt: principal.token?.expiresAt ?? null,
    },
  };
}

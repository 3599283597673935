import { AppError } from '@quarry/errors';
import { METHODS, type MethodName } from '@quarry/contract';
import type { Scope } from '@quarry/metadata-store';
import type { Principal } from './principal';

/** What an embed token may call: its one index's search and pivot, or its one report. */
const EMBED_INDEX_METHODS: readonly string[] = ['QUERIES.EXECUTE', 'CROSSTAB.EXECUTE'];
const EMBED_REPORT_METHODS: readonly string[] = ['REPORTS.EXECUTE'];

/**
 * Refuses (403) anything an embed token was not issued for, before any param is looked at by a service:
 * another method, another index or report, or saving (an embed token only reads).
 */
export function checkEmbedGrant(p: Principal, method: MethodName, params: Record<string, unknown>): void {
  const grant = p.embed;
  if (!grant) return;
  if (grant.guid === undefined) {
    if (!EMBED_INDEX_METHODS.includes(method))
      throw AppError.forbidden(`An embed token for an index may only call ${EMBED_INDEX_METHODS.join(' and ')}`);
    if (params.index !== grant.index) throw AppError.forbidden(`This embed token may only read index "${grant.index}"`);
    if (params.saveReport !== undefined) throw AppError.forbidden('An embed token may not save reports');
    return;
  }
  if (!EMBED_REPORT_METHODS.includes(method))
    throw AppError.forbidden('An embed token for a report may only run that report (REPORTS.EXECUTE)');
  if (params.guid !== grant.guid)
    throw AppError.forbidden('This embed token may only run the report it was issued for');
  // A fixed parameter is part of what the token grants, as its report is: changing it is not allowed.
  const sent = params.parameters;
  if (grant.parameters && sent !== null && typeof sent === 'object') {
    const fixed = Object.keys(sent).filter((name) => Object.hasOwn(grant.parameters!, name));
    if (fixed.length)
      throw AppError.forbidden(`parameters.${fixed[0]} is fixed by this embed token; it may set only the others`);
  }
}

function requireScope(p: Principal, scope: Scope): void {
  if (!p.scopes.has(scope)) throw AppError.forbidden(`Token lacks the required scope "${scope}"`);
}

/**
 * The scopes the contract's catalogue names for the method: its own, reports:write when it saves the
 * execution as a report, and the second one it needs (REPORTS.EXECUTE runs a query, so query:execute too).
 * Checked before the params are parsed: a token without the scope learns nothing about the params.
 */
export function checkScopes(p: Principal, method: MethodName, params: Record<string, unknown>): void {
  const contract: { scope: Scope | null; saves: boolean; alsoNeeds?: Scope } = METHODS[method];
  if (contract.scope !== null) requireScope(p, contract.scope);
  if (contract.saves && params.saveReport !== undefined) requireScope(p, 'reports:write');
  if (contract.alsoNeeds) requireScope(p, contract.alsoNeeds);
}

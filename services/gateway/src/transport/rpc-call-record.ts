import { INDEX_NAME } from '@quarry/contract';
import type { QuarryMetrics } from '@quarry/metrics';
import type { Span } from '@quarry/tracing';
import { paramsDigest, type AuditRecorder } from '../domain/audit-recorder';
import { crosstabShape } from '../domain/crosstab-shape';
import type { Identified } from '../domain/authenticate.use-case';
import type { Principal } from '../domain/principal';
import { countCall } from './rpc-metrics';

/** Where a finished call is counted and recorded. */
export interface CallSinks {
  metrics?: QuarryMetrics;
  /** The audit trail of every call. */
  audit?: AuditRecorder;
}

/** A name or id as the audit keeps it: what the params say when it is one, else that it was not. */
function named(value: unknown): string | null {
  if (typeof value !== 'string') return null;
  return /^[A-Za-z0-9][A-Za-z0-9._@:-]{0,127}$/.test(value) ? value : '(invalid)';
}

/** What an admin call acts on (the audit's target), read from params not yet validated. */
function adminTarget(method: string, params: Record<string, unknown>): string | null {
  if (method.startsWith('USERS.')) {
    const user = named(params.name);
    return user ? `user ${user}` : null;
  }
  if (method === 'TOKENS.CREATE' || method === 'TOKENS.FIND') {
    const user = named(params.user);
    return user ? `user ${user}` : null;
  }
  if (method === 'TOKENS.REVOKE') {
    const token = named(params.id);
    return token ? `token ${token}` : null;
  }
  return null;
}

function msSince(start: bigint): number {
  return Number(process.hrtime.bigint() - start) / 1e6;
}

/**
 * What the audit trail records of one call, filled in as the call goes, and how it is closed: counted in
 * /metrics and, for most outcomes, written to the audit trail.
 */
export class RpcCallRecord {
  readonly time = new Date().toISOString();
  who?: Identified;
  method = '(unauthenticated)';
  index: string | null = null;
  paramsDigest: string | null = null;
  returned: number | null = null;
  shape: string | null = null;
  target: string | null = null;

  constructor(
    private readonly started: bigint,
    readonly requestId: string,
    private readonly sinks: CallSinks,
    readonly span: Span | undefined,
  ) {}

  /** The authenticated caller; from here on an unreadable request is recorded as '(invalid)'. */
  identify(p: Principal): void {
    this.who = {
      userId: p.user.id,
      userName: p.user.name,
      tokenId: p.tokenId,
      ...(p.embed ? { embedId: p.embed.id } : {}),
    };
    this.method = '(invalid)';
  }

  /** The method and what the audit trail keeps of its params, once the envelope is read. */
  describe(method: string, params: Record<string, unknown>, principal: Principal): void {
    this.method = method;
    this.paramsDigest = paramsDigest(params);
    if (method === 'CROSSTAB.EXECUTE') this.shape = crosstabShape(params);
    this.target = adminTarget(method, params);
    // Only a well-formed index name is recorded as one: the params are not validated yet, and a name is
    // what an operator reads back in `quarry audit`.
    if (typeof params.index === 'string') this.index = INDEX_NAME.test(params.index) ? params.index : '(invalid name)';
    else if (principal.embed) this.index = principal.embed.index;
  }

  /** Counted in /metrics only: a refusal repeated within its window is not one audit row each. */
  count(label: string, code: string): void {
    countCall(this.sinks.metrics, label, code, msSince(this.started), this.span);
  }

  /** Counted and written to the audit trail; the call's duration in milliseconds. */
  finish(label: string, code: string): number {
    const ms = msSince(this.started);
    countCall(this.sinks.metrics, label, code, ms, this.span);
    this.sinks.audit?.record({
      time: this.time,
      userId: this.who?.userId ?? null,
      userName: this.who?.userName ?? null,
      tokenId: this.who?.tokenId ?? null,
      embedId: this.who?.embedId ?? null,
      method: this.method,
      index: this.index,
      paramsDigest: this.paramsDigest,
      outcome: code,
      durationMs: Math.round(ms * 1000) / 1000,
      returned: this.returned,
      requestId: this.requestId,
      ...(this.shape ? { shape: this.shape } : {}),
      ...(this.target ? { target: this.target } : {}),
    });
    return ms;
  }
}

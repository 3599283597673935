import { AppError } from '@quarry/errors';
import { isMethodName } from '@quarry/contract';
import { parseDuration, type AuditEntry, type AuditLog } from '@quarry/metadata-store';

export interface AuditOptions {
  user?: string;
  since?: string;
  method?: string;
  json?: boolean;
  limit?: string;
}

const DEFAULT_LIMIT = 100;
const MAX_LIMIT = 100_000;

/** `--since 24h` (a duration back from now) or an ISO-8601 date or time. */
export function parseSince(text: string, now: number): string {
  const back = parseDuration(text);
  if (back !== null) return new Date(now - back).toISOString();
  const at = /^\d{4}-\d{2}-\d{2}([T ][\d:.]+(Z|[+-]\d{2}:?\d{2})?)?$/.test(text.trim()) ? Date.parse(text.trim()) : NaN;
  if (Number.isNaN(at))
    throw AppError.invalid(
      `--since must be a duration such as 90s, 15m, 12h or 30d, or a date such as 2026-01-31 (got "${text.slice(0, 100)}")`,
    );
  return new Date(at).toISOString();
}

function parseLimit(text: string | undefined): number {
  if (text === undefined) return DEFAULT_LIMIT;
  const n = Number(text);
  if (!Number.isInteger(n) || n < 1 || n > MAX_LIMIT)
    throw AppError.invalid(`--limit must be an integer between 1 and ${MAX_LIMIT}`);
  return n;
}

/** `quarry audit`: the newest calls first, as a table or (--json) one JSON object per line. */
export async function readAudit(store: AuditLog, opts: AuditOptions, now = Date.now()): Promise<string> {
  const method = opts.method === undefined ? undefined : auditedMethod(opts.method);
  const entries = await store.listAudit({
    ...(opts.user === undefined ? {} : { userName: opts.user }),
    ...(opts.since === undefined ? {} : { since: parseSince(opts.since, now) }),
    ...(method === undefined ? {} : { method }),
    limit: parseLimit(opts.limit),
  });
  if (opts.json) return entries.map((e) => JSON.stringify(e)).join('\n');
  if (entries.length === 0) return 'no calls recorded';
  // target last: scripts that read the columns before it by position keep reading them.
  const header = ['time', 'user', 'token', 'method', 'index', 'outcome', 'ms', 'returned', 'request', 'target'];
  return [header, ...entries.map(row)].map((cols) => cols.join('\t')).join('\n');
}

/** What the trail records as the method: the API's methods (any case), rpc.discover, or a refusal before one was read. */
const PSEUDO_METHODS = ['rpc.discover', '(unauthenticated)', '(rate limited)', '(invalid)', '(delivery)'];

function auditedMethod(text: string): string {
  const upper = text.trim().toUpperCase();
  if (isMethodName(upper)) return upper;
  const pseudo = PSEUDO_METHODS.find((m) => m === text.trim().toLowerCase());
  if (pseudo) return pseudo;
  throw AppError.invalid(
    `--method "${text.slice(0, 100)}" is not a method of this API (nor one of ${PSEUDO_METHODS.join(', ')})`,
  );
}

/**
 * A field as the table prints it: control characters (ESC, CR, LF, TAB, DEL, C1) written as \xNN or
 * \uNNNN, so no recorded value can move the cursor, start a line or add a column of its own.
 */
export function printable(text: string): string {
  return text.replace(/[\\\p{Cc}\u2028\u2029]/gu, (c) =>
    c === '\\'
      ? '\\\\'
      : c.charCodeAt(0) <= 0xff
        ? `\\x${c.charCodeAt(0).toString(16).padStart(2, '0')}`
        : `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`,
  );
}

function row(e: AuditEntry): string[] {
  return rawRow(e).map(printable);
}

function rawRow(e: AuditEntry): string[] {
  return [
    e.time,
    e.userName ?? '-',
    e.embedId ? `${e.tokenId ?? '-'} (embed ${e.embedId})` : (e.tokenId ?? '-'),
    e.method,
    e.index ?? '-',
    e.outcome,
    String(e.durationMs),
    e.returned === null ? '-' : String(e.returned),
    e.requestId,
    e.target ?? '-',
  ];
}

/** One call as the audit trail keeps it (DESIGN "Embedding, fairness and audit"). */
export interface AuditEntry {
  /** When the call arrived, ISO-8601 UTC. */
  time: string;
  /** Null when the caller could not be identified (no token, or one that matches none). */
  userId: string | null;
  userName: string | null;
  /** The API token that made the call, or that issued the embed token that did. */
  tokenId: string | null;
  /** The embed token's own id (its `jti`) when the call came with one. */
  embedId: string | null;
  method: string;
  index: string | null;
  /** SHA-256 (hex) of the params as sent: tells two calls apart without keeping what they asked. */
  paramsDigest: string | null;
  /** `ok`, or the HTTP status / JSON-RPC code the call was refused or failed with. */
  outcome: string;
  durationMs: number;
  /** Records (searches), cells (crosstabs) or items (listings) returned; null when nothing countable was. */
  returned: number | null;
  requestId: string;
  /**
   * CROSSTAB.EXECUTE only: the crosstab's shape as JSON (CrosstabShape: its axes and totals by field
   * name, never its query or any value), what `quarry index rollup suggest` proposes rollups from.
   */
  shape?: string | null;
  /**
   * What an administrative call acted on, when not the caller alone: `user <name>` (USERS.*, and
   * TOKENS.CREATE / FIND for another user) or `token <id>` (TOKENS.REVOKE). Absent for other calls.
   */
  target?: string | null;
}

/** What the audit trail keeps of a crosstab's params (AuditEntry.shape). */
export interface CrosstabShape {
  rows: Array<{ field: string; dateGroup?: string }>;
  columns: Array<{ field: string; dateGroup?: string }>;
  totals: Array<{ aggregation: string; field?: string }>;
}

export interface AuditQuery {
  userName?: string;
  /** ISO-8601: entries at or after it. */
  since?: string;
  method?: string;
  /** Newest first, at most this many. */
  limit: number;
}

/**
 * The audit trail. Every adapter must guarantee:
 * - appended entries are kept as given (copies), and a batch is written whole or not at all;
 * - list returns the newest first (by time, then in the order appended), filtered by every criterion
 *   given (user name and method exactly; since inclusive), at most `limit`;
 * - purge removes every entry older than the given time and says how many.
 */
export interface AuditLog {
  appendAudit(entries: readonly AuditEntry[]): Promise<void>;
  listAudit(query: AuditQuery): Promise<AuditEntry[]>;
  purgeAudit(before: string): Promise<number>;
}

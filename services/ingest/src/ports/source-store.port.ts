import type { SourceKindName, SourceRunState } from '@quarry/contract';
import type { SourceLoadOptions } from './index-loader.port';
import type { LoadMode } from './index-loader.port';

/** A source as kept: everything but its secret in the clear, the secret encrypted (SecretBox). */
export interface SourceRecord {
  id: string;
  ownerId: string;
  ownerName: string;
  /**
   * SHA-256 of the token that created the source (what the metadata store keeps, never the token): each
   * run runs with that token's rights as they are then, so revoking it stops the source's runs.
   */
  tokenHash: string;
  name: string;
  index: string;
  kind: SourceKindName;
  /** The connection without its secret: a URL with its password taken out, or host, port, database, user, ssl. */
  connection: { url?: string; host?: string; port?: number; database?: string; user?: string; ssl?: boolean };
  /** The encrypted JSON of {password?, url?} (the URL whole, as given); absent when there is no secret. */
  secret?: string;
  hasPassword: boolean;
  query?: string;
  table?: string;
  refresh: { cron?: string; timeZone: string; mode: LoadMode; cursor?: string; key?: string };
  load: SourceLoadOptions;
  createdAt: string;
  updatedAt: string;
}

export type RunTrigger = 'manual' | 'schedule';

export interface SourceRunRecord {
  runId: string;
  sourceId: string;
  state: SourceRunState;
  trigger: RunTrigger;
  mode: LoadMode;
  rowsRead: number;
  loaded: number;
  rejected: number;
  version?: number;
  cursorAfter?: string;
  cursorMax?: string;
  queuedAt: string;
  startedAt?: string;
  endedAt?: string;
  error?: string;
}

/** What the append cursor remembers: the largest value read, and what it is a value of. */
export interface CursorMark {
  value: string;
  /** The cursor column and the query or table it was read from: a change of either forgets the value. */
  of: string;
}

export type InsertVerdict = 'ok' | 'limit' | 'name-taken';

/**
 * Sources, their runs and their cursors. Every adapter must guarantee:
 * - insert is atomic with the owner's limit and the uniqueness of the owner's source names: two inserts
 *   racing never both pass either;
 * - rename keeps names unique per owner the same way; an update of a removed source changes nothing;
 * - remove drops the source, its runs, its cursor and its claim; an unknown id answers false;
 * - a run claim is exclusive per source (one queued or running run at a time) and expires if its holder
 *   stops renewing it, so a dead worker does not block the source for ever;
 * - runs are kept newest first, at most SOURCE_RUNS_KEPT per source.
 */
export interface SourceStore {
  insert(source: SourceRecord, limit: number): Promise<InsertVerdict>;
  get(id: string): Promise<SourceRecord | null>;
  /** An owner's sources; undefined: everyone's (an admin's listing). */
  list(ownerId?: string): Promise<SourceRecord[]>;
  /** 'ok', 'name-taken' (another of the owner's sources has the new name) or 'gone'. */
  update(source: SourceRecord, previousName: string): Promise<'ok' | 'name-taken' | 'gone'>;
  remove(id: string): Promise<boolean>;

  /** Claims the source for this run; false when another run holds it (its id from claimant). */
  claim(sourceId: string, runId: string, ttlMs: number): Promise<boolean>;
  claimant(sourceId: string): Promise<string | null>;
  /** Extends the claim while its run lasts; false when it is no longer this run's. */
  renew(sourceId: string, runId: string, ttlMs: number): Promise<boolean>;
  release(sourceId: string, runId: string): Promise<void>;

  /** Adds or replaces a run (kept only while its source exists). */
  putRun(run: SourceRunRecord): Promise<void>;
  getRun(sourceId: string, runId: string): Promise<SourceRunRecord | null>;
  /** Newest first. */
  runs(sourceId: string, limit: number): Promise<SourceRunRecord[]>;

  cursor(sourceId: string): Promise<CursorMark | null>;
  setCursor(sourceId: string, mark: CursorMark): Promise<void>;
  forgetCursor(sourceId: string): Promise<void>;
}

export type ReportType = 'query' | 'crosstab';

export interface ReportRecord {
  guid: string;
  /** Insertion order, increasing: newest-first pages keyed on it neither skip nor repeat. */
  seq: number;
  ownerId: string;
  ownerName: string;
  name: string;
  description: string;
  folder: string;
  shared: boolean;
  type: ReportType;
  index: string;
  method: string;
  /** The executable params of the latest version as JSON text. */
  params: string;
  /** The latest version (1 for a new report); new params make the next one. */
  version: number;
  /** The index version the latest version was saved on (0: not known). */
  indexVersion: number;
  createdAt: string;
  updatedAt: string;
}

/** One version of a report's params, and the index version that was current when it was saved. */
export interface ReportVersion {
  version: number;
  params: string;
  indexVersion: number;
  savedAt: string;
}

export type NewReport = Omit<ReportRecord, 'seq' | 'createdAt' | 'updatedAt' | 'guid' | 'version' | 'indexVersion'> & {
  guid?: string;
  createdAt?: string;
  updatedAt?: string;
  indexVersion?: number;
};

/** What REPORTS.UPDATE changes; only `params` makes a new version (on the same index: a report keeps its index). */
export interface ReportChange {
  name?: string;
  description?: string;
  folder?: string;
  shared?: boolean;
  params?: { params: string; indexVersion: number };
}

/** A report in the trash, and when it went there. */
export interface TrashedReport {
  report: ReportRecord;
  deletedAt: string;
}

/**
 * Who is looking, for everything but admins and operators: a shared report must not reveal an index
 * (its name, query, owner) to someone who may not read that index (a report never reveals that an index the caller cannot read exists).
 */
export interface ReportViewer {
  viewerId: string;
  /** Indexes whose shared reports of others the viewer sees; "*" means every index. */
  readableIndexes: readonly string[];
}

export interface ReportQuery {
  /** Reports of this owner and the shared ones it may see; undefined: every report (admins, operators). */
  viewerId: string | undefined;
  /**
   * With viewerId: indexes whose shared reports of others are visible ("*": all). Absent means none
   * (only the viewer's own reports), so a caller that forgets it shows too little, never too much.
   */
  readableIndexes?: readonly string[];
  /** Lower-cased words; each must start a word of the name or description. */
  words: string[];
  types: ReportType[];
  /** Only reports older than this sequence number (the cursor). */
  beforeSeq: number | undefined;
  limit: number;
  /** Only this owner's reports (CLI listing). */
  ownerName?: string;
}

/**
 * Saved reports. Every adapter must guarantee:
 * - a name is unique per owner, case-insensitively: a second insert rejects with AppError CONFLICT,
 *   also when two inserts race (exactly one wins);
 * - an insert that resolved is durable: it survives a crash of the process right after;
 * - find returns newest first (by seq) and honours visibility, words, types and beforeSeq;
 * - visibility is part of the store query, never a filter on a fetched page: with a viewer, a
 *   report is returned only if the viewer owns it, or it is shared AND its index is one of the
 *   viewer's readable indexes (or those hold "*"). So a page of `limit` is full whenever that many
 *   visible reports remain, however many hidden ones lie between them, and getVisible answers null
 *   for a hidden report exactly as for an unknown guid;
 * - guids are unique; get and delete of an unknown guid give null / AppError NOT_FOUND;
 * - update of an unknown or trashed guid rejects with NOT_FOUND; a new name taken by another report of
 *   the owner with CONFLICT; new params append exactly one version, also when updates race (none is
 *   lost, no number repeats), and name or sharing changes append none;
 * - a trashed report is gone from get, getVisible, find and update, keeps its versions, and does not
 *   hold its name (a new report may take it); restore brings it back as it was, or rejects with
 *   CONFLICT when its name was taken meanwhile, NOT_FOUND when it is not in the trash;
 * - referencedIndexVersions lists the index versions any version of any report (trashed ones too, which
 *   may come back) was saved on.
 */
export interface ReportStore {
  insert(report: NewReport): Promise<ReportRecord>;
  /** Any report, whoever owns it (operators' tools); services answer users through getVisible. */
  get(guid: string): Promise<ReportRecord | null>;
  getVisible(guid: string, viewer: ReportViewer): Promise<ReportRecord | null>;
  find(query: ReportQuery): Promise<ReportRecord[]>;
  /** Every version of a live report, oldest first; [] for an unknown or trashed one. */
  versions(guid: string): Promise<ReportVersion[]>;
  update(guid: string, change: ReportChange): Promise<ReportRecord>;
  /** Moves a report into the trash. */
  trash(guid: string, deletedAt: string): Promise<void>;
  getTrashed(guid: string): Promise<TrashedReport | null>;
  /** What is in the trash (one owner's, by name, when given), most recently deleted first (operators' tools). */
  listTrash(ownerName?: string): Promise<TrashedReport[]>;
  restore(guid: string): Promise<ReportRecord>;
  /** Deletes for good what went into the trash before this time; returns how many. */
  purgeTrash(deletedBefore: string): Promise<number>;
  referencedIndexVersions(index: string): Promise<number[]>;
  /** Deletes a report for good (operators' tools). */
  delete(guid: string): Promise<void>;
  ping(): Promise<void>;
  close(): Promise<void>;
}

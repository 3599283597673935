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
  /** The executable params as JSON text. */
  params: string;
  createdAt: string;
  updatedAt: string;
}

export type NewReport = Omit<ReportRecord, 'seq' | 'createdAt' | 'updatedAt' | 'guid'> & {
  guid?: string;
  createdAt?: string;
  updatedAt?: string;
};

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
 * - guids are unique; get and delete of an unknown guid give null / AppError NOT_FOUND.
 */
export interface ReportStore {
  insert(report: NewReport): Promise<ReportRecord>;
  /** Any report, whoever owns it (operators' tools); services answer users through getVisible. */
  get(guid: string): Promise<ReportRecord | null>;
  getVisible(guid: string, viewer: ReportViewer): Promise<ReportRecord | null>;
  find(query: ReportQuery): Promise<ReportRecord[]>;
  delete(guid: string): Promise<void>;
  ping(): Promise<void>;
  close(): Promise<void>;
}

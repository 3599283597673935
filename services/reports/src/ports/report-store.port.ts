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

export type NewReport = Omit<ReportRecord, 'seq' | 'createdAt' | 'updatedAt' | 'guid'> & { guid?: string; createdAt?: string; updatedAt?: string };

export interface ReportQuery {
  /** Reports of this owner and shared ones; undefined: every report (admins, operators). */
  viewerId: string | undefined;
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
 * - guids are unique; get and delete of an unknown guid give null / AppError NOT_FOUND.
 */
export interface ReportStore {
  insert(report: NewReport): Promise<ReportRecord>;
  get(guid: string): Promise<ReportRecord | null>;
  find(query: ReportQuery): Promise<ReportRecord[]>;
  delete(guid: string): Promise<void>;
  ping(): Promise<void>;
  close(): Promise<void>;
}

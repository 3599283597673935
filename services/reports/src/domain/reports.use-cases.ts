import { AppError, quoteInput, quoteList } from '@quarry/errors';
import type { CursorCodec } from '@quarry/paging';
import { words } from '@quarry/query-language';
import type { ReportRecord, ReportStore, ReportType, ReportViewer } from '../ports/report-store.port';

import {
  DEFAULT_REPORT_LIMIT,
  MAX_REPORT_LIMIT,
  REPORT_NAME_MAX,
  REPORT_TYPES,
  type Caller,
  type ReportsFindResult,
} from '@quarry/contract';
const GUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** The part of the caller that decides which reports it sees and owns. */
export type Viewer = Pick<Caller, 'userId' | 'userName' | 'admin' | 'indexes'>;

/** What the store filters on; undefined for admins, who see every report. */
export function reportViewer(viewer: Viewer): ReportViewer | undefined {
  return viewer.admin ? undefined : { viewerId: viewer.userId, readableIndexes: viewer.indexes };
}

/** The contract's report summary: what REPORTS.FIND lists and REPORTS.METADATA starts with. */
export type ReportSummary = ReportsFindResult['reports'][number];

export function summary(r: ReportRecord): ReportSummary {
  return {
    guid: r.guid,
    name: r.name,
    description: r.description,
    type: r.type,
    index: r.index,
    owner: r.ownerName,
    folder: r.folder,
    shared: r.shared,
    createdAt: r.createdAt,
    updatedAt: r.updatedAt,
  };
}

export interface SaveInput {
  name: string;
  description: string;
  folder: string;
  shared: boolean;
  type: string;
  index: string;
  method: string;
  paramsJson: string;
}

const METHOD_OF: Record<ReportType, string> = { query: 'QUERIES.EXECUTE', crosstab: 'CROSSTAB.EXECUTE' };

/** Saves an executed call (the gateway calls this only after the execution succeeded). */
export class SaveReportUseCase {
  constructor(private readonly store: ReportStore) {}

  async save(viewer: Viewer, input: SaveInput): Promise<{ guid: string }> {
    const name = input.name.trim();
    if (name === '' || name.length > REPORT_NAME_MAX)
      throw AppError.invalid(`saveReport.name is required (1-${REPORT_NAME_MAX} characters)`);
    if (!(REPORT_TYPES as readonly string[]).includes(input.type))
      throw AppError.invalid(`report type must be query or crosstab, got ${quoteInput(input.type)}`);
    const type = input.type as ReportType;
    if (input.method !== METHOD_OF[type]) throw AppError.invalid(`a ${type} report is saved from ${METHOD_OF[type]}`);
    try {
      JSON.parse(input.paramsJson);
    } catch {
      throw AppError.invalid('report params must be JSON');
    }
    const saved = await this.store.insert({
      ownerId: viewer.userId,
      ownerName: viewer.userName,
      name,
      description: input.description,
      folder: input.folder,
      shared: input.shared,
      type,
      index: input.index,
      method: input.method,
      params: input.paramsJson,
    });
    return { guid: saved.guid };
  }
}

/**
 * REPORTS.FIND: own reports and the shared ones on readable indexes, newest first, in pages keyed on the
 * insertion sequence. Visibility is the store's filter, so the `limit + 1` look-ahead counts only
 * visible reports.
 */
export class FindReportsUseCase {
  constructor(
    private readonly store: ReportStore,
    private readonly cursors: CursorCodec,
  ) {}

  async find(
    viewer: Viewer,
    input: { search: string; types: string[]; cursor: string; limit?: number },
  ): Promise<{ reports: ReportSummary[]; nextCursor: string | null }> {
    const limit = input.limit ?? DEFAULT_REPORT_LIMIT;
    if (!Number.isInteger(limit) || limit < 1 || limit > MAX_REPORT_LIMIT)
      throw AppError.invalid(`limit must be an integer between 1 and ${MAX_REPORT_LIMIT}`);
    const bad = input.types.filter((t) => !(REPORT_TYPES as readonly string[]).includes(t));
    if (bad.length) throw AppError.invalid(`types may hold only query and crosstab, got ${quoteList(bad)}`);
    const types = [...new Set(input.types)].sort() as ReportType[];
    const ws = words(input.search);
    const bound = { s: ws, t: types };
    const beforeSeq = input.cursor ? Number(this.cursors.decode('reports', input.cursor, bound).before) : undefined;
    const who = reportViewer(viewer);
    const found = await this.store.find({
      viewerId: who?.viewerId,
      readableIndexes: who?.readableIndexes,
      words: ws,
      types,
      beforeSeq,
      limit: limit + 1,
    });
    const page = found.slice(0, limit);
    return {
      reports: page.map(summary),
      nextCursor:
        found.length > limit ? this.cursors.encode('reports', { before: page[page.length - 1].seq, ...bound }) : null,
    };
  }
}

/**
 * REPORTS.METADATA: what re-executes a report. Unknown, private to another user and shared on an index
 * the caller may not read are one and the same 404, so a guid tells nothing about an index.
 */
export class ReportMetadataUseCase {
  constructor(private readonly store: ReportStore) {}

  async load(viewer: Viewer, guid: string): Promise<{ report: ReportSummary; method: string; paramsJson: string }> {
    if (!GUID.test(guid.trim())) throw AppError.invalid('guid is not a valid report id');
    const id = guid.trim().toLowerCase();
    const who = reportViewer(viewer);
    const r = who ? await this.store.getVisible(id, who) : await this.store.get(id);
    if (!r) throw AppError.notFound(`Report ${id} not found`);
    return { report: summary(r), method: r.method, paramsJson: r.params };
  }
}

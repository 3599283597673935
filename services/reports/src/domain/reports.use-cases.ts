import { AppError, quoteInput, quoteList } from '@quarry/errors';
import type { CursorCodec } from '@quarry/paging';
import { words } from '@quarry/query-language';
import type {
  ReportChange,
  ReportRecord,
  ReportStore,
  ReportType,
  ReportVersion,
  ReportViewer,
} from '../ports/report-store.port';

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
  /** The index version the execution ran on. */
  indexVersion: number;
}

function checkParamsJson(json: string): void {
  try {
    JSON.parse(json);
  } catch {
    throw AppError.invalid('report params must be JSON');
  }
}

/** A guid as stored (lower case), or the 400 every report method gives a malformed one. */
function reportId(guid: string): string {
  if (!GUID.test(guid.trim())) throw AppError.invalid('guid is not a valid report id');
  return guid.trim().toLowerCase();
}

/** Unknown, invisible, not the caller's to change, in the trash: one answer, so a guid tells nothing. */
const unknownReport = (id: string) => AppError.notFound(`Report ${id} not found`);

/**
 * A report the caller may change (owner or admin), or the very 404 of an unknown guid: another user's
 * report, shared or not, is never confirmed to exist by a change refused.
 */
async function ownReport(store: ReportStore, viewer: Viewer, id: string): Promise<ReportRecord> {
  const r = await store.get(id);
  if (!r || (!viewer.admin && r.ownerId !== viewer.userId)) throw unknownReport(id);
  return r;
}

/** REPORTS.METADATA's answer: the report, one version's params, and the list of versions. */
export interface ReportVersionView {
  report: ReportSummary;
  method: string;
  paramsJson: string;
  version: number;
  versions: Array<{ version: number; savedAt: string; indexVersion: number }>;
  indexVersion: number;
}

function versionView(r: ReportRecord, versions: ReportVersion[], wanted?: number): ReportVersionView {
  const all = versions.length
    ? versions
    : [{ version: r.version, params: r.params, indexVersion: r.indexVersion, savedAt: r.updatedAt }];
  const chosen = wanted === undefined ? all[all.length - 1] : all.find((v) => v.version === wanted);
  if (!chosen) {
    const range = all.length === 1 ? 'version 1 only' : `versions 1 to ${all[all.length - 1].version}`;
    throw AppError.notFound(`Report ${r.guid} has no version ${wanted} (it has ${range})`);
  }
  return {
    report: summary(r),
    method: r.method,
    paramsJson: chosen.params,
    version: chosen.version,
    versions: all.map((v) => ({ version: v.version, savedAt: v.savedAt, indexVersion: v.indexVersion })),
    indexVersion: chosen.indexVersion,
  };
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
    checkParamsJson(input.paramsJson);
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
      indexVersion: input.indexVersion,
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
    input: { search?: string; types?: readonly string[]; cursor?: string; limit?: number },
  ): Promise<{ reports: ReportSummary[]; nextCursor: string | null }> {
    const limit = input.limit ?? DEFAULT_REPORT_LIMIT;
    if (!Number.isInteger(limit) || limit < 1 || limit > MAX_REPORT_LIMIT)
      throw AppError.invalid(`limit must be an integer between 1 and ${MAX_REPORT_LIMIT}`);
    const bad = (input.types ?? []).filter((t) => !(REPORT_TYPES as readonly string[]).includes(t));
    if (bad.length) throw AppError.invalid(`types may hold only query and crosstab, got ${quoteList(bad)}`);
    const types = [...new Set(input.types ?? [])].sort() as ReportType[];
    const ws = words(input.search ?? '');
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

  async load(viewer: Viewer, guid: string, version?: number): Promise<ReportVersionView> {
    const id = reportId(guid);
    const who = reportViewer(viewer);
    const r = who ? await this.store.getVisible(id, who) : await this.store.get(id);
    if (!r) throw unknownReport(id);
    return versionView(r, await this.store.versions(id), version);
  }
}

export interface UpdateInput {
  name?: string;
  description?: string;
  folder?: string;
  shared?: boolean;
  /** New executable params, already run by the gateway on the report's index: a new version. */
  params?: { json: string; index: string; indexVersion: number };
}

/** REPORTS.UPDATE: the owner (or an admin) renames, describes, files or shares it, or gives it new params. */
export class UpdateReportUseCase {
  constructor(private readonly store: ReportStore) {}

  async update(viewer: Viewer, guid: string, input: UpdateInput): Promise<ReportVersionView> {
    const id = reportId(guid);
    const r = await ownReport(this.store, viewer, id);
    const change: ReportChange = {};
    if (input.name !== undefined) {
      const name = input.name.trim();
      if (name === '' || name.length > REPORT_NAME_MAX)
        throw AppError.invalid(`name is required (1-${REPORT_NAME_MAX} characters)`);
      change.name = name;
    }
    if (input.description !== undefined) change.description = input.description;
    if (input.folder !== undefined) change.folder = input.folder;
    if (input.shared !== undefined) change.shared = input.shared;
    if (input.params) {
      if (input.params.index !== r.index)
        throw AppError.invalid(
          `params.index: a report keeps its index (${quoteInput(r.index)}); save a new report for ${quoteInput(input.params.index)}`,
        );
      checkParamsJson(input.params.json);
      change.params = { params: input.params.json, indexVersion: input.params.indexVersion };
    }
    const updated = await this.store.update(id, change);
    return versionView(updated, await this.store.versions(id));
  }
}

/** REPORTS.DELETE: into the trash, restorable for `trashDays` (`quarry report restore`). */
export class DeleteReportUseCase {
  constructor(
    private readonly store: ReportStore,
    private readonly trashDays: number,
    private readonly now: () => Date = () => new Date(),
  ) {}

  async delete(viewer: Viewer, guid: string): Promise<{ guid: string; restorableUntil: string }> {
    const id = reportId(guid);
    await ownReport(this.store, viewer, id);
    const at = this.now();
    await this.store.trash(id, at.toISOString());
    // What has been in the trash long enough goes now: no timer to run, and a restore checks the date too.
    await this.store.purgeTrash(trashLimit(at, this.trashDays));
    return { guid: id, restorableUntil: new Date(at.getTime() + this.trashDays * DAY_MS).toISOString() };
  }
}

const DAY_MS = 86_400_000;

/** Reports trashed before this time are past restoring. */
export function trashLimit(now: Date, trashDays: number): string {
  return new Date(now.getTime() - trashDays * DAY_MS).toISOString();
}

/**
 * `quarry report restore <guid> [--user NAME]`: a report from the trash, while it is young enough. With
 * a user, another user's report answers exactly as an unknown guid.
 */
export class RestoreReportUseCase {
  constructor(
    private readonly store: ReportStore,
    private readonly trashDays: number,
    private readonly now: () => Date = () => new Date(),
  ) {}

  async restore(guid: string, ownerName?: string): Promise<ReportRecord> {
    const id = reportId(guid);
    await this.store.purgeTrash(trashLimit(this.now(), this.trashDays));
    const trashed = await this.store.getTrashed(id);
    if (!trashed || (ownerName !== undefined && trashed.report.ownerName !== ownerName))
      throw AppError.notFound(`Report ${id} is not in the trash`);
    return this.store.restore(id);
  }
}

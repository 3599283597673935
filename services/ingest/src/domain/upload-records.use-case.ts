import { INDEX_NAME, type Caller } from '@quarry/contract';
import { AppError, quoteInput } from '@quarry/errors';
import type { IndexEntry } from '@quarry/metadata-store';
import { mayRead } from '@quarry/query-language';
import type { IndexLoader, LoadMode, LoadProgress, RejectedRowView, SourceFormat } from '../ports/index-loader.port';
import type { UploadSpool } from '../ports/upload-spool.port';

export const LOAD_MODES: readonly LoadMode[] = ['replace', 'append', 'upsert'];
export const SOURCE_FORMATS: readonly SourceFormat[] = ['csv', 'json', 'jsonl', 'parquet'];

export interface UploadRequest {
  caller: Caller;
  index: string;
  mode: LoadMode;
  key?: string;
  onError: 'fail' | 'skip';
  maxErrors?: number;
  format: SourceFormat;
  gzip: boolean;
}

/** The answer of an upload (and of a source's run): every row accounted for, published or not. */
export interface LoadOutcome {
  index: string;
  /** The version published; absent when nothing was. */
  version?: number;
  /** Unknown when the load stopped before it had read every row. */
  rowsRead?: number;
  loaded: number;
  rejected: number;
  rejects: RejectedRowView[];
  durationMs: number;
  replaced: number;
  recordCount?: number;
  /** The load failed and published nothing: why, as an AppError would say it. */
  failure?: { code: AppError['code']; detail: string };
}

/**
 * The loader speaks the CLI's flags (`--on-error skip`); an upload's caller set the same things as
 * parameters of its URL, and is told those.
 */
export function inUploadTerms(detail: string): string {
  return detail
    .replace(/--on-error skip/g, 'onError=skip')
    .replace(/--on-error/g, 'onError')
    .replace(/--max-errors (\d+)/g, 'maxErrors=$1')
    .replace(/--max-errors/g, 'maxErrors')
    .replace(/--append/g, 'mode=append');
}

/**
 * Who may write an index: an admin, or the user who created it through the API. A name nobody holds may
 * be created by anyone with `indexes:write` (they become its owner). Someone who reads an index they do
 * not own is told whose rule refuses them; for a name they cannot read, only that it is taken.
 */
export function checkWrite(caller: Caller, name: string, current: IndexEntry | null): void {
  if (!current || caller.admin || current.owner === caller.userId) return;
  if (mayRead(caller, name)) throw AppError.forbidden(`Index "${name}" may be written only by its owner or an admin`);
  throw AppError.forbidden(`The index name "${name}" is taken; choose another`);
}

/**
 * POST /indexes/<name>/records: the body spooled to disk, loaded by the same loader as `quarry index
 * load`, one version published or nothing. A load that fails is an answer, not a throw: the caller is
 * told how many rows were read and rejected before it stopped. Refusals that need no byte of the body
 * (arguments, rights) are thrown before it is read.
 */
export class UploadRecordsUseCase {
  constructor(
    private readonly catalog: { getIndex(name: string): Promise<IndexEntry | null> },
    private readonly loader: IndexLoader,
    private readonly spool: UploadSpool,
    private readonly limits: { maxBytes: number },
    private readonly now: () => number = Date.now,
  ) {}

  /** Everything a caller can get wrong without a body: checked first, so a refused upload reads nothing. */
  async admit(req: UploadRequest): Promise<void> {
    if (!req.caller.scopes.includes('indexes:write'))
      throw AppError.forbidden('Writing an index needs a token with the indexes:write scope');
    if (!INDEX_NAME.test(req.index))
      throw AppError.invalid(
        `${quoteInput(req.index)} is not an index name: 1-64 letters, digits, ".", "_" or "-", starting with a letter or digit`,
      );
    if (!LOAD_MODES.includes(req.mode)) throw AppError.invalid(`mode must be one of ${LOAD_MODES.join(', ')}`);
    if (req.mode === 'upsert' && !req.key)
      throw AppError.invalid('mode=upsert needs key: the field that names a record');
    if (req.mode !== 'upsert' && req.key) throw AppError.invalid('key goes with mode=upsert');
    if (req.maxErrors !== undefined && req.onError !== 'skip')
      throw AppError.invalid('maxErrors goes with onError=skip (a strict load allows none)');
    checkWrite(req.caller, req.index, await this.catalog.getIndex(req.index));
  }

  async upload(req: UploadRequest, body: AsyncIterable<Uint8Array>, signal: AbortSignal): Promise<LoadOutcome> {
    const started = this.now();
    await this.admit(req);
    const spooled = await this.spool.receive(body, {
      format: req.format,
      gzip: req.gzip,
      maxBytes: this.limits.maxBytes,
      signal,
    });
    const progress: LoadProgress = { rejected: 0, rejects: [] };
    try {
      const loaded = await this.loader.load(
        {
          index: req.index,
          file: spooled.file,
          format: req.format,
          label: 'the upload',
          mode: req.mode,
          ...(req.key ? { key: req.key } : {}),
          onError: req.onError,
          ...(req.maxErrors !== undefined ? { maxErrors: req.maxErrors } : {}),
          owner: req.caller.userId,
          authorize: (current) => checkWrite(req.caller, req.index, current),
          signal,
        },
        progress,
      );
      return {
        index: req.index,
        version: loaded.entry.version,
        rowsRead: loaded.rowsRead,
        loaded: loaded.rowsRead - loaded.rejected,
        rejected: loaded.rejected,
        rejects: loaded.rejects.map((r) => ({ ...r, reason: inUploadTerms(r.reason) })),
        durationMs: this.now() - started,
        replaced: loaded.replaced,
        recordCount: loaded.entry.recordCount,
      };
    } catch (err) {
      // Refusals under the lock (someone else created the name meanwhile) are refusals, not load failures;
      // a fault of Quarry's own is a 500 for the operator's log, not an accounting.
      if (!(err instanceof AppError) || err.code === 'FORBIDDEN' || err.code === 'INTERNAL') throw err;
      // The load lock names the process that holds it (pid, host): the operator's business, not the caller's.
      const failure =
        err.code === 'CONFLICT' && err.retryAfterSeconds !== undefined
          ? AppError.busy(
              `Index "${req.index}" is being loaded by another upload or process; try again when it has finished`,
              err.retryAfterSeconds,
            )
          : err;
      return {
        index: req.index,
        ...(progress.rowsRead !== undefined ? { rowsRead: progress.rowsRead } : {}),
        loaded: 0,
        rejected: progress.rejected,
        rejects: progress.rejects.map((r) => ({ ...r, reason: inUploadTerms(r.reason) })),
        durationMs: this.now() - started,
        replaced: 0,
        failure: { code: failure.code, detail: inUploadTerms(failure.detail) },
      };
    } finally {
      await spooled.discard();
    }
  }
}

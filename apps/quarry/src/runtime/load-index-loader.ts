import type { LoadIndexUseCase, LoadReport, RejectedRowInfo } from '@quarry/query';
import type { IndexLoaded, IndexLoader, IndexLoadRequest, LoadProgress } from '@quarry/ingest';

/**
 * The ingest service's loader is the one of `quarry index load` (LoadIndexUseCase): its load lock,
 * strictness and accounting. Joined here, where the process is put together: services never import
 * each other.
 */
export class LoadIndexLoader implements IndexLoader {
  constructor(private readonly loads: LoadIndexUseCase) {}

  async load(req: IndexLoadRequest, progress: LoadProgress): Promise<IndexLoaded> {
    const report: LoadReport = { rejected: 0, rejects: [] };
    try {
      const result = await this.loads.loadIndex({
        name: req.index,
        file: req.file,
        format: req.format,
        label: req.label,
        description: '',
        types: req.types ?? {},
        views: req.views ?? [],
        onError: req.onError,
        ...(req.maxErrors !== undefined ? { maxErrors: req.maxErrors } : {}),
        append: req.mode === 'append',
        ...(req.mode === 'upsert' && req.key ? { upsert: { key: req.key } } : {}),
        createIfMissing: true,
        owner: req.owner,
        ...(req.origin ? { origin: req.origin } : {}),
        authorize: req.authorize,
        signal: req.signal,
        report,
      });
      return {
        entry: result.entry,
        rowsRead: result.rowsRead,
        rejected: result.rowsRejected,
        rejects: (result.rejects ?? []).map(view),
        replaced: result.replaced ?? 0,
      };
    } finally {
      if (report.rowsRead !== undefined) progress.rowsRead = report.rowsRead;
      progress.rejected = report.rejected;
      progress.rejects = report.rejects.map(view);
    }
  }
}

/** The answer names where and why; the raw text stays in the rejects file. */
function view(r: RejectedRowInfo): LoadProgress['rejects'][number] {
  return {
    ...(r.line !== undefined ? { line: r.line } : {}),
    ...(r.record !== undefined ? { record: r.record } : {}),
    ...(r.column !== undefined ? { column: r.column } : {}),
    reason: r.reason,
  };
}

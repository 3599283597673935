import type { Logger } from '@quarry/logger';
import { unary, type pb } from '@quarry/rpc';
import type { FindReportsUseCase, ReportMetadataUseCase, SaveReportUseCase, Viewer } from '../domain/reports.use-cases';

/** A call without a caller sees nothing shared: no indexes, not admin. */
function viewerOf(caller: pb.Caller__Output | null): Viewer {
  return { userId: caller?.userId ?? '', userName: caller?.userName ?? '', admin: caller?.admin ?? false, indexes: caller?.indexes ?? [] };
}

export function reportsHandlers(log: Logger, save: SaveReportUseCase, find: FindReportsUseCase, metadata: ReportMetadataUseCase): pb.ReportsServiceHandlers {
  return {
    SaveReport: unary<pb.SaveReportRequest__Output, pb.ReportRef>(log, 'SaveReport', (req) =>
      save.execute(viewerOf(req.caller), {
        name: req.save?.name ?? '',
        description: req.save?.description ?? '',
        folder: req.save?.folder ?? '',
        shared: req.save?.shared ?? false,
        type: req.type,
        index: req.index,
        method: req.method,
        paramsJson: req.paramsJson,
      }),
    ),
    FindReports: unary<pb.FindReportsRequest__Output, pb.FindReportsResponse>(log, 'FindReports', async (req) => {
      const out = await find.execute(viewerOf(req.caller), { search: req.search, types: req.types, cursor: req.cursor, limit: req.limit === 0 ? undefined : req.limit });
      return { reports: out.reports, nextCursor: out.nextCursor ?? '' };
    }),
    GetReportMetadata: unary<pb.GetReportMetadataRequest__Output, pb.ReportMetadata>(log, 'GetReportMetadata', (req) =>
      metadata.execute(viewerOf(req.caller), req.guid),
    ),
  };
}

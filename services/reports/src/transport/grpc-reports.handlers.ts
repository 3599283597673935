import type { Logger } from '@quarry/logger';
import { callerFromWire, unary, type pb } from '@quarry/rpc';
import type { FindReportsUseCase, ReportMetadataUseCase, SaveReportUseCase } from '../domain/reports.use-cases';

export function reportsHandlers(
  log: Logger,
  save: SaveReportUseCase,
  find: FindReportsUseCase,
  metadata: ReportMetadataUseCase,
): pb.ReportsServiceHandlers {
  return {
    SaveReport: unary<pb.SaveReportRequest__Output, pb.ReportRef>(log, 'SaveReport', (req) =>
      save.save(callerFromWire(req.caller), {
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
      const out = await find.find(callerFromWire(req.caller), {
        search: req.search,
        types: req.types,
        cursor: req.cursor,
        limit: req.limit,
      });
      return { reports: out.reports, nextCursor: out.nextCursor ?? '' };
    }),
    GetReportMetadata: unary<pb.GetReportMetadataRequest__Output, pb.ReportMetadata>(log, 'GetReportMetadata', (req) =>
      metadata.load(callerFromWire(req.caller), req.guid),
    ),
  };
}

import { reportsFindParamsCodec } from '@quarry/contract';
import type { Logger } from '@quarry/logger';
import { callerFromWire, unary, type pb } from '@quarry/rpc';
import type {
  DeleteReportUseCase,
  FindReportsUseCase,
  ReportMetadataUseCase,
  ReportVersionView,
  SaveReportUseCase,
  UpdateReportUseCase,
} from '../domain/reports.use-cases';

export interface ReportsUseCases {
  save: SaveReportUseCase;
  find: FindReportsUseCase;
  metadata: ReportMetadataUseCase;
  update: UpdateReportUseCase;
  remove: DeleteReportUseCase;
}

function metadataToWire(v: ReportVersionView): pb.ReportMetadata {
  return {
    report: v.report,
    method: v.method,
    paramsJson: v.paramsJson,
    version: v.version,
    versions: v.versions,
    indexVersion: v.indexVersion,
  };
}

export function reportsHandlers(log: Logger, uc: ReportsUseCases): pb.ReportsServiceHandlers {
  return {
    SaveReport: unary<pb.SaveReportRequest__Output, pb.ReportRef>(log, 'SaveReport', (req) =>
      uc.save.save(callerFromWire(req.caller), {
        name: req.save?.name ?? '',
        description: req.save?.description ?? '',
        folder: req.save?.folder ?? '',
        shared: req.save?.shared ?? false,
        type: req.type,
        index: req.index,
        method: req.method,
        paramsJson: req.paramsJson,
        indexVersion: req.indexVersion,
      }),
    ),
    FindReports: unary<pb.FindReportsRequest__Output, pb.FindReportsResponse>(log, 'FindReports', async (req) => {
      const out = await uc.find.find(callerFromWire(req.caller), reportsFindParamsCodec.decode(req.paramsJson));
      return { reports: out.reports, nextCursor: out.nextCursor ?? '' };
    }),
    GetReportMetadata: unary<pb.GetReportMetadataRequest__Output, pb.ReportMetadata>(
      log,
      'GetReportMetadata',
      async (req) => metadataToWire(await uc.metadata.load(callerFromWire(req.caller), req.guid, req.version)),
    ),
    UpdateReport: unary<pb.UpdateReportRequest__Output, pb.ReportMetadata>(log, 'UpdateReport', async (req) =>
      metadataToWire(
        await uc.update.update(callerFromWire(req.caller), req.guid, {
          ...(req.name !== undefined ? { name: req.name } : {}),
          ...(req.description !== undefined ? { description: req.description } : {}),
          ...(req.folder !== undefined ? { folder: req.folder } : {}),
          ...(req.shared !== undefined ? { shared: req.shared } : {}),
          ...(req.paramsJson !== undefined
            ? { params: { json: req.paramsJson, index: req.index, indexVersion: req.indexVersion } }
            : {}),
        }),
      ),
    ),
    DeleteReport: unary<pb.DeleteReportRequest__Output, pb.DeletedReport>(log, 'DeleteReport', (req) =>
      uc.remove.delete(callerFromWire(req.caller), req.guid),
    ),
  };
}

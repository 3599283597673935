import type { Logger } from '@quarry/logger';
import { notImplemented as notYet, type pb } from '@quarry/rpc';

export function reportsHandlers(log: Logger): pb.ReportsServiceHandlers {
  return {
    SaveReport: notYet(log, 'SaveReport', 'saveReport'),
    FindReports: notYet(log, 'FindReports', 'REPORTS.FIND'),
    GetReportMetadata: notYet(log, 'GetReportMetadata', 'REPORTS.METADATA'),
  };
}

import type { Logger } from '@quarry/logger';
import { notImplemented as notYet, type pb } from '@quarry/rpc';

export function queryHandlers(log: Logger): pb.QueryServiceHandlers {
  return {
    ExecuteQuery: notYet(log, 'ExecuteQuery', 'QUERIES.EXECUTE'),
    FindIndexes: notYet(log, 'FindIndexes', 'INDEXES.FIND'),
  };
}

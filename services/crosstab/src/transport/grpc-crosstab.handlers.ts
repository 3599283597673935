import type { Logger } from '@quarry/logger';
import { notImplemented as notYet, type pb } from '@quarry/rpc';

export function crosstabHandlers(log: Logger): pb.CrosstabServiceHandlers {
  return {
    ExecuteCrosstab: notYet(log, 'ExecuteCrosstab', 'CROSSTAB.EXECUTE'),
  };
}

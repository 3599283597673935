import type { Logger } from '@quarry/logger';
import { notImplemented as notYet, type pb } from '@quarry/rpc';

export function chartHandlers(log: Logger): pb.ChartServiceHandlers {
  return {
    RenderChart: notYet(log, 'RenderChart', 'CROSSTAB.EXECUTE with chartType'),
  };
}

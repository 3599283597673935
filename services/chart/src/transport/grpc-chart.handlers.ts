import type { Logger } from '@quarry/logger';
import { callerFromWire, unary, type pb } from '@quarry/rpc';
import type { RenderChartUseCase } from '../domain/render-chart.use-case';

export function chartHandlers(log: Logger, render: RenderChartUseCase): pb.ChartServiceHandlers {
  return {
    RenderChart: unary<pb.RenderChartRequest__Output, pb.RenderChartResponse>(log, 'RenderChart', (req, ctx) =>
      render.render(
        {
          gridJson: req.gridJson,
          chartType: req.chartType,
          width: req.width,
          height: req.height,
          title: req.title,
          imageFormat: req.imageFormat,
        },
        ctx.requestId,
        { caller: callerFromWire(req.caller).userId, signal: ctx.signal },
      ),
    ),
    PrintTable: unary<pb.PrintTableRequest__Output, pb.PrintTableResponse>(log, 'PrintTable', async (req, ctx) => ({
      pdfBase64: await render.printTable({ html: req.html, title: req.title, subtitle: req.subtitle }, ctx.requestId, {
        caller: callerFromWire(req.caller).userId,
        signal: ctx.signal,
      }),
    })),
  };
}

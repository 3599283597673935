import { axisNumbers } from '../axis-numbers';
import type { ChartGrid } from '../chart-grid';
import type { ChartKind } from '../chart-types';
import { fitText } from '../text-metrics';
import {
  MIN_FONT,
  PAD,
  base,
  finite,
  lineHeight,
  palette,
  sizes,
  ticks,
  valueAxis,
  valueLabelWidth,
  type Option,
  type Title,
} from './layout';

export function scatter(grid: ChartGrid, kind: ChartKind, width: number, height: number, title: Title): Option {
  const fs = sizes(width, height).label;
  const points = grid.rowTotals
    .filter((t) => finite(t[0]) && finite(t[1]))
    .map((t) => [t[0], t[1]] as [number, number]);
  const xNumbers = axisNumbers(grid, [0]);
  const yNumbers = axisNumbers(grid, [1]);
  const yWidth = valueLabelWidth(
    points.map((p) => p[1]),
    fs,
    yNumbers,
  );
  const xWidth = valueLabelWidth(
    points.map((p) => p[0]),
    fs,
    xNumbers,
  );
  const nameH = lineHeight(fs);
  const left = PAD + nameH + 6 + yWidth + 8;
  const bottom = PAD + nameH + 6 + lineHeight(fs) + 8;
  const plotW = width - left - PAD - xWidth / 2;
  const plotH = height - title.height - bottom;
  return {
    ...base(title, palette(1)),
    grid: { left, right: PAD + Math.ceil(xWidth / 2), top: title.height, bottom, containLabel: false },
    xAxis: valueAxis(
      fitText(grid.totals[0], plotW, fs, MIN_FONT).text,
      fs,
      xWidth,
      8 + lineHeight(fs) + 6,
      { scale: true, splitNumber: ticks(plotW, fs, xWidth, false) },
      xNumbers,
    ),
    yAxis: valueAxis(
      fitText(grid.totals[1], plotH, fs, MIN_FONT).text,
      fs,
      yWidth,
      yWidth + 8 + 6,
      { scale: true, splitNumber: ticks(plotH, fs, yWidth, true) },
      yNumbers,
    ),
    series: [{ type: 'scatter', name: kind.name, data: points, symbolSize: points.length > 300 ? 4 : 7 }],
  };
}

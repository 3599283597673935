import type { ChartGrid } from '../chart-grid';
import type { ChartKind } from '../chart-types';
import { axisNumbers } from '../axis-numbers';
import { textWidth } from '../text-metrics';
import { PAD, SIN45, base, finite, lineHeight, palette, sizes, tooMany, type Option, type Title } from './layout';

export function heatmap(
  grid: ChartGrid,
  kind: ChartKind,
  categories: string[],
  width: number,
  height: number,
  title: Title,
): Option {
  const fs = sizes(width, height).label;
  const numbers = axisNumbers(grid, [0]);
  const cols = grid.columnFields.length ? grid.columns.map((c) => c.join(' / ')) : [grid.totals[0]];
  const values: number[] = [];
  const data: Array<[number, number, number | null]> = [];
  categories.forEach((_, r) =>
    cols.forEach((__, c) => {
      const v = grid.columnFields.length ? grid.cells[r][c][0] : grid.rowTotals[r][0];
      if (finite(v)) values.push(v);
      data.push([c, r, finite(v) ? v : null]);
    }),
  );
  const rowCap = Math.min(Math.max(...categories.map((c) => textWidth(c, fs)), 10), Math.floor(width * 0.28));
  const colCapMax = Math.max(...cols.map((c) => textWidth(c, fs)), 10);
  const visualH = 14 + 8 + lineHeight(fs);
  const left = PAD + rowCap + 8;
  const plotW = width - left - PAD;
  const band = plotW / cols.length;
  const rotate = colCapMax > band - 4;
  const colCap = rotate ? Math.min(colCapMax, Math.floor((height * 0.25) / SIN45)) : Math.max(10, Math.floor(band - 4));
  const colRegion = rotate ? Math.ceil(colCap * SIN45 + fs) : lineHeight(fs);
  const bottom = PAD + visualH + 8 + colRegion + 8;
  const plotH = height - title.height - bottom;
  const rowLimit = Math.floor(plotH / 3);
  const colLimit = Math.floor(plotW / 3);
  if (categories.length > rowLimit) throw tooMany(kind, 'rows', categories.length, rowLimit, width, height, 'rowLimit');
  if (cols.length > colLimit) throw tooMany(kind, 'columns', cols.length, colLimit, width, height, 'columnLimit');
  const cellH = plotH / categories.length;
  const min = values.length ? Math.min(...values) : 0;
  const max = values.length ? Math.max(...values) : 1;
  return {
    ...base(title, palette(1)),
    grid: { left, right: PAD, top: title.height, bottom, containLabel: false },
    xAxis: {
      type: 'category',
      data: cols,
      splitArea: { show: true },
      axisLabel: {
        fontSize: fs,
        interval: 'auto',
        hideOverlap: true,
        rotate: rotate ? 45 : 0,
        width: colCap,
        overflow: 'truncate',
      },
    },
    yAxis: {
      type: 'category',
      data: categories,
      inverse: true,
      splitArea: { show: true },
      axisLabel: { fontSize: fs, interval: 'auto', hideOverlap: true, width: rowCap, overflow: 'truncate' },
    },
    visualMap: {
      type: 'continuous',
      min,
      max: max === min ? min + 1 : max,
      calculable: false,
      orient: 'horizontal',
      left: 'center',
      bottom: PAD,
      itemHeight: Math.max(60, Math.min(300, width - 2 * PAD - 2 * textWidth(numbers.text(max), fs) - 40)),
      itemWidth: 14,
      textStyle: { fontSize: fs },
      // The two ends of the scale, written out: a continuous visualMap shows no numbers otherwise.
      text: [numbers.text(max), numbers.text(min)],
      inRange: { color: ['#e0f3f8', '#91bfdb', '#4575b4', '#313695'] },
    },
    series: [
      {
        type: 'heatmap',
        name: grid.totals[0],
        data,
        label: {
          show: band >= 44 && cellH >= fs + 4,
          ...numbers.itemFormatter,
          fontSize: fs,
          color: '#fff',
          textBorderColor: '#333',
          textBorderWidth: 2,
        },
        labelLayout: { hideOverlap: true },
      },
    ],
  };
}

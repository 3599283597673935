import { AppError } from '@quarry/errors';
import type { ChartGrid } from './chart-grid';
import type { ChartKind } from './chart-types';

export const MAX_CATEGORIES = 1000;
export const MAX_SERIES = 100;

/** ECharts' own palette first, then evenly spread hues, so every series has its own colour. */
const BASE_PALETTE = ['#5470c6', '#91cc75', '#fac858', '#ee6666', '#73c0de', '#3ba272', '#fc8452', '#9a60b4', '#ea7ccc'];

export function palette(n: number): string[] {
  const colours = [...BASE_PALETTE];
  for (let i = 0; colours.length < n; i++) {
    const hue = Math.round((i * 137.508) % 360);
    colours.push(`hsl(${hue}, ${55 + (i % 3) * 15}%, ${40 + (i % 4) * 8}%)`);
  }
  return colours.slice(0, Math.max(n, 1));
}

interface Series {
  name: string;
  data: Array<number | null>;
}

/** Categories from the row axis; series from columns × totals (multi) or the first total's row totals. */
function seriesOf(grid: ChartGrid, kind: ChartKind): Series[] {
  if (!kind.multiSeries) return [{ name: grid.totals[0], data: grid.rowTotals.map((t) => t[0]) }];
  if (grid.columnFields.length === 0) return grid.totals.map((name, t) => ({ name, data: grid.rowTotals.map((r) => r[t]) }));
  const out: Series[] = [];
  grid.columns.forEach((col, c) =>
    grid.totals.forEach((total, t) => {
      const label = col.join(' / ');
      out.push({ name: grid.totals.length > 1 ? `${label} · ${total}` : label, data: grid.cells.map((row) => row[c][t]) });
    }),
  );
  return out;
}

function title(grid: ChartGrid, subtitle: string) {
  const by = [grid.rowFields.join(' / '), ...(grid.columnFields.length ? [grid.columnFields.join(' / ')] : [])].join(' and ');
  return { text: `${grid.totals.join(', ')} by ${by}`, subtext: subtitle, left: 'center', top: 8, textStyle: { fontSize: 16 }, subtextStyle: { fontSize: 12 } };
}

/**
 * The ECharts option for a grid. Labels travel as data and are drawn on a canvas: nothing here is
 * ever interpreted as markup. Crowded category axes rotate and thin their labels.
 */
export function buildChartOption(grid: ChartGrid, kind: ChartKind, width: number, height: number, subtitle: string): Record<string, unknown> {
  const categories = grid.rows.map((r) => r.join(' / '));
  if (categories.length > MAX_CATEGORIES) throw AppError.invalid(`The chart would have ${categories.length} categories; the limit is ${MAX_CATEGORIES}`);
  const series = seriesOf(grid, kind);
  if (series.length > MAX_SERIES) throw AppError.invalid(`The chart would have ${series.length} series; the limit is ${MAX_SERIES}`);
  const colours = palette(kind.family === 'pie' || kind.family === 'doughnut' ? categories.length : series.length);
  const base = { animation: false, backgroundColor: '#ffffff', color: colours, title: title(grid, subtitle), textStyle: { fontFamily: 'DejaVu Sans, Liberation Sans, sans-serif' } };

  if (kind.family === 'pie' || kind.family === 'doughnut') {
    const s = series[0];
    return {
      ...base,
      legend: { type: 'scroll', bottom: 0, left: 'center' },
      series: [
        {
          type: 'pie',
          name: s.name,
          radius: kind.family === 'doughnut' ? ['32%', '58%'] : '58%',
          center: ['50%', '52%'],
          data: categories.map((name, i) => ({ name, value: s.data[i] ?? 0 })),
          label: { formatter: '{b}: {d}%', overflow: 'truncate', width: Math.max(80, width * 0.2), edgeDistance: 10 },
          labelLine: { length: 10, length2: 8 },
          labelLayout: { hideOverlap: true },
        },
      ],
    };
  }

  const horizontal = kind.family === 'bar';
  const crowded = categories.length > Math.max(6, width / 90);
  const categoryAxis = {
    type: 'category',
    data: categories,
    name: grid.rowFields.join(' / '),
    nameLocation: 'middle',
    nameGap: horizontal ? Math.min(140, width * 0.2) : crowded ? 70 : 30,
    axisLabel: {
      interval: 'auto',
      hideOverlap: true,
      rotate: !horizontal && crowded ? 45 : 0,
      overflow: 'truncate',
      width: horizontal ? Math.min(120, width * 0.18) : 100,
    },
    boundaryGap: kind.family === 'column' || kind.family === 'bar',
    // Horizontal bars read top-down in row order, like the table.
    inverse: horizontal,
  };
  const valueAxis = { type: 'value', name: grid.totals.length === 1 || !kind.multiSeries ? grid.totals[0] : '', nameLocation: 'middle', nameGap: horizontal ? 30 : 55 };
  const several = series.length > 1;
  return {
    ...base,
    legend: several ? { type: 'scroll', bottom: 0, left: 'center' } : undefined,
    grid: { left: horizontal ? Math.min(160, width * 0.22) : 80, right: 30, top: 70, bottom: (several ? 40 : 10) + (horizontal ? 40 : crowded ? 90 : 50), containLabel: false },
    xAxis: horizontal ? valueAxis : categoryAxis,
    yAxis: horizontal ? categoryAxis : valueAxis,
    series: series.map((s) => ({
      type: kind.family === 'column' || kind.family === 'bar' ? 'bar' : 'line',
      name: s.name,
      // In a stack a missing cell is nothing on top of the others, not a hole in every layer above it.
      data: kind.stacked ? s.data.map((v) => v ?? 0) : s.data,
      stack: kind.stacked ? 'total' : undefined,
      areaStyle: kind.family === 'area' ? { opacity: kind.stacked ? 0.85 : 0.6 } : undefined,
      showSymbol: kind.family === 'line' && categories.length <= 50,
      connectNulls: false,
      barMaxWidth: 60,
    })),
  };
}

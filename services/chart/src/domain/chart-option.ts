import { AppError } from '@quarry/errors';
import type { ChartGrid } from './chart-grid';
import type { ChartKind } from './chart-types';
import { COMPACT, COMPACT_VALUE } from './formatters';
import { compactNumber, fitText, textWidth, truncateText } from './text-metrics';

export const MAX_CATEGORIES = 1000;
export const MAX_SERIES = 100;
/** Pie, doughnut, funnel and pyramid slices under this share of the total are gathered into one "Other". */
export const OTHER_SHARE = 0.015;
/** Slices under this share carry no label of their own (the legend still names them). */
const LABEL_SHARE = 0.03;

/** Blank margin kept along every edge of the image: nothing is drawn closer than this. */
const PAD = 10;
const FONT = 'DejaVu Sans, Liberation Sans, sans-serif';
const LEGEND_SYMBOL = 18;
const LEGEND_SYMBOL_GAP = 5;
const LEGEND_GAP = 10;
const BESIDE_GAP = 5;
/** Below this a label cannot be read and is left out rather than drawn illegibly. */
const MIN_FONT = 9;
const SIN45 = Math.SQRT1_2;

/** ECharts' own palette first, then evenly spread hues, so every series has its own colour. */
const BASE_PALETTE = [
  '#5470c6',
  '#91cc75',
  '#fac858',
  '#ee6666',
  '#73c0de',
  '#3ba272',
  '#fc8452',
  '#9a60b4',
  '#ea7ccc',
];

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
  /** Which total (measure) the series draws. */
  measure: number;
  data: Array<number | null>;
}

type Option = Record<string, unknown>;

const finite = (v: number | null | undefined): v is number => typeof v === 'number' && Number.isFinite(v);

/** Categories from the row axis; series from columns × totals (multi) or the first total's row totals. */
function seriesOf(grid: ChartGrid, kind: ChartKind): Series[] {
  if (!kind.multiSeries) return [{ name: grid.totals[0], measure: 0, data: grid.rowTotals.map((t) => t[0]) }];
  if (grid.columnFields.length === 0)
    return grid.totals.map((name, t) => ({ name, measure: t, data: grid.rowTotals.map((r) => r[t]) }));
  const out: Series[] = [];
  grid.totals.forEach((total, t) =>
    grid.columns.forEach((col, c) => {
      const label = col.join(' / ');
      out.push({
        name: grid.totals.length > 1 ? `${label} · ${total}` : label,
        measure: t,
        data: grid.cells.map((row) => row[c][t]),
      });
    }),
  );
  return out;
}

const lineHeight = (fontSize: number) => Math.ceil(fontSize * 1.3);

/** Font sizes follow the image: a 300 px chart cannot spend 16 px on its title. */
function sizes(width: number, height: number) {
  const small = Math.min(width, height) < 320;
  return { title: small ? 13 : 16, sub: small ? 10 : 12, label: small ? 10 : 12 };
}

interface Title {
  option: Option;
  /** Space the title takes from the top edge, with the gap below it. */
  height: number;
}

function planTitle(grid: ChartGrid, kind: ChartKind, subtitle: string, width: number, height: number): Title {
  const by = [grid.rowFields.join(' / '), ...(grid.columnFields.length ? [grid.columnFields.join(' / ')] : [])].join(
    ' and ',
  );
  // The title names the measures drawn, not every total of the crosstab.
  const measures = kind.multiSeries ? grid.totals : grid.totals.slice(0, kind.minMeasures);
  const fs = sizes(width, height);
  const room = width - 2 * PAD;
  // Bold glyphs run about a tenth wider than the regular ones text-metrics knows.
  const main = fitText(`${measures.join(', ')} by ${by}`, Math.floor(room / 1.12), fs.title, Math.min(11, fs.title));
  // A tiny image keeps its plot rather than a second title line.
  const sub = subtitle && height >= 200 ? fitText(subtitle, room, fs.sub, Math.min(10, fs.sub)) : undefined;
  const h = PAD + lineHeight(main.fontSize) + (sub ? 4 + lineHeight(sub.fontSize) : 0);
  return {
    option: {
      text: main.text,
      subtext: sub?.text ?? '',
      left: 'center',
      top: PAD,
      itemGap: 4,
      textStyle: { fontSize: main.fontSize, fontWeight: 'bold', color: '#333' },
      subtextStyle: { fontSize: sub?.fontSize ?? fs.sub, color: '#666' },
    },
    height: h + 8,
  };
}

interface Legend {
  option: Option;
  /** Where it sits and how much it takes from the plot. */
  side: 'bottom' | 'right';
  size: number;
}

/** Rows of a horizontal, wrapping legend (ECharts wraps a plain legend at its width the same way). */
function legendRows(widths: number[], maxWidth: number): number {
  let rows = 1;
  let x = 0;
  for (const w of widths) {
    if (x > 0 && x + w > maxWidth) {
      rows++;
      x = 0;
    }
    x += w + LEGEND_GAP;
  }
  return rows;
}

/**
 * A legend that shows every entry: wrapped under the plot, else in columns beside it, smaller before
 * giving up. Undefined when even that cannot hold them at this size.
 */
function planLegend(names: string[], width: number, availHeight: number, baseFont: number): Legend | undefined {
  for (const fontSize of [baseFont, Math.max(MIN_FONT, baseFont - 2)]) {
    const rowH = Math.max(lineHeight(fontSize), 14);
    const maxWidth = width - 2 * PAD;
    // A name wider than the whole row is shortened: it is the only case the legend cuts text.
    const cap = maxWidth - LEGEND_SYMBOL - LEGEND_SYMBOL_GAP;
    // A legend entry cut to a couple of letters names nothing.
    const longest = Math.max(...names.map((n) => textWidth(n, fontSize)));
    if (cap < Math.min(longest, textWidth('Abcd…', fontSize))) continue;
    const widths = names.map((n) => LEGEND_SYMBOL + LEGEND_SYMBOL_GAP + Math.min(cap, textWidth(n, fontSize)));
    const rows = legendRows(widths, maxWidth);
    const bottomH = rows * rowH + (rows - 1) * LEGEND_GAP;
    const text = { fontSize, width: cap, overflow: 'truncate' };
    const common = {
      type: 'plain',
      itemWidth: LEGEND_SYMBOL,
      itemHeight: 10,
      itemGap: LEGEND_GAP,
      textStyle: text,
      padding: 0,
    };
    if (bottomH <= availHeight * 0.35) {
      return {
        option: { ...common, orient: 'horizontal', left: PAD, bottom: PAD, width: maxWidth },
        side: 'bottom',
        size: bottomH + 10,
      };
    }
    // Beside the plot: columns of entries, as many as the height needs, packed closer.
    const colCap = Math.min(Math.max(...widths), width * 0.45);
    const perCol = Math.max(1, Math.floor((availHeight + BESIDE_GAP) / (rowH + BESIDE_GAP)));
    const cols = Math.ceil(names.length / perCol);
    const besideW = cols * colCap + (cols - 1) * LEGEND_GAP;
    if (besideW <= width * 0.5) {
      const textCap = colCap - LEGEND_SYMBOL - LEGEND_SYMBOL_GAP;
      if (textCap < Math.min(longest, textWidth('Abcd…', fontSize))) continue;
      return {
        option: {
          ...common,
          itemGap: BESIDE_GAP,
          textStyle: { ...text, width: textCap },
          orient: 'vertical',
          right: PAD,
          top: 'middle',
          height: availHeight,
        },
        side: 'right',
        size: besideW + 10,
      };
    }
  }
  return undefined;
}

/** The most entries of these names a legend can hold at this size (for the 400). */
function legendCapacity(names: string[], width: number, availHeight: number, baseFont: number): number {
  let lo = 0;
  let hi = names.length;
  while (lo < hi) {
    const mid = Math.ceil((lo + hi) / 2);
    if (planLegend(names.slice(0, mid), width, availHeight, baseFont)) lo = mid;
    else hi = mid - 1;
  }
  return lo;
}

function tooMany(
  kind: ChartKind,
  what: string,
  n: number,
  limit: number,
  width: number,
  height: number,
  param: string,
): AppError {
  if (limit < 1)
    return AppError.invalid(
      `A ${kind.name} of ${width}×${height} is too small to draw any ${what} legibly (this crosstab has ${n}); use a larger width and height`,
    );
  return AppError.invalid(
    `A ${kind.name} of ${width}×${height} can draw at most ${limit} ${what} legibly; this crosstab has ${n}. ` +
      `Use ${param}: ${Math.max(1, limit)} (with ${param === 'rowLimit' ? 'rowOrder' : 'columnOrder'} to choose which), narrow the query, or use a larger width and height`,
  );
}

function noPositive(kind: ChartKind, measure: string): AppError {
  return AppError.invalid(
    `A ${kind.name} draws parts of a whole: positive values only, and ${measure} has none here; use a column or bar type`,
  );
}

/** The widest compact tick label an axis over these values can show, with room for one more digit. */
function valueLabelWidth(values: number[], fontSize: number): number {
  const lo = Math.min(0, ...values);
  const hi = Math.max(0, ...values);
  const samples = [lo, hi, lo * 1.25, hi * 1.25, (hi - lo) / 7];
  return Math.max(...samples.map((v) => textWidth(compactNumber(v), fontSize))) + Math.ceil(fontSize * 0.7);
}

/** Ticks far enough apart for their labels: a line of text plus as much again vertically, a label and a half across. */
function ticks(length: number, fontSize: number, labelWidth: number, vertical: boolean): number {
  return Math.max(1, Math.min(8, Math.floor(length / (vertical ? fontSize * 2.6 : labelWidth * 1.6))));
}

function valueAxis(name: string, fontSize: number, labelWidth: number, nameGap: number, extra: Option = {}): Option {
  return {
    type: 'value',
    name,
    nameLocation: 'middle',
    nameGap,
    nameTextStyle: { fontSize, color: '#333' },
    axisLabel: { formatter: COMPACT, fontSize, width: labelWidth, overflow: 'truncate', hideOverlap: true },
    splitLine: { lineStyle: { color: '#e6e6e6' } },
    ...extra,
  };
}

const base = (title: Title, colours: string[]): Option => ({
  animation: false,
  backgroundColor: '#ffffff',
  color: colours,
  title: title.option,
  textStyle: { fontFamily: FONT },
});

/**
 * The ECharts option for a grid, planned for a still image of `width`×`height`: every box (title,
 * legend, axis labels and names) is measured (text-metrics) and given its room, so nothing is cut at an
 * edge or drawn over something else. Labels travel as data and are drawn on a canvas or as SVG text:
 * nothing here is ever interpreted as markup.
 */
export function buildChartOption(
  grid: ChartGrid,
  kind: ChartKind,
  width: number,
  height: number,
  subtitle: string,
): Option {
  const categories = grid.rows.map((r) => r.join(' / '));
  if (categories.length > MAX_CATEGORIES)
    throw AppError.invalid(`The chart would have ${categories.length} categories; the limit is ${MAX_CATEGORIES}`);
  if (grid.totals.length < kind.minMeasures)
    throw AppError.invalid(
      `chartType ${kind.name} needs at least ${kind.minMeasures} totals; ${grid.totals.length} given`,
    );
  const series = seriesOf(grid, kind);
  if (series.length > MAX_SERIES)
    throw AppError.invalid(`The chart would have ${series.length} series; the limit is ${MAX_SERIES}`);
  const title = planTitle(grid, kind, subtitle, width, height);
  switch (kind.family) {
    case 'pie':
    case 'doughnut':
    case 'funnel':
    case 'pyramid':
      return sliced(grid, kind, categories, series[0], width, height, title);
    case 'treemap':
      return treemap(kind, categories, series[0], width, height, title);
    case 'heatmap':
      return heatmap(grid, kind, categories, width, height, title);
    case 'radar':
      return radar(kind, categories, series, width, height, title);
    case 'scatter':
      return scatter(grid, kind, width, height, title);
    default:
      return cartesian(grid, kind, categories, series, width, height, title);
  }
}

/** Slices of one whole: positive values only (a pie cannot draw a negative or an empty slice). */
function sliced(
  grid: ChartGrid,
  kind: ChartKind,
  categories: string[],
  s: Series,
  width: number,
  height: number,
  title: Title,
): Option {
  const fs = sizes(width, height).label;
  const items = categories
    .map((name, i) => ({ name, value: s.data[i] }))
    .filter((d): d is { name: string; value: number } => finite(d.value) && d.value > 0);
  if (!items.length) throw noPositive(kind, s.name);
  const total = items.reduce((a, d) => a + d.value, 0);
  // Funnels read top-down from the largest stage, as FusionCharts sorts them.
  if (kind.family === 'funnel' || kind.family === 'pyramid') items.sort((a, b) => b.value - a.value);
  const small = items.filter((d) => d.value < total * OTHER_SHARE);
  let shown = items;
  if (small.length >= 2) {
    const other = {
      name: `Other (${small.length} under ${OTHER_SHARE * 100}%)`,
      value: small.reduce((a, d) => a + d.value, 0),
    };
    shown = [...items.filter((d) => d.value >= total * OTHER_SHARE), other];
  }
  const avail = height - title.height - PAD;
  const names = shown.map((d) => d.name);
  const legend = planLegend(names, width, avail, fs);
  if (!legend) {
    const limit = legendCapacity(names, width, avail, fs);
    throw tooMany(
      kind,
      `slices (after gathering those under ${OTHER_SHARE * 100}% into Other)`,
      names.length,
      limit,
      width,
      height,
      'rowLimit',
    );
  }
  const box = {
    left: PAD,
    top: title.height,
    right: legend.side === 'right' ? legend.size + PAD : PAD,
    bottom: legend.side === 'bottom' ? legend.size + PAD : PAD,
  };
  const boxW = width - box.left - box.right;
  const boxH = height - box.top - box.bottom;
  const colours = palette(shown.length);
  if (kind.family === 'funnel' || kind.family === 'pyramid') {
    return {
      ...base(title, colours),
      legend: { ...legend.option, data: names },
      series: [
        {
          type: 'funnel',
          name: s.name,
          ...box,
          sort: kind.family === 'funnel' ? 'descending' : 'ascending',
          gap: 1,
          minSize: '8%',
          data: shown,
          label: {
            show: boxH / Math.max(1, shown.length) >= fs * 1.4,
            position: 'inside',
            formatter: '{d}%',
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
  // Labels outside the pie need a ring of room; a small pie lets the legend speak alone.
  const labelCap = Math.min(140, Math.floor(boxW * 0.22));
  const withLabels = labelCap >= 50 && boxH >= 140;
  const radius = withLabels
    ? Math.max(10, Math.min(boxW / 2 - labelCap - 24, boxH / 2 - fs * 2 - 10))
    : Math.max(10, Math.min(boxW, boxH) / 2 - 4);
  return {
    ...base(title, colours),
    legend: { ...legend.option, data: names },
    series: [
      {
        type: 'pie',
        name: s.name,
        ...box,
        radius: kind.family === 'doughnut' ? [Math.round(radius * 0.55), Math.round(radius)] : Math.round(radius),
        center: ['50%', '50%'],
        data: shown.map((d) => ({ ...d, label: { show: withLabels && d.value >= total * LABEL_SHARE } })),
        label: {
          show: withLabels,
          formatter: '{b}: {d}%',
          fontSize: fs,
          width: labelCap,
          overflow: 'truncate',
          alignTo: 'labelLine',
          edgeDistance: 4,
          bleedMargin: 4,
        },
        labelLine: { show: withLabels, length: 8, length2: 8 },
        labelLayout: { hideOverlap: true },
        avoidLabelOverlap: true,
      },
    ],
  };
}

function treemap(
  kind: ChartKind,
  categories: string[],
  s: Series,
  width: number,
  height: number,
  title: Title,
): Option {
  const fs = sizes(width, height).label;
  const items = categories
    .map((name, i) => ({ name, value: s.data[i] }))
    .filter((d): d is { name: string; value: number } => finite(d.value) && d.value > 0);
  if (!items.length) throw noPositive(kind, s.name);
  const box = { left: PAD, top: title.height, right: PAD, bottom: PAD };
  const area = (width - 2 * PAD) * (height - title.height - PAD);
  // A rectangle needs about a short word's room to be told from its neighbours.
  const limit = Math.floor(area / 600);
  if (items.length > limit) throw tooMany(kind, 'rectangles', items.length, limit, width, height, 'rowLimit');
  return {
    ...base(title, palette(items.length)),
    series: [
      {
        type: 'treemap',
        name: s.name,
        ...box,
        roam: false,
        nodeClick: false,
        breadcrumb: { show: false },
        colorMappingBy: 'index',
        data: items,
        label: { show: true, formatter: '{b}', fontSize: fs, overflow: 'truncate', ellipsis: '…' },
        upperLabel: { show: false },
        itemStyle: { borderColor: '#fff', borderWidth: 1, gapWidth: 1 },
        levels: [{ colorSaturation: [0.4, 0.7] }],
      },
    ],
  };
}

function heatmap(
  grid: ChartGrid,
  kind: ChartKind,
  categories: string[],
  width: number,
  height: number,
  title: Title,
): Option {
  const fs = sizes(width, height).label;
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
      itemHeight: Math.max(60, Math.min(300, width - 2 * PAD - 2 * textWidth(compactNumber(max), fs) - 40)),
      itemWidth: 14,
      textStyle: { fontSize: fs },
      // The two ends of the scale, written out: a continuous visualMap shows no numbers otherwise.
      text: [compactNumber(max), compactNumber(min)],
      inRange: { color: ['#e0f3f8', '#91bfdb', '#4575b4', '#313695'] },
    },
    series: [
      {
        type: 'heatmap',
        name: grid.totals[0],
        data,
        label: {
          show: band >= 44 && cellH >= fs + 4,
          formatter: COMPACT_VALUE,
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

function radar(
  kind: ChartKind,
  categories: string[],
  series: Series[],
  width: number,
  height: number,
  title: Title,
): Option {
  const fs = sizes(width, height).label;
  const names = series.map((s) => s.name);
  const avail = height - title.height - PAD;
  const legend = series.length > 1 ? planLegend(names, width, avail, fs) : undefined;
  if (series.length > 1 && !legend)
    throw tooMany(kind, 'series', names.length, legendCapacity(names, width, avail, fs), width, height, 'columnLimit');
  const boxW = width - 2 * PAD - (legend?.side === 'right' ? legend.size : 0);
  const boxH = height - title.height - PAD - (legend?.side === 'bottom' ? legend.size : 0);
  const nameCap = Math.min(Math.max(...categories.map((c) => textWidth(c, fs))), Math.floor(boxW * 0.22));
  const nameGap = 6;
  const radius = Math.min(boxW / 2 - nameCap - nameGap - 4, boxH / 2 - lineHeight(fs) - nameGap - 4);
  // An axis name needs its line of text around the rim, and a few letters at least.
  const limit =
    radius < 20 || nameCap < Math.min(textWidth('Abcd…', fs), Math.max(...categories.map((c) => textWidth(c, fs))))
      ? 0
      : Math.floor((2 * Math.PI * (radius + fs)) / (fs * 1.6));
  if (categories.length > limit) throw tooMany(kind, 'categories', categories.length, limit, width, height, 'rowLimit');
  const values = series.flatMap((s) => s.data.filter(finite));
  const max = Math.max(1, ...values) * 1.05;
  const min = Math.min(0, ...values);
  return {
    ...base(title, palette(series.length)),
    legend: legend ? { ...legend.option, data: names } : undefined,
    radar: {
      center: [PAD + boxW / 2, title.height + boxH / 2],
      radius,
      // Radar axis names take no width limit in ECharts 5: shortened here.
      indicator: categories.map((name) => ({ name: truncateText(name, nameCap, fs), max, min })),
      axisName: { color: '#333', fontSize: fs },
      axisNameGap: nameGap,
      axisLabel: { show: false },
      splitNumber: 4,
    },
    series: [
      {
        type: 'radar',
        symbolSize: 4,
        data: series.map((s) => ({ name: s.name, value: s.data.map((v) => (finite(v) ? v : 0)) })),
        areaStyle: { opacity: 0.12 },
      },
    ],
  };
}

function scatter(grid: ChartGrid, kind: ChartKind, width: number, height: number, title: Title): Option {
  const fs = sizes(width, height).label;
  const points = grid.rowTotals
    .filter((t) => finite(t[0]) && finite(t[1]))
    .map((t) => [t[0], t[1]] as [number, number]);
  const yWidth = valueLabelWidth(
    points.map((p) => p[1]),
    fs,
  );
  const xWidth = valueLabelWidth(
    points.map((p) => p[0]),
    fs,
  );
  const nameH = lineHeight(fs);
  const left = PAD + nameH + 6 + yWidth + 8;
  const bottom = PAD + nameH + 6 + lineHeight(fs) + 8;
  const plotW = width - left - PAD - xWidth / 2;
  const plotH = height - title.height - bottom;
  return {
    ...base(title, palette(1)),
    grid: { left, right: PAD + Math.ceil(xWidth / 2), top: title.height, bottom, containLabel: false },
    xAxis: valueAxis(fitText(grid.totals[0], plotW, fs, MIN_FONT).text, fs, xWidth, 8 + lineHeight(fs) + 6, {
      scale: true,
      splitNumber: ticks(plotW, fs, xWidth, false),
    }),
    yAxis: valueAxis(fitText(grid.totals[1], plotH, fs, MIN_FONT).text, fs, yWidth, yWidth + 8 + 6, {
      scale: true,
      splitNumber: ticks(plotH, fs, yWidth, true),
    }),
    series: [{ type: 'scatter', name: kind.name, data: points, symbolSize: points.length > 300 ? 4 : 7 }],
  };
}

/** Column, bar, line, area and their combinations: a category axis against one or two value axes. */
function cartesian(
  grid: ChartGrid,
  kind: ChartKind,
  categoriesIn: string[],
  seriesIn: Series[],
  width: number,
  height: number,
  title: Title,
): Option {
  const fs = sizes(width, height).label;
  let categories = categoriesIn;
  let series = seriesIn;
  const horizontal = kind.family === 'bar';
  const dual = kind.family === 'combiDY' || kind.family === 'pareto';
  let extraSeries: Option[] = [];

  if (kind.family === 'pareto') {
    // Largest first, with the running share of the total on the right axis.
    const order = categories
      .map((_, i) => i)
      .filter((i) => finite(series[0].data[i]))
      .sort((a, b) => (series[0].data[b] ?? 0) - (series[0].data[a] ?? 0));
    categories = order.map((i) => categoriesIn[i]);
    const values = order.map((i) => series[0].data[i] as number);
    series = [{ ...series[0], data: values }];
    const total = values.reduce((a, v) => a + Math.max(0, v), 0);
    let run = 0;
    const cumulative = values.map((v) => {
      run += Math.max(0, v);
      return total > 0 ? Math.round((run / total) * 1000) / 10 : 0;
    });
    extraSeries = [{ type: 'line', name: 'Cumulative %', yAxisIndex: 1, data: cumulative, symbolSize: 4 }];
  }
  if (kind.family === 'waterfall') categories = [...categories, 'Total'];

  const names = [...series.map((s) => s.name), ...extraSeries.map((s) => String(s.name))];
  const avail = height - title.height - PAD;
  const legend = names.length > 1 ? planLegend(names, width, avail, fs) : undefined;
  if (names.length > 1 && !legend)
    throw tooMany(kind, 'series', names.length, legendCapacity(names, width, avail, fs), width, height, 'columnLimit');

  const primary = dual ? series.filter((s) => s.measure === 0) : series;
  const secondary = kind.family === 'combiDY' ? series.filter((s) => s.measure !== 0) : [];
  const valuesOf = (ss: Series[]) => ss.flatMap((s) => s.data.filter(finite));
  let primaryValues = valuesOf(primary);
  if (kind.stacked) {
    // A stack reaches the sum of its layers: the axis labels must be as wide as that.
    primaryValues = categories.flatMap((_, i) => {
      const pos = series.reduce((a, s) => a + Math.max(0, s.data[i] ?? 0), 0);
      const neg = series.reduce((a, s) => a + Math.min(0, s.data[i] ?? 0), 0);
      return [pos, neg];
    });
  }
  if (kind.family === 'waterfall') {
    let run = 0;
    primaryValues = [0, ...series[0].data.map((v) => (run += v ?? 0))];
  }
  const vWidth = valueLabelWidth(primaryValues, fs);
  const v2Width =
    kind.family === 'pareto'
      ? textWidth('100%', fs) + 6
      : secondary.length
        ? valueLabelWidth(valuesOf(secondary), fs)
        : 0;
  const nameH = lineHeight(fs);
  // Axis names repeat the title; a small image keeps the room for its plot instead.
  const named = width >= 300 && height >= 300;
  const valueName = named && (dual || grid.totals.length === 1 || !kind.multiSeries) ? grid.totals[0] : '';
  const value2Name = !named ? '' : kind.family === 'pareto' ? 'Cumulative %' : secondary.length ? grid.totals[1] : '';
  const catName = named ? grid.rowFields.join(' / ') : '';
  const legendBottom = legend?.side === 'bottom' ? legend.size : 0;
  const legendRight = legend?.side === 'right' ? legend.size : 0;
  const maxCat = Math.max(10, ...categories.map((c) => textWidth(c, fs)));
  const n = Math.max(1, categories.length);
  const perCategory =
    kind.family === 'column' || kind.family === 'bar' || kind.family === 'combi'
      ? kind.stacked
        ? 1
        : primary.length
      : 1;

  let gridBox: { left: number; right: number; top: number; bottom: number };
  let categoryAxis: Option;
  let valueAxes: Option[];
  if (horizontal) {
    const cap = Math.min(maxCat, Math.floor(width * 0.3));
    const left = PAD + (catName ? nameH + 6 : 0) + cap + 8;
    const right = PAD + legendRight + Math.ceil(vWidth / 2);
    const bottom = PAD + legendBottom + (valueName ? nameH + 6 : 0) + lineHeight(fs) + 8;
    const plotH = height - title.height - bottom;
    const plotW = width - left - right;
    const limit = Math.floor(plotH / (perCategory + 1));
    if (categories.length > limit)
      throw tooMany(kind, 'categories', categories.length, limit, width, height, 'rowLimit');
    gridBox = { left, right, top: title.height + Math.ceil(fs / 2), bottom };
    categoryAxis = {
      type: 'category',
      data: categories,
      name: fitText(catName, plotH, fs, MIN_FONT).text,
      nameLocation: 'middle',
      nameGap: cap + 8 + 6,
      nameTextStyle: { fontSize: fs, color: '#333' },
      axisLabel: { interval: 'auto', hideOverlap: true, fontSize: fs, width: cap, overflow: 'truncate' },
      // Horizontal bars read top-down in row order, like the table.
      inverse: true,
    };
    valueAxes = [
      valueAxis(fitText(valueName, plotW, fs, MIN_FONT).text, fs, vWidth, 8 + lineHeight(fs) + 6, {
        splitNumber: ticks(plotW, fs, vWidth, false),
      }),
    ];
  } else {
    const left0 = PAD + (valueName ? nameH + 6 : 0) + vWidth + 8;
    const right0 = PAD + legendRight + (v2Width ? v2Width + 8 + (value2Name ? nameH + 6 : 0) : 4);
    const plotW = width - left0 - right0;
    const band = plotW / n;
    const limit = Math.floor(plotW / (perCategory + 1));
    if (categories.length > limit)
      throw tooMany(kind, 'categories', categories.length, limit, width, height, 'rowLimit');
    const rotate = maxCat > band - 4;
    const cap = rotate ? Math.min(maxCat, Math.floor((height * 0.22) / SIN45)) : Math.max(10, Math.floor(band - 4));
    // A slanted first label reaches left of its tick by its projected width.
    const left = Math.max(left0, rotate ? Math.ceil(PAD + cap * SIN45 + fs - band / 2) : left0);
    const labelRegion = rotate ? Math.ceil(cap * SIN45 + fs * SIN45 + 2) : lineHeight(fs);
    const bottom = PAD + legendBottom + (catName ? nameH + 6 : 0) + labelRegion + 8;
    const plotH = height - title.height - Math.ceil(fs / 2) - bottom;
    gridBox = { left, right: right0, top: title.height + Math.ceil(fs / 2), bottom };
    categoryAxis = {
      type: 'category',
      data: categories,
      name: fitText(catName, width - left - right0, fs, MIN_FONT).text,
      nameLocation: 'middle',
      nameGap: labelRegion + 8 + 6,
      nameTextStyle: { fontSize: fs, color: '#333' },
      axisLabel: {
        interval: 'auto',
        hideOverlap: true,
        fontSize: fs,
        rotate: rotate ? 45 : 0,
        width: cap,
        overflow: 'truncate',
      },
    };
    const split = ticks(plotH, fs, vWidth, true);
    valueAxes = [
      valueAxis(fitText(valueName, plotH, fs, MIN_FONT).text, fs, vWidth, vWidth + 8 + 6, { splitNumber: split }),
    ];
    if (v2Width) {
      valueAxes.push(
        kind.family === 'pareto'
          ? {
              ...valueAxis(fitText(value2Name, plotH, fs, MIN_FONT).text, fs, v2Width, v2Width + 8 + 6, {
                min: 0,
                max: 100,
                splitNumber: split,
                splitLine: { show: false },
                alignTicks: false,
              }),
              axisLabel: { formatter: '{value}%', fontSize: fs },
            }
          : valueAxis(fitText(value2Name, plotH, fs, MIN_FONT).text, fs, v2Width, v2Width + 8 + 6, {
              splitNumber: split,
              splitLine: { show: false },
              alignTicks: false,
            }),
      );
    }
  }

  const drawn = (s: Series, i: number): Option => {
    const asBar =
      kind.family === 'column' ||
      kind.family === 'bar' ||
      kind.family === 'pareto' ||
      ((kind.family === 'combi' || kind.family === 'combiDY') &&
        s.measure === 0 &&
        (kind.family === 'combiDY' || i === 0));
    return {
      type: asBar ? 'bar' : 'line',
      name: s.name,
      yAxisIndex: kind.family === 'combiDY' && s.measure !== 0 ? 1 : undefined,
      // In a stack a missing cell is nothing on top of the others, not a hole in every layer above it;
      // elsewhere it is a gap.
      data: kind.stacked ? s.data.map((v) => v ?? 0) : s.data,
      stack: kind.stacked ? 'total' : undefined,
      smooth: kind.smooth || undefined,
      areaStyle: kind.family === 'area' ? { opacity: kind.stacked ? 0.85 : 0.6 } : undefined,
      showSymbol: !asBar && categories.length <= 50,
      connectNulls: false,
      barMaxWidth: 60,
    };
  };

  let seriesOut: Option[];
  if (kind.family === 'waterfall') {
    // A floating bar from the running total before to after each step: a candlestick box draws exactly
    // that, across zero too; rises in green, falls in red, the total from zero.
    let run = 0;
    const boxes = series[0].data.map((v) => {
      const from = run;
      run += v ?? 0;
      return [from, run, Math.min(from, run), Math.max(from, run)];
    });
    boxes.push([0, run, Math.min(0, run), Math.max(0, run)]);
    seriesOut = [
      {
        type: 'candlestick',
        name: series[0].name,
        data: boxes,
        barMaxWidth: 60,
        itemStyle: { color: '#3ba272', color0: '#ee6666', borderColor: '#3ba272', borderColor0: '#ee6666' },
      },
    ];
  } else {
    seriesOut = [...series.map(drawn), ...extraSeries];
  }

  return {
    ...base(title, palette(names.length)),
    legend: legend ? { ...legend.option, data: names } : undefined,
    grid: { ...gridBox, containLabel: false },
    xAxis: horizontal ? valueAxes[0] : { ...categoryAxis, boundaryGap: true },
    yAxis: horizontal ? { ...categoryAxis, boundaryGap: true } : valueAxes.length > 1 ? valueAxes : valueAxes[0],
    series: seriesOut,
  };
}

import { axisNumbers, type AxisNumbers } from '../axis-numbers';
import type { ChartGrid } from '../chart-grid';
import type { ChartKind } from '../chart-types';
import { fitText, textWidth } from '../text-metrics';
import {
  MIN_FONT,
  PAD,
  SIN45,
  base,
  finite,
  lineHeight,
  palette,
  sizes,
  ticks,
  tooMany,
  valueAxis,
  valueLabelWidth,
  type Option,
  type Series,
  type Title,
} from './layout';
import { seriesLegend } from './legend';

/** The rows as the family draws them, which need not be the grid's order or count. */
interface Plotted {
  categories: string[];
  series: Series[];
  /** Drawn after the grid's own series, and named in the legend with them. */
  extra: Option[];
}

/** Everything the axes of either orientation are sized from, measured once. */
interface AxisPlan {
  kind: ChartKind;
  categories: string[];
  width: number;
  height: number;
  title: Title;
  fs: number;
  vWidth: number;
  numbers: AxisNumbers;
  numbers2: AxisNumbers;
  /** 0 when there is no second value axis. */
  v2Width: number;
  valueName: string;
  value2Name: string;
  catName: string;
  legendBottom: number;
  legendRight: number;
  maxCat: number;
  /** Bars side by side in one category: each needs its pixel, and one more for the gap. */
  perCategory: number;
}

interface Axes {
  gridBox: { left: number; right: number; top: number; bottom: number };
  categoryAxis: Option;
  valueAxes: Option[];
}

function pareto(categoriesIn: string[], series: Series[]): Plotted {
  // Largest first, with the running share of the total on the right axis. Negative values (losses,
  // refunds) count by their size, as a Pareto of contributions must: the line then says so, instead of
  // staying flat at 0 % over a total that is not positive.
  const data = series[0].data;
  const order = categoriesIn
    .map((_, i) => i)
    .filter((i) => finite(data[i]))
    .sort((a, b) => Math.abs(data[b] ?? 0) - Math.abs(data[a] ?? 0));
  const values = order.map((i) => data[i] as number);
  const total = values.reduce((a, v) => a + Math.abs(v), 0);
  let run = 0;
  const cumulative = values.map((v) => {
    run += Math.abs(v);
    return total > 0 ? Math.round((run / total) * 1000) / 10 : 0;
  });
  const name = values.some((v) => v < 0) ? 'Cumulative % of sizes (|value|)' : 'Cumulative %';
  return {
    categories: order.map((i) => categoriesIn[i]),
    series: [{ ...series[0], data: values }],
    extra: [{ type: 'line', name, yAxisIndex: 1, data: cumulative, symbolSize: 4 }],
  };
}

function plotted(kind: ChartKind, categories: string[], series: Series[]): Plotted {
  if (kind.family === 'pareto') return pareto(categories, series);
  if (kind.family === 'waterfall') return { categories: [...categories, 'Total'], series, extra: [] };
  return { categories, series, extra: [] };
}

const valuesOf = (ss: Series[]) => ss.flatMap((s) => s.data.filter(finite));

/** The values the primary axis must reach, which are not always the cells themselves. */
function primaryValues(kind: ChartKind, categories: string[], series: Series[], primary: Series[]): number[] {
  if (kind.family === 'waterfall') {
    let run = 0;
    return [0, ...series[0].data.map((v) => (run += v ?? 0))];
  }
  if (kind.stacked) {
    // A stack reaches the sum of its layers: the axis labels must be as wide as that.
    return categories.flatMap((_, i) => {
      const pos = primary.reduce((a, s) => a + Math.max(0, s.data[i] ?? 0), 0);
      const neg = primary.reduce((a, s) => a + Math.min(0, s.data[i] ?? 0), 0);
      return [pos, neg];
    });
  }
  return valuesOf(primary);
}

function axisNames(
  grid: ChartGrid,
  kind: ChartKind,
  width: number,
  height: number,
  dual: boolean,
  secondary: Series[],
): { valueName: string; value2Name: string; catName: string } {
  // Axis names repeat the title; a small image keeps the room for its plot instead.
  const named = width >= 300 && height >= 300;
  const valueName = named && (dual || grid.totals.length === 1 || !kind.multiSeries) ? grid.totals[0] : '';
  // Where one legend entry stands for a column under both totals, the second axis names how its total looks.
  const look =
    grid.columnFields.length && kind.family !== 'combiDY' ? (drawnAsLine(kind) ? ' (dashed)' : ' (pale)') : '';
  const value2Name = !named
    ? ''
    : kind.family === 'pareto'
      ? 'Cumulative %'
      : secondary.length
        ? `${grid.totals[1]}${look}`
        : '';
  const catName = named ? grid.rowFields.join(' / ') : '';
  return { valueName, value2Name, catName };
}

function horizontalAxes(p: AxisPlan): Axes {
  const { kind, categories, width, height, title, fs, vWidth, v2Width, valueName, value2Name, catName } = p;
  const nameH = lineHeight(fs);
  const cap = Math.min(p.maxCat, Math.floor(width * 0.3));
  const left = PAD + (catName ? nameH + 6 : 0) + cap + 8;
  const right = PAD + p.legendRight + Math.ceil(Math.max(vWidth, v2Width) / 2);
  const bottom = PAD + p.legendBottom + (valueName ? nameH + 6 : 0) + lineHeight(fs) + 8;
  // A second value axis runs along the top, its labels and name above the plot.
  const top2 = v2Width ? lineHeight(fs) + 8 + (value2Name ? nameH + 6 : 0) : 0;
  const plotH = height - title.height - top2 - bottom;
  const plotW = width - left - right;
  const limit = Math.floor(plotH / (p.perCategory + 1));
  if (categories.length > limit) throw tooMany(kind, 'categories', categories.length, limit, width, height, 'rowLimit');
  const valueAxes = [
    valueAxis(
      fitText(valueName, plotW, fs, MIN_FONT).text,
      fs,
      vWidth,
      8 + lineHeight(fs) + 6,
      { splitNumber: ticks(plotW, fs, vWidth, false) },
      p.numbers,
    ),
  ];
  if (v2Width)
    valueAxes.push(
      valueAxis(
        fitText(value2Name, plotW, fs, MIN_FONT).text,
        fs,
        v2Width,
        8 + lineHeight(fs) + 6,
        {
          position: 'top',
          splitNumber: ticks(plotW, fs, v2Width, false),
          splitLine: { show: false },
          alignTicks: false,
        },
        p.numbers2,
      ),
    );
  return {
    gridBox: { left, right, top: title.height + Math.ceil(fs / 2) + top2, bottom },
    categoryAxis: {
      type: 'category',
      data: categories,
      name: fitText(catName, plotH, fs, MIN_FONT).text,
      nameLocation: 'middle',
      nameGap: cap + 8 + 6,
      nameTextStyle: { fontSize: fs, color: '#333' },
      axisLabel: { interval: 'auto', hideOverlap: true, fontSize: fs, width: cap, overflow: 'truncate' },
      // Horizontal bars read top-down in row order, like the table.
      inverse: true,
    },
    valueAxes,
  };
}

function verticalAxes(p: AxisPlan): Axes {
  const { kind, categories, width, height, title, fs, vWidth, v2Width, valueName, value2Name, catName } = p;
  const nameH = lineHeight(fs);
  const n = Math.max(1, categories.length);
  const left0 = PAD + (valueName ? nameH + 6 : 0) + vWidth + 8;
  const right0 = PAD + p.legendRight + (v2Width ? v2Width + 8 + (value2Name ? nameH + 6 : 0) : 4);
  const plotW = width - left0 - right0;
  const band = plotW / n;
  const limit = Math.floor(plotW / (p.perCategory + 1));
  if (categories.length > limit) throw tooMany(kind, 'categories', categories.length, limit, width, height, 'rowLimit');
  const rotate = p.maxCat > band - 4;
  const cap = rotate ? Math.min(p.maxCat, Math.floor((height * 0.22) / SIN45)) : Math.max(10, Math.floor(band - 4));
  // A slanted first label reaches left of its tick by its projected width.
  const left = Math.max(left0, rotate ? Math.ceil(PAD + cap * SIN45 + fs - band / 2) : left0);
  const labelRegion = rotate ? Math.ceil(cap * SIN45 + fs * SIN45 + 2) : lineHeight(fs);
  const bottom = PAD + p.legendBottom + (catName ? nameH + 6 : 0) + labelRegion + 8;
  const plotH = height - title.height - Math.ceil(fs / 2) - bottom;
  const split = ticks(plotH, fs, vWidth, true);
  const valueAxes = [
    valueAxis(
      fitText(valueName, plotH, fs, MIN_FONT).text,
      fs,
      vWidth,
      vWidth + 8 + 6,
      { splitNumber: split },
      p.numbers,
    ),
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
        : valueAxis(
            fitText(value2Name, plotH, fs, MIN_FONT).text,
            fs,
            v2Width,
            v2Width + 8 + 6,
            { splitNumber: split, splitLine: { show: false }, alignTicks: false },
            p.numbers2,
          ),
    );
  }
  return {
    gridBox: { left, right: right0, top: title.height + Math.ceil(fs / 2), bottom },
    categoryAxis: {
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
    },
    valueAxes,
  };
}

/** Lines stay lines for a second total (dashed); bars and areas turn pale. */
function drawnAsLine(kind: ChartKind): boolean {
  return kind.family === 'line';
}

function drawer(kind: ChartKind, categories: string[], twoAxes: boolean, colours: string[], names: string[]) {
  return (s: Series, i: number): Option => {
    const asBar =
      kind.family === 'column' ||
      kind.family === 'bar' ||
      kind.family === 'pareto' ||
      ((kind.family === 'combi' || kind.family === 'combiDY') &&
        s.measure === 0 &&
        (kind.family === 'combiDY' || i === 0));
    const onSecond = (kind.family === 'combiDY' || twoAxes) && s.measure !== 0;
    const second = twoAxes && s.measure !== 0 && kind.family !== 'combiDY';
    // A column under both totals keeps one colour (its legend entry toggles both).
    const colour = twoAxes ? colours[names.indexOf(s.name) % colours.length] : undefined;
    const opacity = second && !drawnAsLine(kind) ? 0.45 : undefined;
    return {
      type: asBar ? 'bar' : 'line',
      name: s.name,
      ...(kind.family === 'bar' ? { xAxisIndex: onSecond ? 1 : undefined } : { yAxisIndex: onSecond ? 1 : undefined }),
      // In a stack a missing cell is nothing on top of the others, not a hole in every layer above it;
      // elsewhere it is a gap.
      data: kind.stacked ? s.data.map((v) => v ?? 0) : s.data,
      // Each total stacks on its own axis: a count piled on a median means nothing.
      stack: kind.stacked ? `total ${s.measure}` : undefined,
      smooth: kind.smooth || undefined,
      itemStyle: colour || opacity ? { color: colour, opacity } : undefined,
      lineStyle:
        colour || second ? { color: colour, type: second && drawnAsLine(kind) ? 'dashed' : undefined } : undefined,
      areaStyle:
        kind.family === 'area' ? { opacity: second ? 0.25 : kind.stacked ? 0.85 : 0.6, color: colour } : undefined,
      showSymbol: !asBar && categories.length <= 50,
      connectNulls: false,
      barMaxWidth: 60,
    };
  };
}

function waterfallSeries(s: Series): Option[] {
  // A floating bar from the running total before to after each step: a candlestick box draws exactly
  // that, across zero too; rises in green, falls in red, the total from zero.
  let run = 0;
  const boxes = s.data.map((v) => {
    const from = run;
    run += v ?? 0;
    return [from, run, Math.min(from, run), Math.max(from, run)];
  });
  boxes.push([0, run, Math.min(0, run), Math.max(0, run)]);
  return [
    {
      type: 'candlestick',
      name: s.name,
      data: boxes,
      barMaxWidth: 60,
      itemStyle: { color: '#3ba272', color0: '#ee6666', borderColor: '#3ba272', borderColor0: '#ee6666' },
    },
  ];
}

/** Column, bar, line, area and their combinations: a category axis against one or two value axes. */
export function cartesian(
  grid: ChartGrid,
  kind: ChartKind,
  categoriesIn: string[],
  seriesIn: Series[],
  width: number,
  height: number,
  title: Title,
): Option {
  const fs = sizes(width, height).label;
  const horizontal = kind.family === 'bar';
  // Two totals on a multi-series type: the second on its own value axis, its scale (a median beside a
  // count) its own.
  const twoAxes = kind.multiSeries && kind.family !== 'combiDY' && grid.totals.length === 2;
  const dual = kind.family === 'combiDY' || kind.family === 'pareto' || twoAxes;
  const { categories, series, extra } = plotted(kind, categoriesIn, seriesIn);

  const names = [...new Set([...series.map((s) => s.name), ...extra.map((s) => String(s.name))])];
  const legend = seriesLegend(kind, names, width, height, height - title.height - PAD, fs);

  const primary = dual ? series.filter((s) => s.measure === 0) : series;
  const secondary = kind.family === 'combiDY' || twoAxes ? series.filter((s) => s.measure !== 0) : [];
  const numbers = axisNumbers(grid, [...new Set(primary.map((s) => s.measure))]);
  const numbers2 = axisNumbers(grid, [...new Set(secondary.map((s) => s.measure))]);
  const vWidth = valueLabelWidth(primaryValues(kind, categories, series, primary), fs, numbers);
  const v2Width =
    kind.family === 'pareto'
      ? textWidth('100%', fs) + 6
      : secondary.length
        ? valueLabelWidth(primaryValues(kind, categories, secondary, secondary), fs, numbers2)
        : 0;
  const plan: AxisPlan = {
    kind,
    categories,
    width,
    height,
    title,
    fs,
    vWidth,
    v2Width,
    numbers,
    numbers2,
    ...axisNames(grid, kind, width, height, dual, secondary),
    legendBottom: legend?.side === 'bottom' ? legend.size : 0,
    legendRight: legend?.side === 'right' ? legend.size : 0,
    maxCat: Math.max(10, ...categories.map((c) => textWidth(c, fs))),
    perCategory:
      kind.family === 'column' || kind.family === 'bar' || kind.family === 'combi'
        ? kind.stacked
          ? twoAxes
            ? 2
            : 1
          : series.length
        : 1,
  };
  const { gridBox, categoryAxis, valueAxes } = horizontal ? horizontalAxes(plan) : verticalAxes(plan);
  const colours = palette(names.length);

  const seriesOut =
    kind.family === 'waterfall'
      ? waterfallSeries(series[0])
      : [...series.map(drawer(kind, categories, twoAxes, colours, names)), ...extra];

  return {
    ...base(title, colours),
    legend: legend ? { ...legend.option, data: names } : undefined,
    grid: { ...gridBox, containLabel: false },
    xAxis: horizontal ? (valueAxes.length > 1 ? valueAxes : valueAxes[0]) : { ...categoryAxis, boundaryGap: true },
    yAxis: horizontal ? { ...categoryAxis, boundaryGap: true } : valueAxes.length > 1 ? valueAxes : valueAxes[0],
    series: seriesOut,
  };
}

import { AppError } from '@quarry/errors';
import type { ChartGrid } from '../chart-grid';
import type { ChartKind } from '../chart-types';
import { PLAIN_NUMBERS, type AxisNumbers } from '../axis-numbers';
import { fitText, textWidth } from '../text-metrics';

/** Blank margin kept along every edge of the image: nothing is drawn closer than this. */
export const PAD = 10;
const FONT = 'DejaVu Sans, Liberation Sans, sans-serif';
/** Below this a label cannot be read and is left out rather than drawn illegibly. */
export const MIN_FONT = 9;
export const SIN45 = Math.SQRT1_2;

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

export interface Series {
  name: string;
  /** Which total (measure) the series draws. */
  measure: number;
  data: Array<number | null>;
}

export type Option = Record<string, unknown>;

export const finite = (v: number | null | undefined): v is number => typeof v === 'number' && Number.isFinite(v);

export const lineHeight = (fontSize: number) => Math.ceil(fontSize * 1.3);

/** Font sizes follow the image: a 300 px chart cannot spend 16 px on its title. */
export function sizes(width: number, height: number) {
  const small = Math.min(width, height) < 320;
  return { title: small ? 13 : 16, sub: small ? 10 : 12, label: small ? 10 : 12 };
}

export interface Title {
  option: Option;
  /** Space the title takes from the top edge, with the gap below it. */
  height: number;
}

const TITLE_GAP = 8;

export function planTitle(grid: ChartGrid, kind: ChartKind, subtitle: string, width: number, height: number): Title {
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
  // The gap clears the title's descenders, which ECharts' text box leaves out ("by" touched the subtitle).
  const h = PAD + lineHeight(main.fontSize) + (sub ? TITLE_GAP + lineHeight(sub.fontSize) : 0);
  return {
    option: {
      text: main.text,
      subtext: sub?.text ?? '',
      left: 'center',
      top: PAD,
      itemGap: TITLE_GAP,
      textStyle: { fontSize: main.fontSize, fontWeight: 'bold', color: '#333' },
      subtextStyle: { fontSize: sub?.fontSize ?? fs.sub, color: '#666' },
    },
    height: h + 8,
  };
}

export function tooMany(
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

export function noPositive(kind: ChartKind, measure: string): AppError {
  return AppError.invalid(
    `A ${kind.name} draws parts of a whole: positive values only, and ${measure} has none here; use a column or bar type`,
  );
}

/** The widest compact tick label an axis over these values can show, with room for one more digit. */
export function valueLabelWidth(values: number[], fontSize: number, numbers: AxisNumbers = PLAIN_NUMBERS): number {
  const lo = Math.min(0, ...values);
  const hi = Math.max(0, ...values);
  const samples = [lo, hi, lo * 1.25, hi * 1.25, (hi - lo) / 7];
  return Math.max(...samples.map((v) => textWidth(numbers.text(v), fontSize))) + Math.ceil(fontSize * 0.7);
}

/** Ticks far enough apart for their labels: a line of text plus as much again vertically, a label and a half across. */
export function ticks(length: number, fontSize: number, labelWidth: number, vertical: boolean): number {
  return Math.max(1, Math.min(8, Math.floor(length / (vertical ? fontSize * 2.6 : labelWidth * 1.6))));
}

export function valueAxis(
  name: string,
  fontSize: number,
  labelWidth: number,
  nameGap: number,
  extra: Option = {},
  numbers: AxisNumbers = PLAIN_NUMBERS,
): Option {
  return {
    type: 'value',
    name,
    nameLocation: 'middle',
    nameGap,
    nameTextStyle: { fontSize, color: '#333' },
    axisLabel: { ...numbers.formatter, fontSize, width: labelWidth, overflow: 'truncate', hideOverlap: true },
    splitLine: { lineStyle: { color: '#e6e6e6' } },
    ...extra,
  };
}

export const base = (title: Title, colours: string[]): Option => ({
  animation: false,
  backgroundColor: '#ffffff',
  color: colours,
  title: title.option,
  textStyle: { fontFamily: FONT },
});

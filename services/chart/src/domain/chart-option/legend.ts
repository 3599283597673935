import type { ChartKind } from '../chart-types';
import { textWidth } from '../text-metrics';
import { MIN_FONT, PAD, lineHeight, tooMany, type Option } from './layout';

const LEGEND_SYMBOL = 18;
const LEGEND_SYMBOL_GAP = 5;
const LEGEND_GAP = 10;
const BESIDE_GAP = 5;

export interface Legend {
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
export function planLegend(names: string[], width: number, availHeight: number, baseFont: number): Legend | undefined {
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
export function legendCapacity(names: string[], width: number, availHeight: number, baseFont: number): number {
  let lo = 0;
  let hi = names.length;
  while (lo < hi) {
    const mid = Math.ceil((lo + hi) / 2);
    if (planLegend(names.slice(0, mid), width, availHeight, baseFont)) lo = mid;
    else hi = mid - 1;
  }
  return lo;
}

/** A lone series is named by the title; two or more need a legend, and a 400 when it cannot hold them. */
export function seriesLegend(
  kind: ChartKind,
  names: string[],
  width: number,
  height: number,
  availHeight: number,
  baseFont: number,
): Legend | undefined {
  if (names.length <= 1) return undefined;
  const legend = planLegend(names, width, availHeight, baseFont);
  if (!legend)
    throw tooMany(
      kind,
      'series',
      names.length,
      legendCapacity(names, width, availHeight, baseFont),
      width,
      height,
      'columnLimit',
    );
  return legend;
}

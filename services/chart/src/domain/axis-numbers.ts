import {
  FORMAT_LOCALE,
  QUARRY_FORMATTER_KEY,
  QUARRY_NUMBER_FORMAT_KEY,
  QUARRY_SCALE_KEY,
  type ChartNumberFormat,
} from '@quarry/contract';
import type { ChartGrid } from './chart-grid';
import { COMPACT, COMPACT_VALUE } from './formatters';
import { compactNumber } from './text-metrics';

/**
 * How an axis (or a series' labels) writes numbers: the text, to measure labels here as the drawing
 * will write them, and the setting that names the formatter in the option.
 */
export interface AxisNumbers {
  text(v: number): string;
  formatter: Record<string, unknown>;
  /** For series labels, whose formatter gets the data item. */
  itemFormatter: Record<string, unknown>;
}

export const PLAIN_NUMBERS: AxisNumbers = { text: compactNumber, formatter: COMPACT, itemFormatter: COMPACT_VALUE };

/**
 * The numbers of the given totals: their common format, made compact with three significant digits
 * as plain axes are (€1.2M, 25%, 12 km), so labels stay short; plain compact numbers when the totals
 * have no format or different ones.
 */
export function axisNumbers(grid: ChartGrid, measures: readonly number[]): AxisNumbers {
  const formats = measures.map((m) => grid.numberFormats?.[m] ?? null);
  const first = formats[0];
  if (!first || formats.some((f) => JSON.stringify(f) !== JSON.stringify(first))) return PLAIN_NUMBERS;
  const options: Intl.NumberFormatOptions = {
    ...first.options,
    notation: 'compact',
    minimumFractionDigits: undefined,
    maximumFractionDigits: undefined,
    maximumSignificantDigits: 3,
  };
  const compactFormat: ChartNumberFormat = { options: JSON.parse(JSON.stringify(options)), scale: first.scale };
  let intl: Intl.NumberFormat;
  try {
    // The locale the totals' formats are checked and written in (the table's too), not one of its own.
    intl = new Intl.NumberFormat(FORMAT_LOCALE, compactFormat.options);
  } catch {
    return PLAIN_NUMBERS;
  }
  const named = (name: 'number' | 'numberValue') => ({
    [QUARRY_FORMATTER_KEY]: name,
    [QUARRY_NUMBER_FORMAT_KEY]: compactFormat.options,
    [QUARRY_SCALE_KEY]: compactFormat.scale,
  });
  return {
    text: (v) => (Number.isFinite(v) ? intl.format(v * compactFormat.scale) : ''),
    formatter: named('number'),
    itemFormatter: named('numberValue'),
  };
}

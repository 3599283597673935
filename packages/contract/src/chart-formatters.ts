/*
 * ECharts formatters are functions, which neither JSON nor a queue can carry. Where Quarry prints
 * numbers compactly (1.2K, 3.5M, 1.25B), the ECharts settings they apply to (an axisLabel, a series
 * label) name the formatter under `quarryFormatter` instead. ECharts ignores the key and prints its own
 * default numbers; whoever draws the option the way Quarry does (the chart workers, the console, a
 * client using @quarry/client's reviveChartOption) sets `formatter` from it.
 */
export const QUARRY_FORMATTER_KEY = 'quarryFormatter';

/** Each name and what its function prints, as the OpenRPC document and the client's README say it. */
export const CHART_FORMATTERS = {
  compact:
    "the number in compact notation with at most three significant digits (Intl.NumberFormat('en', { notation: 'compact', maximumSignificantDigits: 3 }))",
  compactValue: 'as compact, of the last number of the data item’s value (a series label’s formatter gets the item)',
  number:
    "a total's format: Intl.NumberFormat('en-US', quarryNumberFormat) of the number times quarryScale (1 when absent)",
  numberValue: 'as number, of the last number of the data item’s value',
} as const;

/** Beside `quarryFormatter: "number"` or `"numberValue"`: the Intl options, and the factor applied first. */
export const QUARRY_NUMBER_FORMAT_KEY = 'quarryNumberFormat';
export const QUARRY_SCALE_KEY = 'quarryScale';

export type ChartFormatterName = keyof typeof CHART_FORMATTERS;

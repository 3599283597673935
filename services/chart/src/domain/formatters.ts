import { QUARRY_FORMATTER_KEY, type ChartFormatterName } from '@quarry/contract';

/*
 * An ECharts option crosses a queue as JSON, a browser boundary as a structured clone, and the API as
 * JSON (imageFormat "echarts"): functions survive none of them. Formatters that need code (compact
 * numbers) travel as names under `quarryFormatter` (@quarry/contract chart-formatters), set as functions
 * by whatever draws the option (@quarry/client's reviveChartOption, and the Chromium page).
 */
export const COMPACT = { [QUARRY_FORMATTER_KEY]: 'compact' } as const satisfies Record<string, ChartFormatterName>;
/** For series labels, whose formatter gets ECharts' params object: the last number of its value. */
export const COMPACT_VALUE = { [QUARRY_FORMATTER_KEY]: 'compactValue' } as const satisfies Record<
  string,
  ChartFormatterName
>;

/** What an older producer queued: the name in `formatter` itself. */
const LEGACY: Record<string, ChartFormatterName> = {
  'quarry:compact': 'compact',
  'quarry:compactValue': 'compactValue',
};

/**
 * A queued option in today's form (in place; returns it): jobs queued by an older producer during a
 * rolling upgrade named the formatter in `formatter` itself.
 */
export function upgradeLegacyFormatters<T>(option: T): T {
  const walk = (node: unknown): void => {
    if (Array.isArray(node)) node.forEach(walk);
    else if (node && typeof node === 'object') {
      const o = node as Record<string, unknown>;
      const named = typeof o.formatter === 'string' ? LEGACY[o.formatter] : undefined;
      if (named) {
        delete o.formatter;
        o[QUARRY_FORMATTER_KEY] = named;
      }
      Object.values(o).forEach(walk);
    }
  };
  walk(option);
  return option;
}

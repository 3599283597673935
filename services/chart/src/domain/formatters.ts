/*
 * An ECharts option crosses a queue as JSON and a browser boundary as a structured clone: functions
 * do not survive either. Formatters that need code (compact numbers) travel as these names and are
 * swapped for functions by whatever draws the option (see reviveFormatters and the Chromium page).
 */
export const COMPACT = 'quarry:compact';
/** For series labels, whose formatter gets ECharts' params object: the last number of its value. */
export const COMPACT_VALUE = 'quarry:compactValue';

type Compact = (v: number) => string;

function valueOf(p: unknown): number {
  if (typeof p === 'number') return p;
  const v = (p as { value?: unknown } | null)?.value;
  if (Array.isArray(v)) return Number(v[v.length - 1]);
  return Number(v);
}

/** The option with every named formatter replaced by its function (in place; returns it). */
export function reviveFormatters<T>(option: T, compact: Compact): T {
  const walk = (node: unknown): void => {
    if (Array.isArray(node)) node.forEach(walk);
    else if (node && typeof node === 'object') {
      const o = node as Record<string, unknown>;
      for (const [k, v] of Object.entries(o)) {
        if (k === 'formatter' && v === COMPACT) o[k] = (x: number) => compact(x);
        else if (k === 'formatter' && v === COMPACT_VALUE) o[k] = (p: unknown) => compact(valueOf(p));
        else walk(v);
      }
    }
  };
  walk(option);
  return option;
}

/*
 * CROSSTAB.EXECUTE with imageFormat "echarts" answers the ECharts option Quarry's images are drawn from,
 * as JSON. JSON carries no functions: where Quarry prints numbers compactly, the settings name the
 * formatter under `quarryFormatter` ("compact", "compactValue"), which ECharts itself ignores; where a
 * total has a format, "number" and "numberValue" write it with the Intl options beside the name
 * (`quarryNumberFormat`, en-US) after multiplying by `quarryScale`.
 */

/** An ECharts option as Quarry sends it (plain JSON). */
export type EChartsOptionJson = Record<string, unknown>;

export interface ReviveOptions {
  /** How a number is printed compactly; by default Intl's compact notation, three significant digits, in English. */
  compact?: (value: number) => string;
}

const COMPACT = new Intl.NumberFormat('en', { notation: 'compact', maximumSignificantDigits: 3 });
const defaultCompact = (v: number) => (Number.isFinite(v) ? COMPACT.format(v) : '');

/** The last number of a data item's value: what a series label's formatter is given. */
function valueOf(p: unknown): number {
  if (typeof p === 'number') return p;
  const v = (p as { value?: unknown } | null)?.value;
  return Number(Array.isArray(v) ? v[v.length - 1] : v);
}

/** A total's format from the setting beside the name; options Intl refuses fall back to compact numbers. */
function numberFormatter(o: Record<string, unknown>, ofItem: boolean): (x: unknown) => string {
  const scale = typeof o.quarryScale === 'number' ? o.quarryScale : 1;
  let intl: Intl.NumberFormat = COMPACT;
  try {
    intl = new Intl.NumberFormat('en-US', (o.quarryNumberFormat ?? {}) as Intl.NumberFormatOptions);
  } catch {
    // A newer server's option this runtime does not know: compact numbers still read right.
  }
  return (x) => {
    const v = ofItem ? valueOf(x) : Number(x);
    return Number.isFinite(v) ? intl.format(v * scale) : '';
  };
}

/**
 * Sets `formatter` as a function wherever the option names one under `quarryFormatter`, so that
 * `chart.setOption(reviveChartOption(result.data))` draws numbers as Quarry's PNG and SVG do. Changes the
 * option in place and returns it; names it does not know are left alone.
 */
export function reviveChartOption<T>(option: T, options: ReviveOptions = {}): T {
  const compact = options.compact ?? defaultCompact;
  const functions: Record<string, (x: unknown) => string> = {
    compact: (x) => compact(Number(x)),
    compactValue: (p) => compact(valueOf(p)),
  };
  const walk = (node: unknown): void => {
    if (Array.isArray(node)) node.forEach(walk);
    else if (node && typeof node === 'object') {
      const o = node as Record<string, unknown>;
      const named = o.quarryFormatter;
      if (named === 'number' || named === 'numberValue') o.formatter = numberFormatter(o, named === 'numberValue');
      else if (typeof named === 'string' && Object.hasOwn(functions, named)) o.formatter = functions[named];
      for (const v of Object.values(o)) walk(v);
    }
  };
  walk(option);
  return option;
}

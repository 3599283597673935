import { z } from 'zod';
import { CHART_TYPE_NAMES } from '../chart-names';
import { defaultTotalName, FORMULA_MAX_LENGTH, resolveFormulas } from '../formula';
import * as L from '../limits';
import { lookProblems, totalLookParams, type TotalLook } from './total-look';
import {
  compareLabel,
  comparePeriod,
  completeCompare,
  totalCompareParams,
  type CompareAs,
  type CompareTo,
  type TotalCompare,
} from './total-compare';
import {
  arrayOf,
  intInRange,
  keywordOf,
  oneOf,
  optionalBoolean,
  optionalString,
  PARAM,
  requiredString,
  string,
} from './param-builders';

/** The parts of a crosstab's params: axes, totals, filters and orders, and the rules within totals. */

export const binParam = z
  .strictObject(
    {
      width: z
        .number({ error: `${PARAM} must be a number greater than 0` })
        .gt(0, { error: `${PARAM} must be a number greater than 0` })
        .max(Number.MAX_SAFE_INTEGER, { error: `${PARAM} must be at most ${Number.MAX_SAFE_INTEGER}` }),
      origin: z
        .number({ error: `${PARAM} must be a number` })
        .min(-Number.MAX_SAFE_INTEGER, { error: `${PARAM} must be at least ${-Number.MAX_SAFE_INTEGER}` })
        .max(Number.MAX_SAFE_INTEGER, { error: `${PARAM} must be at most ${Number.MAX_SAFE_INTEGER}` })
        .optional()
        .meta({ default: 0 }),
    },
    { error: `${PARAM} must be an object with width and origin` },
  )
  .meta({ description: 'Numeric bins [origin + k·width, origin + (k+1)·width); the key is the lower bound.' });

/**
 * A manual order of an axis's keys, each as JSON gives the key (text, a number, a boolean, null for
 * blank). Checked for duplicates in crosstab-params' rules (a JSON Schema cannot compare items by value).
 */
export const axisOrderValues = arrayOf(
  z.union([string(L.AXIS_ORDER_VALUE_MAX), z.number(), z.boolean(), z.null()], {
    error: `${PARAM} must be a key: text, a number, a boolean or null (blank)`,
  }),
  L.AXIS_ORDER_MAX,
).meta({
  description:
    'A manual order of this axis\'s keys (e.g. ["Critical", "High", "Medium", "Low"]): listed keys first in this order, keys not listed after them in the default order; a listed value that does not occur is absent. rowLimit / columnLimit keep the first keys in this order. reverse reverses the listed order (unlisted keys still follow).',
});

/** Values equal as keys (a bin's 30 and "30" are the same key): duplicates in a manual order. */
export const orderValueText = (v: string | number | boolean | null) => (v === null ? '\u0000' : String(v));

/** An axis of a crosstab: a field, optionally grouped by a date part or in numeric bins. */
export const axisItem = z.strictObject(
  {
    field: requiredString(L.FIELD_NAME_MAX),
    reverse: optionalBoolean().meta({ default: false }),
    dateGroup: oneOf(L.DATE_GROUPS)
      .optional()
      .meta({ description: 'On a date field: group by year, quarter, month, ISO week, day, hour or a part of them.' }),
    bin: binParam.optional(),
    order: axisOrderValues.optional(),
  },
  { error: `${PARAM} must be an object with field, reverse, dateGroup, bin or order` },
);
export const columnItem = axisItem;

/**
 * A row axis: a field name, as always, or an axis object. The branch is chosen by the value's type, so a
 * wrong object gets that object's own messages, not a union's "invalid input".
 */
export const rowItem = z.union([string(L.FIELD_NAME_MAX, 'a field name'), axisItem], {
  error: (iss) => {
    const input: unknown = iss.input;
    // An object is an axis: its own problems, each at its own path below this item.
    const asAxis = (iss as { errors?: Array<Array<{ message: string; path: PropertyKey[] }>> }).errors?.[1];
    if (typeof input === 'object' && input !== null && !Array.isArray(input) && asAxis?.length) {
      const below = (path: PropertyKey[]) =>
        path.map((k) => (typeof k === 'number' ? `[${k}]` : `.${String(k)}`)).join('');
      return asAxis.map((e) => e.message.split(PARAM).join(`${PARAM}${below(e.path)}`)).join('; ');
    }
    return `${PARAM} must be a field name or an object with field, reverse, dateGroup, bin or order`;
  },
});

export const filterParam = z
  .strictObject(
    {
      measure: z
        .number({ error: `${PARAM} must be an index into totals` })
        .int({ error: `${PARAM} must be an index into totals` })
        .min(0, { error: `${PARAM} must be an index into totals` })
        .max(L.MAX_TOTALS - 1, { error: `${PARAM} must be an index into totals` }),
      op: oneOf(L.FILTER_OPS),
      value: z.number({ error: `${PARAM} must be a number` }),
    },
    { error: `${PARAM} must be an object with measure, op and value` },
  )
  .meta({
    description:
      'Keeps the outermost groups whose total of the measure passes (`op` against `value`); totals still cover every record.',
  });

const DEFAULT_SHOW_AS: L.ShowAs = 'value';

export const totalItem = z.strictObject(
  {
    aggregationType: keywordOf(L.AGGREGATIONS, (v) => `${v} is not one of ${L.AGGREGATIONS.join(', ')}`)
      .optional()
      .meta({ description: 'How the total is computed; a calculated total gives formula instead.' }),
    field: optionalString(L.FIELD_NAME_MAX).meta({ description: 'A numeric field (any field for Count).' }),
    dynamicView: optionalString(L.FIELD_NAME_MAX).meta({
      description: 'With Count: the number of distinct values of the view.',
    }),
    name: optionalString(L.TOTAL_NAME_MAX),
    showAs: oneOf(L.SHOW_AS).optional().meta({
      default: DEFAULT_SHOW_AS,
      description:
        'How values are shown: percentOfParentRow / percentOfParentColumn are shares of the enclosing subtotal group along that axis (of the Total at the outermost level); rankInColumn / rankInRow rank siblings 1 = largest, ties sharing the rank as Excel RANK.EQ does; movingAverage averages the non-empty values of the row and the window - 1 rows before it within its group (fewer at the start). The Other row (column) is never ranked among the rows (columns) and the Other row is not in the row order: rankInColumn on the Other row, rankInRow on the Other column, and runningTotal, differenceFromPrevious, percentDifferenceFromPrevious and movingAverage on the Other row are empty; the cells inside it are ranked like any row’s: rankInRow along the Other row, rankInColumn down the Other column.',
    }),
    window: intInRange(L.MOVING_AVERAGE_WINDOW_MIN, L.MOVING_AVERAGE_WINDOW_MAX).meta({
      description: 'With showAs movingAverage (required there): how many rows it averages.',
    }),
    percentile: z
      .number({ error: `${PARAM} must be a number between 0 and 100 (exclusive)` })
      .gt(0, { error: `${PARAM} must be a number between 0 and 100 (exclusive)` })
      .lt(100, { error: `${PARAM} must be a number between 0 and 100 (exclusive)` })
      .optional()
      .meta({ description: 'With Percentile: which one, continuous (as quantile_cont and PERCENTILE.INC).' }),
    formula: string(FORMULA_MAX_LENGTH).optional().meta({
      description:
        'A calculated total: other totals by name in brackets, numbers, + - * / and parentheses ("[Cost] / [Strikes]"); needs name.',
    }),
    ...totalLookParams,
    ...totalCompareParams,
  },
  { error: `${PARAM} must be an object with aggregationType and field or dynamicView, or name and formula` },
);

const measureIndex = () => {
  const error = `${PARAM} must be an index into totals`;
  return z
    .number({ error })
    .int({ error })
    .min(0, { error })
    .max(L.MAX_TOTALS - 1, { error })
    .optional()
    .meta({ default: 0 });
};

export const axisOrder = z.strictObject(
  {
    by: oneOf(['label', 'value']),
    measure: measureIndex(),
    direction: oneOf(L.SORT_DIRECTIONS).optional().meta({ default: 'asc' }),
  },
  { error: `${PARAM} must be an object with by ("label" or "value"), measure and direction` },
);

export const chartTypeNames = CHART_TYPE_NAMES.map((c) => c.name);

export const chartTotalItem = (() => {
  const error = `${PARAM} must be a total's name or its index into totals`;
  return z.union(
    [
      z
        .number({ error })
        .int({ error })
        .min(0, { error })
        .max(L.MAX_TOTALS - 1, { error }),
      string(L.TOTAL_NAME_MAX),
    ],
    { error },
  );
})();

/** A total as the table's header and the chart's legend name it, for chartTotals to refer to. */
export function totalDisplayName(t: {
  name?: string;
  aggregationType?: string;
  field?: string;
  dynamicView?: string;
  percentile?: number;
}): string {
  if (t.name) return t.name;
  const sent = t.aggregationType?.trim().toLowerCase();
  const aggregationType = L.AGGREGATIONS.find((a) => a.toLowerCase() === sent) ?? t.aggregationType;
  return defaultTotalName({ ...t, aggregationType });
}

/**
 * The totals as the table's header names them: a compared total without a name of its own is named by
 * its comparison ("Count (Records) vs previous year"), so chartTotals and an alert's total can name it.
 */
export function headerNamedTotals<
  T extends Parameters<typeof totalDisplayName>[0] & { compare?: { to: CompareTo; as?: CompareAs } },
>(totals: readonly T[], axes: ReadonlyArray<string | { field: string; dateGroup?: L.DateGroup }>): T[] {
  if (!totals.some((t) => t.compare && !t.name)) return [...totals];
  const found = comparePeriod(axes.map((a) => (typeof a === 'string' ? { field: a } : a)));
  if ('problem' in found) return [...totals];
  return totals.map((t) =>
    t.compare && !t.name
      ? {
          ...t,
          name: compareLabel(totalDisplayName(t), { to: t.compare.to, as: t.compare.as ?? 'value' }, found.period),
        }
      : t,
  );
}

/**
 * The indexes into totals that chartTotals names, in its order; -1 for a name or index that names none.
 * Names match trimmed and in any case, as the header shows them.
 */
export function resolveChartTotals(
  chartTotals: ReadonlyArray<string | number>,
  totals: ReadonlyArray<Parameters<typeof totalDisplayName>[0]>,
): number[] {
  const names = totals.map((t) => totalDisplayName(t).trim().toLowerCase());
  return chartTotals.map((c) =>
    typeof c === 'number' ? (c < totals.length ? c : -1) : names.indexOf(c.trim().toLowerCase()),
  );
}

type SentTotal = z.output<typeof totalItem>;

/**
 * A total as services run it: an aggregation (`aggregationType`, with `field`, `dynamicView` or
 * `percentile` as it needs) or a calculated total (`name` and `formula`, no aggregation). Completed here,
 * beside its schema, so a new option of a total is stated and defaulted in one file.
 */
export interface CompleteTotal extends TotalLook {
  /** As the contract spells it (`Sum`), whatever case was sent; absent for a calculated total. */
  aggregationType?: L.Aggregation;
  field?: string;
  dynamicView?: string;
  name?: string;
  showAs: L.ShowAs;
  /** With showAs movingAverage. */
  window?: number;
  percentile?: number;
  formula?: string;
  compare?: TotalCompare;
}

export function completeTotal(t: SentTotal): CompleteTotal {
  return {
    ...(t.aggregationType !== undefined ? { aggregationType: aggregationOf(t.aggregationType) } : {}),
    ...(t.percentile !== undefined ? { percentile: t.percentile } : {}),
    ...(t.formula !== undefined ? { formula: t.formula } : {}),
    // Blank is absent, as it always was on the wire.
    ...(t.field ? { field: t.field } : {}),
    ...(t.dynamicView ? { dynamicView: t.dynamicView } : {}),
    ...(t.name ? { name: t.name } : {}),
    showAs: t.showAs ?? DEFAULT_SHOW_AS,
    ...(t.format !== undefined ? { format: { style: 'decimal', notation: 'standard', ...t.format } } : {}),
    ...(t.highlight !== undefined ? { highlight: t.highlight } : {}),
    ...(t.colorScale !== undefined ? { colorScale: t.colorScale } : {}),
    ...(t.window !== undefined ? { window: t.window } : {}),
    ...completeCompare(t.compare),
  };
}

/** `sum` → `Sum`: the schema accepts any case and blanks around, services see one spelling. */
function aggregationOf(sent: string): L.Aggregation {
  const found = L.AGGREGATIONS.find((a) => a.toLowerCase() === sent.trim().toLowerCase());
  // The schema's pattern admitted only these words; a miss would be a contract bug, not a caller's.
  if (!found) throw new Error(`aggregationType ${JSON.stringify(sent)} passed validation but names no aggregation`);
  return found;
}

/**
 * Rules within a total that JSON Schema cannot state (which keys go together), and its formula: each
 * problem with its path, before any scan.
 */
export function totalProblems(totals: readonly SentTotal[]): Array<[PropertyKey[], string]> {
  const out: Array<[PropertyKey[], string]> = [];
  const agg = (t: SentTotal) => t.aggregationType?.trim().toLowerCase();
  totals.forEach((t, i) => {
    const at = (key: string): PropertyKey[] => ['totals', i, key];
    for (const [key, message] of lookProblems(t)) out.push([['totals', i, ...key.split('.')], message]);
    const style = t.format?.style;
    const asPercent = (t.compare as { as?: string } | undefined)?.as === 'percentDifference';
    if ((style === 'currency' || style === 'unit') && (asPercent || (t.showAs && L.PERCENT_SHOW_AS.has(t.showAs))))
      out.push([
        ['totals', i, 'format', 'style'],
        `${PARAM}: ${style} cannot write a total shown as a percentage (${asPercent ? 'compare as percentDifference' : `showAs ${t.showAs}`}); use percent or decimal`,
      ]);
    if (t.showAs === 'movingAverage' && t.window === undefined)
      out.push([
        at('window'),
        `${PARAM} is required with showAs movingAverage (from ${L.MOVING_AVERAGE_WINDOW_MIN} to ${L.MOVING_AVERAGE_WINDOW_MAX})`,
      ]);
    if (t.showAs !== 'movingAverage' && t.window !== undefined)
      out.push([at('window'), `${PARAM} goes with showAs movingAverage only`]);
    if (t.formula !== undefined) {
      if (t.aggregationType !== undefined || t.field || t.dynamicView || t.percentile !== undefined)
        out.push([at('formula'), `${PARAM}: a calculated total takes name and formula only (and showAs)`]);
      if (!t.name || t.name.trim() === '')
        out.push([at('name'), `${PARAM} is required with a formula (other totals refer to it by name)`]);
      return;
    }
    if (t.aggregationType === undefined) {
      out.push([at('aggregationType'), `${PARAM} is required (or give name and formula)`]);
      return;
    }
    const a = agg(t);
    if (a === 'percentile' && t.percentile === undefined)
      out.push([at('percentile'), `${PARAM} is required with Percentile (between 0 and 100)`]);
    if (a !== 'percentile' && t.percentile !== undefined)
      out.push([at('percentile'), `${PARAM} goes with Percentile only`]);
    if ((a === 'countdistinct' || a === 'median' || a === 'percentile' || a === 'stddev') && !t.field)
      out.push([at('field'), `${PARAM} is required with ${t.aggregationType.trim()}`]);
  });
  const withFormulas = totals.map((t) => ({ ...t, aggregationType: t.aggregationType?.trim() }));
  for (const problem of resolveFormulas(withFormulas).problems) {
    const path: PropertyKey[] = ['totals', problem.total, 'formula'];
    if (!out.some(([p, m]) => p.join('.') === path.join('.') && m.endsWith(problem.message)))
      out.push([path, `${PARAM}: ${problem.message}`]);
  }
  return out;
}

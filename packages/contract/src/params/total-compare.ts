import { z } from 'zod';
import * as L from '../limits';
import { oneOf, PARAM } from './param-builders';

/*
 * Period comparison of a total: the same measure over the records of the previous period (or the same
 * period a year before), shown as that value, the difference or the percentage difference. The period is
 * the finest calendar dateGroup of the one date field the axes group by calendar.
 */

export const COMPARE_TO = ['previousPeriod', 'previousYear'] as const;
export type CompareTo = (typeof COMPARE_TO)[number];
export const COMPARE_AS = ['value', 'difference', 'percentDifference'] as const;
export type CompareAs = (typeof COMPARE_AS)[number];
/** Date groups that are periods of the calendar (a repeating part such as dayOfWeek is not). */
export const CALENDAR_GROUPS = ['hour', 'day', 'week', 'month', 'quarter', 'year'] as const;
export type CalendarGroup = (typeof CALENDAR_GROUPS)[number];

export const compareParam = z
  .strictObject(
    {
      to: oneOf(COMPARE_TO),
      as: oneOf(COMPARE_AS).optional().meta({ default: 'value' }),
    },
    { error: `${PARAM} must be an object with to ("previousPeriod" or "previousYear") and as` },
  )
  .meta({
    description:
      "Compare with the previous period or the same period a year before: the same measure computed over the records of that period (never a neighbouring cell), shown as that value, the difference (current − previous) or the percentage difference ((current − previous) / |previous| × 100; empty when previous is 0 or empty). A period without records counts 0 and has no other measure, on either side: a cell of the table with no records of its own whose compared period has some is compared too (Count: previous 1, difference −1, −100 %; Sum: previous shown, difference empty), its other totals empty. Needs a calendar dateGroup (year, quarter, month, week, day, hour) of one date field among rows or columns; the period is that field's finest one (a week a year before is 52 weeks before, same weekday). In timeZone, days, weeks, months, quarters and years move on the calendar (the previous day of a 23-hour DST day is the day before, whatever its length), an hour by elapsed time (after a spring-forward gap the previous hour is the one before the gap; the repeated hour of a fall-back night holds both hours of records, and the hour after it compares with the second alone). The last period is partial when the compared period has records later in its span than the data's last record has in the last period (not by the calendar: a week whose data ends on a Friday is whole when the week before ends on a Friday too); then the compared period is cut to the same elapsed span and that row or column says partial (JSON: partial; HTML, XLSX and CSV: a * after its key, explained in HTML's caption and in a last CSV line). Applies before showAs.",
  });

export const totalCompareParams = { compare: compareParam.optional() };

export interface TotalCompare {
  to: CompareTo;
  as: CompareAs;
}

export function completeCompare(c: { to: CompareTo; as?: CompareAs } | undefined): { compare?: TotalCompare } {
  return c ? { compare: { to: c.to, as: c.as ?? 'value' } } : {};
}

interface SentAxis {
  field: string;
  dateGroup?: L.DateGroup;
}

/** The field compared and its period: the finest calendar group of the one field grouped by calendar. */
export function comparePeriod(
  axes: readonly SentAxis[],
): { field: string; period: CalendarGroup } | { problem: string } {
  const calendar = axes.filter((a): a is SentAxis & { dateGroup: CalendarGroup } =>
    (CALENDAR_GROUPS as readonly string[]).includes(a.dateGroup ?? ''),
  );
  const fields = [...new Set(calendar.map((a) => a.field.trim().toLowerCase()))];
  if (fields.length === 0)
    return {
      problem: `${PARAM} needs a row or column with a calendar dateGroup (${CALENDAR_GROUPS.join(', ')}); a repeating part such as dayOfWeek has no previous period`,
    };
  if (fields.length > 1)
    return {
      problem: `${PARAM} shifts one date field, but rows and columns group ${fields.length} by calendar (${calendar.map((a) => a.field).join(', ')})`,
    };
  const period = CALENDAR_GROUPS.find((g) => calendar.some((a) => a.dateGroup === g)) as CalendarGroup;
  return { field: calendar[0].field, period };
}

/** How a compared total's header reads when it has no name of its own: "Sum (Delay) vs previous month". */
export function compareLabel(name: string, c: TotalCompare, period: CalendarGroup): string {
  const when = c.to === 'previousPeriod' ? `previous ${period}` : `same ${period} last year`;
  switch (c.as) {
    case 'value':
      return `${name}, ${when}`;
    case 'difference':
      return `${name} vs ${when}`;
    case 'percentDifference':
      return `${name} vs ${when} (%)`;
  }
}

interface SentForCompare {
  rows: ReadonlyArray<string | SentAxis>;
  columns?: readonly SentAxis[];
  totals: ReadonlyArray<{ compare?: unknown; formula?: string; showAs?: L.ShowAs }>;
  rowOrder?: { by: string; measure?: number };
  columnOrder?: { by: string; measure?: number };
  rowFilter?: { measure: number };
  columnFilter?: { measure: number };
}

/** A percentage difference is a percentage already: a share or a running sum of it means nothing. */
const SHOW_AS_WITH_DIFFERENCE: ReadonlySet<L.ShowAs> = new Set(['value']);

/** Rules of compare across parameters, each with its path. */
export function compareProblems(p: SentForCompare): Array<[PropertyKey[], string]> {
  const out: Array<[PropertyKey[], string]> = [];
  const compared = p.totals.map((t) => t.compare !== undefined);
  if (!compared.some(Boolean)) return out;
  const axes = [...p.rows.map((r) => (typeof r === 'string' ? { field: r } : r)), ...(p.columns ?? [])];
  const period = comparePeriod(axes);
  p.totals.forEach((t, i) => {
    if (!t.compare) return;
    const at: PropertyKey[] = ['totals', i, 'compare'];
    if ('problem' in period) out.push([at, period.problem]);
    if (t.formula !== undefined)
      out.push([at, `${PARAM} goes with an aggregation; a calculated total can read a compared total instead`]);
    const as = (t.compare as { as?: CompareAs }).as ?? 'value';
    if (as === 'percentDifference' && t.showAs !== undefined && !SHOW_AS_WITH_DIFFERENCE.has(t.showAs))
      out.push([
        at,
        `${PARAM}: a percentage difference cannot also be shown as ${t.showAs}; use as "value" or "difference"`,
      ]);
  });
  // Outer keys are ranked and filtered before the comparison is read: on a compared total they would not be.
  for (const name of ['rowOrder', 'columnOrder'] as const) {
    const o = p[name];
    if (o?.by === 'value' && compared[o.measure ?? 0])
      out.push([[name, 'measure'], `${PARAM}: order by a total without compare (a compared total cannot rank keys)`]);
  }
  for (const name of ['rowFilter', 'columnFilter'] as const) {
    const f = p[name];
    if (f && compared[f.measure])
      out.push([
        [name, 'measure'],
        `${PARAM}: filter on a total without compare (a compared total cannot filter keys)`,
      ]);
  }
  return out;
}

/** A measure's comparison as JSON tables echo it, with the period it was made on. */
export const compareEcho = {
  compare: z
    .object({ to: z.enum(COMPARE_TO), as: z.enum(COMPARE_AS), period: z.enum(CALENDAR_GROUPS) })
    .optional()
    .meta({ description: 'The comparison this measure shows (its period: the finest calendar group).' }),
};

/** What a JSON table says of a partial last period when it has compared totals. */
export const compareTableParts = {
  comparePartial: z
    .object({
      on: z.enum(['rows', 'columns']),
      field: z.string(),
      key: z.string().meta({ description: 'The last period, as its axis reports keys (2025-03).' }),
      lastRecord: z.string().meta({ description: 'Local time of the last record; compared periods end as far in.' }),
    })
    .optional()
    .meta({
      description:
        "Present when the data's last period is partial: its compared values (and the totals holding it) cover the previous period only up to the same elapsed span. The rows (or partialColumns) of that period say so.",
    }),
  partialColumns: z
    .array(z.number().int())
    .optional()
    .meta({ description: 'Indexes into columns of the partial last period (comparePartial.on columns).' }),
};

export const partialRowFlag = {
  partial: z
    .literal(true)
    .optional()
    .meta({ description: "This row holds the data's partial last period: its comparison is cut to the same span." }),
};

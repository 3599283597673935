import { z } from 'zod';
import { CHART_TYPE_NAMES, chartTotalsProblem, chartTypeProblem, findChartType, IMAGE_FORMATS } from './chart-names';
import { quoteInput, quoteList } from '@quarry/errors';
import * as L from './limits';
import { defaultTotalName, FORMULA_MAX_LENGTH, resolveFormulas } from './formula';

/*
 * The JSON shapes of each method's params (docs/api.md, generated from these schemas). The contract owns types, ranges
 * and defaults; services own what needs data (does the index or field exist, does the query parse).
 * Every string has a length cap, so a hostile megabyte is a fast 400 at the gateway instead of travelling
 * to a service.
 *
 * Messages say `{param}` where the parameter goes: parseParams puts the issue's exact path there
 * (`sort[2].field`), which no message written per schema can know. Descriptions and defaults (`.meta`)
 * are what the OpenRPC document shows; the defaults are applied by the gateway, not by zod, so that a
 * saved report records what the caller sent.
 */

export const PARAM = '{param}';

/** Marks an issue that relates two parameters, a rule JSON Schema cannot state (the method's description does). */
export const CROSS = { crossParameter: true } as const;

const string = (max: number, what = 'a string') =>
  z.string({ error: `${PARAM} must be ${what}` }).max(max, { error: `${PARAM} must be at most ${max} characters` });

/** Required and not blank; the regex (not a refine) so that JSON Schema states it too. */
const requiredString = (max: number) =>
  z
    .string({ error: `${PARAM} is required` })
    .max(max, { error: `${PARAM} must be at most ${max} characters` })
    .regex(/\S/, { error: `${PARAM} is required` });

const optionalString = (max: number) => string(max).optional();

const optionalBoolean = () => z.boolean({ error: `${PARAM} must be a boolean` }).optional();

const intInRange = (min: number, max: number) => {
  const error = `${PARAM} must be an integer between ${min} and ${max}`;
  return z.number({ error }).int({ error }).min(min, { error }).max(max, { error }).optional();
};

const arrayOf = <T extends z.ZodType>(item: T, max: number) =>
  z.array(item, { error: `${PARAM} must be an array` }).max(max, { error: `${PARAM} may have at most ${max} items` });

/** One of a fixed set of words; any other value is a 400 listing them. */
const oneOf = <const T extends readonly [string, ...string[]]>(values: T) =>
  z.enum(values, { error: `${PARAM} must be one of ${values.map((v) => `"${v}"`).join(', ')}` });

/**
 * A keyword from a fixed set, trimmed and matched case-insensitively (as sort directions and FusionCharts
 * names always were) unless `exact`; any other string is refused with `refusal(quotedInput)` after the
 * parameter's name. The pattern states the same set to JSON Schema readers.
 */
const keywordOf = (
  values: readonly string[],
  refusal: (quoted: string) => string,
  opts: { exact?: boolean; blankMeansDefault?: boolean } = {},
) => {
  const escaped = values.map((v) => v.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'));
  // Letters as [aA] rather than the `i` flag: JSON Schema patterns carry no flags.
  const alternatives = opts.exact
    ? escaped
    : escaped.map((v) => v.replace(/[a-z]/gi, (c) => `[${c.toLowerCase()}${c.toUpperCase()}]`));
  const optional = opts.blankMeansDefault ? '?' : '';
  const pattern = opts.exact
    ? new RegExp(`^(?:${alternatives.join('|')})${optional}$`)
    : new RegExp(`^\\s*(?:${alternatives.join('|')})${optional}\\s*$`);
  const error = (iss: { code?: string; input?: unknown }) => {
    if (iss.input === undefined) return `${PARAM} is required`;
    if (typeof iss.input !== 'string') return `${PARAM} must be a string`;
    if (iss.code === 'too_big') return `${PARAM} must be at most ${L.KEYWORD_MAX} characters`;
    return `${PARAM} ${refusal(quoteInput(iss.input))}`;
  };
  // The words themselves as `examples`: a reader (docs/api.md, a form) lists them instead of the pattern.
  return z
    .string({ error })
    .max(L.KEYWORD_MAX, { error, abort: true })
    .regex(pattern, { error })
    .meta({ examples: [...values] });
};

export const saveReportParam = z
  .strictObject(
    {
      name: z
        .string({ error: `${PARAM} is required` })
        .trim()
        .max(L.REPORT_NAME_MAX, { error: `${PARAM} must be at most ${L.REPORT_NAME_MAX} characters` })
        .regex(/\S/, { error: `${PARAM} is required` })
        .meta({ description: 'The report name shown in REPORTS.FIND (leading and trailing blanks are dropped).' }),
      description: optionalString(L.REPORT_DESCRIPTION_MAX),
      folder: optionalString(L.REPORT_FOLDER_MAX),
      shared: optionalBoolean().meta({ description: 'Visible to every user who may read the index.', default: false }),
    },
    { error: `${PARAM} must be an object` },
  )
  .meta({
    description:
      'Also save this call as a report (needs the reports:write scope). The result then carries report.guid.',
  });

const cacheParam = optionalBoolean().meta({
  description: 'false skips the result cache for this call. Not an executable parameter: never saved in a report.',
  default: true,
});

const sortItem = z.strictObject(
  {
    field: requiredString(L.FIELD_NAME_MAX),
    direction: keywordOf(L.SORT_DIRECTIONS, (v) => `must be "asc" or "desc", got ${v}`, { blankMeansDefault: true })
      .optional()
      .meta({ default: 'asc' }),
  },
  { error: `${PARAM} must be an object with field and direction` },
);

export const queriesExecuteParams = z
  .strictObject({
    index: requiredString(L.INDEX_NAME_MAX).meta({ description: 'The index to search.' }),
    query: optionalString(L.QUERY_MAX_LENGTH).meta({
      description:
        'Query text in Quarry\'s query language (README "Query language"); empty or absent matches every record.',
      default: '*',
    }),
    page: intInRange(1, L.INT32_MAX).meta({ default: L.DEFAULT_PAGE }),
    pageSize: intInRange(1, L.MAX_PAGE_SIZE).meta({ default: L.DEFAULT_PAGE_SIZE }),
    sort: arrayOf(sortItem, L.MAX_SORT_KEYS)
      .optional()
      .meta({ description: 'Sort keys, most significant first; ties keep load order.' }),
    cache: cacheParam,
    saveReport: saveReportParam.optional(),
  })
  .meta({ title: 'QueriesExecuteParams' });

export const indexesFindParams = z
  .strictObject({
    searchText: optionalString(L.SEARCH_TEXT_MAX).meta({
      description: 'Words matched against index names and descriptions.',
    }),
    cursor: optionalString(L.CURSOR_MAX).meta({ description: 'nextCursor of the previous page.' }),
    limit: intInRange(1, L.MAX_INDEX_LIMIT).meta({ default: L.DEFAULT_INDEX_LIMIT }),
  })
  .meta({ title: 'IndexesFindParams' });

const binParam = z
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

/** An axis of a crosstab: a field, optionally grouped by a date part or in numeric bins. */
const axisItem = z.strictObject(
  {
    field: requiredString(L.FIELD_NAME_MAX),
    reverse: optionalBoolean().meta({ default: false }),
    dateGroup: oneOf(L.DATE_GROUPS)
      .optional()
      .meta({ description: 'On a date field: group by year, quarter, month, ISO week, day, hour or a part of them.' }),
    bin: binParam.optional(),
  },
  { error: `${PARAM} must be an object with field, reverse, dateGroup or bin` },
);
const columnItem = axisItem;

/**
 * A row axis: a field name, as always, or an axis object. The branch is chosen by the value's type, so a
 * wrong object gets that object's own messages, not a union's "invalid input".
 */
const rowItem = z.union([string(L.FIELD_NAME_MAX, 'a field name'), axisItem], {
  error: (iss) => {
    const input: unknown = iss.input;
    // An object is an axis: its own problems, each at its own path below this item.
    const asAxis = (iss as { errors?: Array<Array<{ message: string; path: PropertyKey[] }>> }).errors?.[1];
    if (typeof input === 'object' && input !== null && !Array.isArray(input) && asAxis?.length) {
      const below = (path: PropertyKey[]) =>
        path.map((k) => (typeof k === 'number' ? `[${k}]` : `.${String(k)}`)).join('');
      return asAxis.map((e) => e.message.split(PARAM).join(`${PARAM}${below(e.path)}`)).join('; ');
    }
    return `${PARAM} must be a field name or an object with field, reverse, dateGroup or bin`;
  },
});

const filterParam = z
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

const totalItem = z.strictObject(
  {
    aggregationType: keywordOf(L.AGGREGATIONS, (v) => `${v} is not one of ${L.AGGREGATIONS.join(', ')}`)
      .optional()
      .meta({ description: 'How the total is computed; a calculated total gives formula instead.' }),
    field: optionalString(L.FIELD_NAME_MAX).meta({ description: 'A numeric field (any field for Count).' }),
    dynamicView: optionalString(L.FIELD_NAME_MAX).meta({
      description: 'With Count: the number of distinct values of the view.',
    }),
    name: optionalString(L.TOTAL_NAME_MAX),
    showAs: oneOf(L.SHOW_AS).optional().meta({ default: 'value' }),
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

const axisOrder = z.strictObject(
  {
    by: oneOf(['label', 'value']),
    measure: measureIndex(),
    direction: oneOf(L.SORT_DIRECTIONS).optional().meta({ default: 'asc' }),
  },
  { error: `${PARAM} must be an object with by ("label" or "value"), measure and direction` },
);

const chartTypeNames = CHART_TYPE_NAMES.map((c) => c.name);

const chartTotalItem = (() => {
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

export const crosstabExecuteParams = z
  .strictObject({
    index: requiredString(L.INDEX_NAME_MAX),
    query: optionalString(L.QUERY_MAX_LENGTH).meta({ default: '*' }),
    rows: arrayOf(rowItem, L.MAX_AXIS_FIELDS).min(1, {
      error: `${PARAM} must name at least one field`,
    }),
    columns: arrayOf(columnItem, L.MAX_AXIS_FIELDS).optional(),
    totals: arrayOf(totalItem, L.MAX_TOTALS).min(1, { error: `${PARAM} must have at least one item` }),
    subtotals: optionalBoolean().meta({ default: false }),
    rowOrder: axisOrder.optional(),
    columnOrder: axisOrder.optional(),
    rowLimit: intInRange(1, L.AXIS_LIMIT_MAX).meta({
      description: 'Keep the first N outermost row values (after rowOrder); totals still cover every record.',
    }),
    columnLimit: intInRange(1, L.AXIS_LIMIT_MAX),
    rowFilter: filterParam.optional(),
    columnFilter: filterParam.optional(),
    timeZone: string(L.TIME_ZONE_MAX, 'an IANA time zone name')
      .optional()
      .meta({ default: L.DEFAULT_TIME_ZONE, description: 'The zone dateGroup keys are computed in (IANA name).' }),
    format: oneOf(L.CROSSTAB_FORMATS).optional().meta({
      default: 'html',
      description: 'The table as HTML, JSON, CSV or an Excel workbook (xlsx, base64); not with chartType.',
    }),
    totalsOn: oneOf(L.TOTALS_ON).optional().meta({
      default: 'columns',
      description:
        'With an html, csv or xlsx table: "rows" gives each total a row under each row (its name beside it) and each column one cell, so several totals over many columns do not repeat their names under every column.',
    }),
    chartType: keywordOf(chartTypeNames, (v) => `${v} is not supported; use one of ${chartTypeNames.join(', ')}`)
      .optional()
      .meta({
        description: 'Draw a chart instead of a table (FusionCharts names, any case).',
        examples: chartTypeNames,
      }),
    chartTotals: arrayOf(chartTotalItem, L.MAX_TOTALS)
      .min(1, { error: `${PARAM} must name at least one total` })
      .optional()
      .meta({
        description:
          'With chartType only: the totals drawn, by name (as the header shows it, any case) or index into totals, in order; absent, every total. Where a type draws two (MS, Stacked and combination types, Scatter) the second has its own value axis; a type is refused the totals it cannot draw.',
      }),
    imageFormat: keywordOf(IMAGE_FORMATS, (v) => `${v} is not supported; use one of ${IMAGE_FORMATS.join(', ')}`, {
      exact: true,
    })
      .optional()
      .meta({
        default: 'png',
        description:
          'With chartType only: png (base64), svg (the SVG text), or echarts (the ECharts option the image is drawn from, as a JSON object, for clients that draw interactive charts).',
      }),
    width: intInRange(L.CHART_SIZE_MIN, L.CHART_SIZE_MAX).meta({ default: L.DEFAULT_CHART_WIDTH }),
    height: intInRange(L.CHART_SIZE_MIN, L.CHART_SIZE_MAX).meta({ default: L.DEFAULT_CHART_HEIGHT }),
    cache: cacheParam,
    saveReport: saveReportParam.optional(),
  })
  .superRefine((p, ctx) => {
    // Rules across parameters, each named by its own path. JSON Schema cannot state these; the
    // OpenRPC description of the method does.
    for (const name of ['rowOrder', 'columnOrder', 'rowFilter', 'columnFilter'] as const) {
      const measure = p[name]?.measure;
      if (measure !== undefined && measure >= p.totals.length) {
        ctx.addIssue({
          code: 'custom',
          params: CROSS,
          path: [name, 'measure'],
          message: `${PARAM} must be an index into totals, from 0 to ${p.totals.length - 1}`,
        });
      }
    }
    for (const [path, message] of totalProblems(p.totals)) {
      ctx.addIssue({ code: 'custom', params: CROSS, path, message });
    }
    // An over-long name was refused by its own length check already.
    if (p.timeZone !== undefined && p.timeZone.length <= L.TIME_ZONE_MAX && !isTimeZone(p.timeZone)) {
      // The IANA list is the runtime's, not something JSON Schema states: like a cross-parameter rule,
      // the method's description says it.
      ctx.addIssue({
        code: 'custom',
        params: CROSS,
        path: ['timeZone'],
        message: `${PARAM} ${quoteInput(p.timeZone)} is not a known IANA time zone (like "UTC" or "Europe/Paris")`,
      });
    }
    p.rows.forEach((r, i) => {
      if (typeof r === 'object' && r.dateGroup !== undefined && r.bin !== undefined)
        ctx.addIssue({
          code: 'custom',
          params: CROSS,
          path: ['rows', i],
          message: `${PARAM}: give dateGroup or bin, not both`,
        });
    });
    (p.columns ?? []).forEach((c, i) => {
      if (c.dateGroup !== undefined && c.bin !== undefined)
        ctx.addIssue({
          code: 'custom',
          params: CROSS,
          path: ['columns', i],
          message: `${PARAM}: give dateGroup or bin, not both`,
        });
    });
    if (p.format !== undefined && p.chartType !== undefined) {
      ctx.addIssue({
        code: 'custom',
        params: CROSS,
        path: ['format'],
        message: `${PARAM} is for tables; a chart (chartType) takes imageFormat instead`,
      });
    }
    // A known chart type that needs more totals (MSCombiDY2D, Scatter); an unknown one is refused above.
    const chartProblem =
      p.chartType !== undefined && findChartType(p.chartType)
        ? chartTypeProblem(p.chartType, p.totals.length)
        : undefined;
    if (chartProblem) ctx.addIssue({ code: 'custom', params: CROSS, path: ['chartType'], message: chartProblem });
    if (p.totalsOn !== undefined && (p.chartType !== undefined || p.format === 'json')) {
      ctx.addIssue({
        code: 'custom',
        params: CROSS,
        path: ['totalsOn'],
        message: `${PARAM} goes with an html, csv or xlsx table (not ${p.chartType !== undefined ? 'chartType' : 'format json, whose cells list every total'})`,
      });
    }
    if (p.chartTotals !== undefined && p.chartType === undefined) {
      ctx.addIssue({ code: 'custom', params: CROSS, path: ['chartTotals'], message: `${PARAM} needs chartType` });
    }
    if (p.chartType !== undefined && findChartType(p.chartType) && !chartProblem) {
      const picked = p.chartTotals ? resolveChartTotals(p.chartTotals, p.totals) : p.totals.map((_, i) => i);
      picked.forEach((at, i) => {
        const sent = p.chartTotals?.[i];
        if (at >= 0 || sent === undefined) return;
        const names = p.totals.map((t) => JSON.stringify(totalDisplayName(t))).join(', ');
        ctx.addIssue({
          code: 'custom',
          params: CROSS,
          path: ['chartTotals', i],
          message:
            typeof sent === 'number'
              ? `${PARAM} must be an index into totals, from 0 to ${p.totals.length - 1}`
              : `${PARAM} ${quoteInput(sent)} names no total; the totals are ${names}`,
        });
      });
      if (new Set(picked).size < picked.length && picked.every((at) => at >= 0))
        ctx.addIssue({ code: 'custom', params: CROSS, path: ['chartTotals'], message: `${PARAM} names a total twice` });
      const tooMany = chartTotalsProblem(p.chartType, picked.length);
      if (tooMany) ctx.addIssue({ code: 'custom', params: CROSS, path: ['chartTotals'], message: tooMany });
      else {
        const tooFew = chartTypeProblem(p.chartType, picked.length);
        if (tooFew) ctx.addIssue({ code: 'custom', params: CROSS, path: ['chartTotals'], message: tooFew });
      }
    }
    if (p.imageFormat !== undefined && p.chartType === undefined) {
      ctx.addIssue({ code: 'custom', params: CROSS, path: ['imageFormat'], message: `${PARAM} needs chartType` });
    }
  })
  .meta({ title: 'CrosstabExecuteParams' });

/** Whether the name is a time zone this runtime (and DuckDB's ICU, which shares the IANA data) knows. */
function isTimeZone(name: string): boolean {
  try {
    new Intl.DateTimeFormat('en', { timeZone: name });
    return name.trim() !== '';
  } catch {
    return false;
  }
}

type SentTotal = z.output<typeof totalItem>;

/**
 * Rules within a total that JSON Schema cannot state (which keys go together), and its formula: each
 * problem with its path, before any scan.
 */
function totalProblems(totals: readonly SentTotal[]): Array<[PropertyKey[], string]> {
  const out: Array<[PropertyKey[], string]> = [];
  const agg = (t: SentTotal) => t.aggregationType?.trim().toLowerCase();
  totals.forEach((t, i) => {
    const at = (key: string): PropertyKey[] => ['totals', i, key];
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

export const reportsFindParams = z
  .strictObject({
    search: optionalString(L.SEARCH_TEXT_MAX).meta({
      description: 'Words matched against report names and descriptions.',
    }),
    // One message for the list (every wrong type named at once); JSON Schema gets the same set as an enum.
    types: arrayOf(string(L.KEYWORD_MAX).meta({ enum: [...L.REPORT_TYPES] }), L.MAX_REPORT_TYPES)
      .superRefine((types, ctx) => {
        // Items already refused for their length are not quoted again.
        const bad = types.filter(
          (t) =>
            typeof t === 'string' && t.length <= L.KEYWORD_MAX && !(L.REPORT_TYPES as readonly string[]).includes(t),
        );
        if (bad.length)
          ctx.addIssue({
            code: 'custom',
            message: `${PARAM} may hold only ${L.REPORT_TYPES.join(' and ')}, got ${quoteList(bad)}`,
          });
      })
      .optional(),
    cursor: optionalString(L.CURSOR_MAX),
    limit: intInRange(1, L.MAX_REPORT_LIMIT).meta({ default: L.DEFAULT_REPORT_LIMIT }),
  })
  .meta({ title: 'ReportsFindParams' });

const reportGuid = () =>
  requiredString(L.KEYWORD_MAX).meta({ description: 'The guid REPORTS.FIND or saveReport returned.' });

const reportVersion = () =>
  intInRange(1, L.INT32_MAX).meta({ description: 'A version of the report (1 is the first); absent: the latest.' });

export const reportsMetadataParams = z
  .strictObject({ guid: reportGuid(), version: reportVersion() })
  .meta({ title: 'ReportsMetadataParams' });

/** http(s) only, and no user:password@: credentials in a URL end up in logs and in the listing. */
function webhookUrlProblem(v: string): string | undefined {
  let url: URL;
  try {
    url = new URL(v);
  } catch {
    return `${PARAM} is not a valid URL`;
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    return `${PARAM} must be an http or https URL, got scheme ${quoteInput(url.protocol.replace(/:$/, ''))}`;
  if (url.username !== '' || url.password !== '')
    return `${PARAM} must not carry credentials (user:password@); the signature authenticates Quarry`;
  return undefined;
}

// A practical address check (what mail servers accept), not RFC 5322's comments and quoted forms.
const EMAIL =
  /^[A-Za-z0-9.!#$%&'*+/=?^_`{|}~-]+@[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)+$/;

const webhookDelivery = z.strictObject(
  {
    url: requiredString(L.WEBHOOK_URL_MAX)
      .superRefine((v, ctx) => {
        // Not a rule JSON Schema states (a parsed URL), so marked as the document's readers cannot check it.
        const problem = webhookUrlProblem(v.trim());
        if (problem) ctx.addIssue({ code: 'custom', params: CROSS, message: problem });
      })
      .meta({
        description:
          'Where each run is POSTed (http or https, no credentials). Its host[:port] must match QUARRY_WEBHOOK_ALLOW.',
      }),
  },
  { error: `${PARAM} must be an object with url` },
);

const emailDelivery = z.strictObject(
  {
    to: z
      .array(
        z
          .string({ error: `${PARAM} must be an e-mail address` })
          .max(L.EMAIL_ADDRESS_MAX, {
            error: `${PARAM} must be at most ${L.EMAIL_ADDRESS_MAX} characters`,
            abort: true,
          })
          .regex(EMAIL, { error: (iss) => `${PARAM} is not an e-mail address: ${quoteInput(String(iss.input))}` }),
        { error: `${PARAM} must be an array of e-mail addresses` },
      )
      .min(1, { error: `${PARAM} needs at least one address` })
      .max(L.MAX_EMAIL_RECIPIENTS, { error: `${PARAM} may have at most ${L.MAX_EMAIL_RECIPIENTS} addresses` })
      .meta({ description: 'Recipients of each run, the output attached.' }),
  },
  { error: `${PARAM} must be an object with to` },
);

export const reportsScheduleParams = z
  .strictObject({
    guid: requiredString(L.KEYWORD_MAX).meta({ description: 'The report to deliver (yours, or shared with you).' }),
    cron: requiredString(L.CRON_MAX).meta({
      description:
        'When to deliver: 5 cron fields (minute hour day month weekday), or 6 with seconds first. Runs closer together than QUARRY_SCHEDULE_MIN_INTERVAL_S (300 by default) are refused.',
    }),
    timeZone: string(L.TIME_ZONE_MAX, 'an IANA time zone name')
      .optional()
      .meta({ default: L.DEFAULT_TIME_ZONE, description: 'The zone cron is read in (IANA name).' }),
    format: oneOf(L.SCHEDULE_FORMATS).meta({
      description:
        'The output delivered: html, json, csv or xlsx for a crosstab (json for a search), png or svg for a crosstab saved as a chart.',
    }),
    // One object with two optional keys rather than a union, so a mistake inside either is named exactly.
    deliver: z
      .strictObject(
        { webhook: webhookDelivery.optional(), email: emailDelivery.optional() },
        { error: `${PARAM} must be {webhook: {url}} or {email: {to: [...]}}` },
      )
      .refine((d) => (d.webhook === undefined) !== (d.email === undefined), {
        error: `${PARAM} must be {webhook: {url}} or {email: {to: [...]}}`,
      })
      .meta({
        description: 'One destination: a signed webhook ({webhook: {url}}), or e-mail ({email: {to}}).',
        minProperties: 1,
        maxProperties: 1,
      }),
    runNow: optionalBoolean().meta({ description: 'Also deliver once at once.', default: false }),
  })
  .superRefine((p, ctx) => {
    if (p.timeZone !== undefined && p.timeZone.length <= L.TIME_ZONE_MAX && !isTimeZone(p.timeZone)) {
      ctx.addIssue({
        code: 'custom',
        params: CROSS,
        path: ['timeZone'],
        message: `${PARAM} ${quoteInput(p.timeZone)} is not a known IANA time zone (like "UTC" or "Europe/Paris")`,
      });
    }
  })
  .meta({ title: 'ReportsScheduleParams' });

export const reportsSchedulesParams = z
  .strictObject({
    guid: optionalString(L.KEYWORD_MAX).meta({ description: "Only this report's schedules." }),
  })
  .meta({ title: 'ReportsSchedulesParams' });

export const reportsUnscheduleParams = z
  .strictObject({
    scheduleId: requiredString(L.KEYWORD_MAX).meta({ description: 'The id REPORTS.SCHEDULE returned.' }),
  })
  .meta({ title: 'ReportsUnscheduleParams' });
export const reportsExecuteParams = z
  .strictObject({
    guid: reportGuid(),
    version: reportVersion(),
    page: intInRange(1, L.INT32_MAX).meta({ description: 'A query report: this page instead of the saved one.' }),
    pageSize: intInRange(1, L.MAX_PAGE_SIZE).meta({
      description: 'A query report: this page size instead of the saved one.',
    }),
    format: oneOf(L.CROSSTAB_FORMATS).optional().meta({
      description: 'A crosstab report: the table in this format (a chart report is then drawn as a table).',
    }),
    imageFormat: keywordOf(IMAGE_FORMATS, (v) => `${v} is not supported; use one of ${IMAGE_FORMATS.join(', ')}`, {
      exact: true,
    })
      .optional()
      .meta({ description: 'A chart report: png or svg instead of the saved one.' }),
    asOf: oneOf(L.AS_OF).optional().meta({
      default: L.DEFAULT_AS_OF,
      description:
        'latest: the index as it is now; saved: the index snapshot that was current when this report version was saved (while it is kept).',
    }),
  })
  .superRefine((p, ctx) => {
    if (p.format !== undefined && p.imageFormat !== undefined)
      ctx.addIssue({
        code: 'custom',
        params: CROSS,
        path: ['imageFormat'],
        message: `${PARAM} is for charts; give format or imageFormat, not both`,
      });
  })
  .meta({ title: 'ReportsExecuteParams' });

export const reportsUpdateParams = z
  .strictObject({
    guid: reportGuid(),
    name: saveReportParam.shape.name.optional(),
    description: optionalString(L.REPORT_DESCRIPTION_MAX),
    folder: optionalString(L.REPORT_FOLDER_MAX),
    shared: optionalBoolean().meta({ description: 'Visible to every user who may read the index.' }),
    params: z
      .record(z.string(), z.unknown(), { error: `${PARAM} must be an object` })
      .optional()
      .meta({
        description:
          "New executable params for the report's method (as REPORTS.METADATA shows them, on the same index), checked and run as when a report is saved: they make a new version. Name, description, folder and sharing changes make none.",
      }),
  })
  .superRefine((p, ctx) => {
    if (
      p.name === undefined &&
      p.description === undefined &&
      p.folder === undefined &&
      p.shared === undefined &&
      p.params === undefined
    )
      ctx.addIssue({
        code: 'custom',
        params: CROSS,
        path: [],
        message: 'give at least one of name, description, folder, shared or params to change',
      });
  })
  .meta({ title: 'ReportsUpdateParams' });

export const reportsDeleteParams = z.strictObject({ guid: reportGuid() }).meta({ title: 'ReportsDeleteParams' });

export const tokensEmbedParams = z
  .strictObject({
    guid: optionalString(L.KEYWORD_MAX).meta({
      description: 'The saved report the token may run (REPORTS.EXECUTE), and nothing else. Give guid or index.',
    }),
    index: optionalString(L.INDEX_NAME_MAX).meta({
      description: 'The index the token may search and pivot (QUERIES.EXECUTE, CROSSTAB.EXECUTE), and nothing else.',
    }),
    realm: string(L.QUERY_MAX_LENGTH)
      .regex(/\S/, { error: `${PARAM} must not be blank (leave it out instead)` })
      .optional()
      .meta({
        description:
          "A query ANDed into every call the token makes, on top of the creator's own realms: it narrows what the creator may read, never widens it.",
      }),
    ttlSeconds: z
      .number({ error: `${PARAM} is required` })
      .int({ error: `${PARAM} must be an integer between 1 and ${L.EMBED_TTL_MAX_SECONDS}` })
      .min(1, { error: `${PARAM} must be an integer between 1 and ${L.EMBED_TTL_MAX_SECONDS}` })
      .max(L.EMBED_TTL_MAX_SECONDS, {
        error: `${PARAM} must be an integer between 1 and ${L.EMBED_TTL_MAX_SECONDS}`,
      })
      .meta({ description: 'How long the token is valid, in seconds (at most a day).' }),
  })
  .superRefine((p, ctx) => {
    if ((p.guid === undefined) === (p.index === undefined))
      ctx.addIssue({ code: 'custom', params: CROSS, path: [], message: 'give exactly one of guid and index' });
  })
  .meta({ title: 'TokensEmbedParams' });

export const tokensRevokeEmbedParams = z
  .strictObject({
    id: requiredString(L.KEYWORD_MAX).meta({ description: 'The id TOKENS.EMBED returned with the token.' }),
  })
  .meta({ title: 'TokensRevokeEmbedParams' });

export type QueriesExecuteParams = z.input<typeof queriesExecuteParams>;
export type TokensEmbedParams = z.input<typeof tokensEmbedParams>;
export type TokensRevokeEmbedParams = z.input<typeof tokensRevokeEmbedParams>;
export type IndexesFindParams = z.input<typeof indexesFindParams>;
export type CrosstabExecuteParams = z.input<typeof crosstabExecuteParams>;
export type ReportsFindParams = z.input<typeof reportsFindParams>;
export type ReportsMetadataParams = z.input<typeof reportsMetadataParams>;
export type ReportsScheduleParams = z.input<typeof reportsScheduleParams>;
export type ReportsSchedulesParams = z.input<typeof reportsSchedulesParams>;
export type ReportsUnscheduleParams = z.input<typeof reportsUnscheduleParams>;
export type ReportsExecuteParams = z.input<typeof reportsExecuteParams>;
export type ReportsUpdateParams = z.input<typeof reportsUpdateParams>;
export type ReportsDeleteParams = z.input<typeof reportsDeleteParams>;
export type SaveReportParam = z.input<typeof saveReportParam>;

import { z } from 'zod';
import { chartTotalsProblem, chartTypeProblem, findChartType, IMAGE_FORMATS } from '../chart-names';
import { quoteInput } from '@quarry/errors';
import * as L from '../limits';
import {
  arrayOf,
  CROSS,
  intInRange,
  isTimeZone,
  keywordOf,
  oneOf,
  optionalBoolean,
  optionalString,
  PARAM,
  requiredString,
  string,
} from './param-builders';
import {
  axisOrder,
  chartTotalItem,
  chartTypeNames,
  columnItem,
  filterParam,
  headerNamedTotals,
  orderValueText,
  resolveChartTotals,
  rowItem,
  totalDisplayName,
  totalItem,
  totalProblems,
} from './crosstab-parts';
import { cacheParam, saveReportParam } from './shared-params';
import { compareProblems } from './total-compare';

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
    otherRow: optionalBoolean().meta({
      default: false,
      description:
        'With rowLimit: a last row, "Other (N)", over the records of the N outermost row values not shown (left out by rowLimit or rowFilter), every total (distinct counts and medians too) computed from those records; absent when nothing was left out. In JSON its key is [] and it says other: N; its query selects exactly those records. Where a value shown reads "Other (N)" itself, CSV, HTML and XLSX label it "Other (N values)"; HTML marks its header with class quarry-other and data-other="N".',
    }),
    otherColumn: optionalBoolean().meta({
      default: false,
      description: 'With columnLimit: an "Other (N)" column, as otherRow does for rows.',
    }),
    timeZone: string(L.TIME_ZONE_MAX, 'an IANA time zone name')
      .optional()
      .meta({ default: L.DEFAULT_TIME_ZONE, description: 'The zone dateGroup keys are computed in (IANA name).' }),
    format: oneOf(L.CROSSTAB_FORMATS).optional().meta({
      default: 'html',
      description:
        'The table as HTML, JSON, CSV, an Excel workbook (xlsx, base64) or a PDF for paper (pdf, base64: A4, landscape when the table is wide, header rows repeated on every page, page numbers). With chartType only pdf, the chart as a PDF page (then without imageFormat).',
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
          'With chartType only: png (base64), svg (the SVG text), or echarts (the ECharts option the image is drawn from, as a JSON object, for clients that draw interactive charts). For a PDF of the chart, format pdf instead.',
      }),
    width: intInRange(L.CHART_SIZE_MIN, L.CHART_SIZE_MAX).meta({ default: L.DEFAULT_CHART_WIDTH }),
    height: intInRange(L.CHART_SIZE_MIN, L.CHART_SIZE_MAX).meta({ default: L.DEFAULT_CHART_HEIGHT }),
    cache: cacheParam,
    verify: optionalBoolean().meta({
      default: false,
      description:
        'true recomputes every returned cell along an independent path (plain passes over the records: no rollup, no cache, no twin pass) and answers meta.verify: {cells, mismatched}. The answer itself is then computed, never read from the cache, and costs about twice as much. Not an executable parameter: never saved in a report.',
    }),
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
    for (const [path, message] of [...totalProblems(p.totals), ...compareProblems(p)]) {
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
    if (p.otherRow && p.rowLimit === undefined)
      ctx.addIssue({ code: 'custom', params: CROSS, path: ['otherRow'], message: `${PARAM} needs rowLimit` });
    if (p.otherColumn && (p.columnLimit === undefined || !p.columns?.length))
      ctx.addIssue({
        code: 'custom',
        params: CROSS,
        path: ['otherColumn'],
        message: `${PARAM} needs columns and columnLimit`,
      });
    const axes = [
      ...p.rows.map((r, i) => ({ a: r, path: ['rows', i] })),
      ...(p.columns ?? []).map((c, i) => ({ a: c, path: ['columns', i] })),
    ];
    for (const { a, path } of axes) {
      if (typeof a !== 'object' || !a.order) continue;
      const seen = new Map<string, number>();
      a.order.forEach((v, j) => {
        const first = seen.get(orderValueText(v));
        if (first !== undefined)
          ctx.addIssue({
            code: 'custom',
            params: CROSS,
            path: [...path, 'order', j],
            message: `${PARAM} repeats ${JSON.stringify(v)} (already at order[${first}])`,
          });
        else seen.set(orderValueText(v), j);
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
    // With chartType, format says only "pdf" (the chart printed); imageFormat picks among the images. The
    // two name one output each, so both together contradict each other.
    if (p.format !== undefined && p.format !== 'pdf' && p.chartType !== undefined) {
      ctx.addIssue({
        code: 'custom',
        params: CROSS,
        path: ['format'],
        message: `${PARAM} is for tables; a chart (chartType) takes imageFormat instead, or format pdf`,
      });
    }
    if (p.format === 'pdf' && p.chartType !== undefined && p.imageFormat !== undefined) {
      ctx.addIssue({
        code: 'custom',
        params: CROSS,
        path: ['imageFormat'],
        message: `${PARAM} names an image; format pdf prints the chart as PDF: give one of them, not both`,
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
      const named = headerNamedTotals(p.totals, [...p.rows, ...(p.columns ?? [])]);
      const picked = p.chartTotals ? resolveChartTotals(p.chartTotals, named) : p.totals.map((_, i) => i);
      picked.forEach((at, i) => {
        const sent = p.chartTotals?.[i];
        if (at >= 0 || sent === undefined) return;
        const names = named.map((t) => JSON.stringify(totalDisplayName(t))).join(', ');
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

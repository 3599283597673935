import type { CrosstabExecuteParams, ResultOf } from '@quarry/client';
import { indexNamed } from '../app-state';
import { byId, el, fillSelect, on, onSubmit } from '../dom';
import { Panel } from '../panel';
import { showExportControl, startExportControl } from '../export-control';
import { followSaveName, saveAsReport } from '../save-report';
import { scrollingTable } from '../table-scroll';
import { AxisPicker } from './axis-picker';
import { chartSize, disposeChart, drawChart } from './chart-view';
import { importCrosstabTable } from './crosstab-table';
import { TotalsEditor } from './totals-editor';

const XLSX = 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet';
type Filter = NonNullable<CrosstabExecuteParams['rowFilter']>;

export const crosstabPanel = new Panel('crosstab');
let rows: AxisPicker;
let columns: AxisPicker;
let totals: TotalsEditor;
let last: CrosstabExecuteParams | undefined;

const value = (id: string) => byId<HTMLInputElement | HTMLSelectElement>(id).value;

/** The choices that name a total (order by, filter on) follow the list of totals. */
function totalsChanged(): void {
  const labels = totals.labels();
  fillSelect(byId('ct-order-by'), [['label', 'label'], ...labels.map((l, i): [string, string] => [String(i), l])]);
  fillSelect(
    byId('ct-filter-measure'),
    labels.map((l, i): [string, string] => [String(i), l]),
  );
}

export function refreshCrosstabFields(): void {
  const index = indexNamed(value('ct-index'));
  rows.setFields(index?.fields ?? []);
  columns.setFields(index?.fields ?? []);
  totals.setIndex(index);
  totalsChanged();
}

function syncOutput(): void {
  const chart = value('ct-chart') !== '';
  byId<HTMLSelectElement>('ct-image').disabled = !chart;
  byId<HTMLSelectElement>('ct-format').disabled = chart;
}

/** The form as CROSSTAB.EXECUTE params, or what is missing. */
function params(): CrosstabExecuteParams | string {
  const index = value('ct-index');
  if (!index) return 'Choose an index.';
  const rowItems = rows.items();
  if (rowItems.length === 0) return 'Add at least one row field (Rows, then Add).';
  const [first, ...more] = totals.totals();
  const columnItems = columns.items();
  const orderBy = value('ct-order-by');
  const direction = value('ct-order-dir') as 'asc' | 'desc';
  const limit = Number(value('ct-row-limit'));
  const filterOp = value('ct-filter-op');
  const filterValue = value('ct-filter-value');
  const timeZone = value('ct-time-zone').trim();
  const chart = value('ct-chart');
  const order =
    orderBy === 'label'
      ? direction === 'desc'
        ? { rowOrder: { by: 'label' as const, direction } }
        : {}
      : { rowOrder: { by: 'value' as const, measure: Number(orderBy), direction } };
  // A bare name for a row without options: the shortest request that says it.
  const [r0, ...rMore] = rowItems.map((r) => (Object.keys(r).length === 1 ? r.field : r));
  return {
    index,
    query: value('ct-query').trim() || '*',
    rows: [r0, ...rMore],
    ...(columnItems.length ? { columns: columnItems } : {}),
    totals: [first, ...more],
    ...(timeZone ? { timeZone } : {}),
    ...(filterOp && filterValue !== ''
      ? {
          rowFilter: {
            measure: Number(value('ct-filter-measure') || 0),
            op: filterOp as Filter['op'],
            value: Number(filterValue),
          },
        }
      : {}),
    ...(byId<HTMLInputElement>('ct-subtotals').checked ? { subtotals: true } : {}),
    ...order,
    ...(limit >= 1 ? { rowLimit: limit } : {}),
    // The rest of the values in one row; without a limit nothing is left out.
    ...(limit >= 1 && byId<HTMLInputElement>('ct-other-row').checked ? { otherRow: true } : {}),
    ...(chart
      ? {
          chartType: chart,
          imageFormat: value('ct-image') as 'echarts' | 'png' | 'svg',
          ...chartSize(byId('ct-result')),
        }
      : { format: value('ct-format') as 'html' | 'json' | 'csv' | 'xlsx' }),
  };
}

/**
 * A crosstab answer (a table in any format, or a chart) into `out`; the status line it calls for. Shared
 * with every panel that shows one (a report's run).
 */
export async function renderCrosstab(
  out: HTMLElement,
  res: ResultOf<'CROSSTAB.EXECUTE'>,
  p: { index: string; rows: unknown[] },
): Promise<string> {
  if ('chartType' in res) {
    const label = `${res.chartType} chart of ${p.index}`;
    if (res.contentType === 'application/json') {
      await drawChart(out, res.data, res, label);
      return `${res.chartType} chart: point at it for values; click a legend entry to hide or show it.`;
    }
    const src =
      res.contentType === 'image/png'
        ? `data:image/png;base64,${res.data}`
        : `data:image/svg+xml;base64,${btoa(unescape(encodeURIComponent(res.data)))}`;
    out.replaceChildren(
      el('img', { src, alt: label, width: String(res.width), height: String(res.height), class: 'chart' }),
    );
    return `${res.chartType} chart drawn as an image (${res.width}×${res.height}).`;
  }
  if (res.contentType === 'text/html') {
    const table = importCrosstabTable(res.data, p.rows.length);
    out.replaceChildren(table ? scrollingTable(table, `Crosstab of ${p.index}`) : el('p', {}, '(no table)'));
  } else if (res.contentType === 'application/json')
    out.replaceChildren(el('pre', { class: 'data', tabindex: '0' }, JSON.stringify(res.data, null, 2)));
  else if (res.contentType === XLSX)
    // The workbook as a file to download: a data: link (the page's CSP allows no script-made blobs to run).
    out.replaceChildren(
      el(
        'a',
        { href: `data:${XLSX};base64,${res.data}`, download: `${p.index}.xlsx`, class: 'download', id: 'ct-xlsx' },
        `Download ${p.index}.xlsx`,
      ),
    );
  else out.replaceChildren(el('pre', { class: 'data', tabindex: '0' }, res.data));
  return `Crosstab of ${p.index}: ${res.rowCount} rows × ${res.columnCount} columns.`;
}

async function show(p: CrosstabExecuteParams): Promise<void> {
  disposeChart();
  const res = await crosstabPanel.call('CROSSTAB.EXECUTE', p);
  if (!res) return;
  last = p;
  crosstabPanel.status(await renderCrosstab(byId('ct-result'), res, p));
  showExportControl('crosstab');
}

/** A saved crosstab: its choices back in the form, then run as saved. */
export async function openCrosstab(p: CrosstabExecuteParams): Promise<void> {
  crosstabPanel.reset();
  byId<HTMLSelectElement>('ct-index').value = p.index;
  byId<HTMLInputElement>('ct-query').value = p.query ?? '';
  refreshCrosstabFields();
  rows.load(p.rows.map((r) => (typeof r === 'string' ? { field: r } : r)));
  columns.load(p.columns);
  totals.load(p.totals);
  byId<HTMLInputElement>('ct-subtotals').checked = p.subtotals === true;
  byId<HTMLInputElement>('ct-row-limit').value = p.rowLimit ? String(p.rowLimit) : '';
  byId<HTMLInputElement>('ct-other-row').checked = p.otherRow === true;
  byId<HTMLInputElement>('ct-time-zone').value = p.timeZone ?? '';
  byId<HTMLSelectElement>('ct-order-by').value = p.rowOrder?.by === 'value' ? String(p.rowOrder.measure ?? 0) : 'label';
  byId<HTMLSelectElement>('ct-order-dir').value = p.rowOrder?.direction ?? 'asc';
  byId<HTMLSelectElement>('ct-filter-op').value = p.rowFilter?.op ?? '';
  byId<HTMLInputElement>('ct-filter-value').value = p.rowFilter ? String(p.rowFilter.value) : '';
  byId<HTMLSelectElement>('ct-chart').value = p.chartType ?? '';
  if (p.imageFormat) byId<HTMLSelectElement>('ct-image').value = p.imageFormat;
  if (p.format) byId<HTMLSelectElement>('ct-format').value = p.format;
  syncOutput();
  await show(p);
}

/**
 * The API's parameter names in an error, as the form labels them: [pattern, label, control id]. The
 * patterns take a path below the name (`rowOrder.measure`, `totals[1].field`); bare English words
 * (rows, query, format) are left alone, since a detail uses them as words too.
 */
const CONTROLS: ReadonlyArray<[RegExp, string, string]> = [
  [/\browLimit\b/g, 'Top rows', 'ct-row-limit'],
  [/\botherRow\b/g, 'Other row', 'ct-other-row'],
  [/\browOrder(\.\w+)?\b/g, 'Order rows by', 'ct-order-by'],
  [/\browFilter(\.\w+)?\b/g, 'Keep rows whose', 'ct-filter-measure'],
  [/\btimeZone\b/g, 'Time zone', 'ct-time-zone'],
  [/\bchartType\b/g, 'Show as', 'ct-chart'],
  [/\bimageFormat\b/g, 'Chart', 'ct-image'],
  [/\brows\[\d+\](\.\w+)?/g, 'Rows', 'ct-rows'],
  [/\bcolumns\[\d+\](\.\w+)?/g, 'Columns', 'ct-columns'],
  [/\btotals\[\d+\](\.\w+)?/g, 'Totals', 'ct-totals'],
];

/**
 * An error's detail in the words of this form. What the form has no control for is said as what to do
 * on screen: the chart's size is its card's (a wider window), and columns are cut by choosing fewer.
 */
export function explainCrosstabError(detail: string): { detail: string; controls: HTMLElement[] } {
  const named = new Set<string>();
  let text = detail
    .replace(/use a larger width and height/g, 'use a wider window')
    // The form draws every total it lists: fewer totals there is its way to pick them.
    .replace(/name the ones to draw in chartTotals/g, () => {
      named.add('ct-totals');
      return 'keep only those in “Totals”';
    })
    .replace(/narrow the query/g, () => {
      named.add('ct-query');
      return 'narrow “Records”';
    })
    .replace(/Use columnLimit: (\d+) \(with columnOrder to choose which\)/g, (_, n: string) => {
      named.add('ct-columns');
      return `Use at most ${n} values in “Columns” (narrow “Records” to choose which)`;
    });
  for (const [pattern, label, id] of CONTROLS)
    text = text.replace(pattern, () => {
      named.add(id);
      return `“${label}”`;
    });
  const controls = [...named].map((id) => document.getElementById(id)).filter((c): c is HTMLElement => c !== null);
  return { detail: text, controls };
}

export function startCrosstab(): void {
  rows = new AxisPicker(byId('ct-rows'), 'row');
  columns = new AxisPicker(byId('ct-columns'), 'column');
  totals = new TotalsEditor(byId('ct-totals'), totalsChanged);
  crosstabPanel.configure({ explain: explainCrosstabError, hintWanted: () => rows.items().length === 0 });
  on('ct-index', 'change', () => {
    rows.clear();
    columns.clear();
    refreshCrosstabFields();
  });
  on('ct-add-total', 'click', () => totals.add());
  byId('ct-totals').addEventListener('change', totalsChanged);
  on('ct-chart', 'change', syncOutput);
  syncOutput();
  onSubmit('crosstab-form', () => {
    const p = params();
    if (typeof p === 'string') {
      disposeChart();
      return crosstabPanel.fail(new Error(p));
    }
    void show(p);
  });
  startExportControl('crosstab', crosstabPanel, () => last && { method: 'CROSSTAB.EXECUTE', params: last });
  followSaveName('crosstab');
  onSubmit(
    'crosstab-save',
    () => void saveAsReport(crosstabPanel, 'crosstab', last && { method: 'CROSSTAB.EXECUTE', params: last }),
  );
}

export const crosstabChartTypes = (names: string[]) =>
  fillSelect(byId('ct-chart'), [['', '(a table)'], ...names.map((n): [string, string] => [n, n])]);

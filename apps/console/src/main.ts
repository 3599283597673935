import {
  QuarryClient,
  QuarryError,
  type CrosstabExecuteParams,
  type IndexesFindResult,
  type MethodName,
  type ParamsOf,
  type QueriesExecuteParams,
  type ResultOf,
} from '@quarry/client';

/*
 * The console: every action is one JSON-RPC call through @quarry/client, shown as curl. Record values
 * and server messages are always inserted as text; the only server HTML taken in is the crosstab table,
 * parsed inertly and imported element by element (no script can run: the page's CSP allows only this
 * file, and parsed <script> elements are dropped).
 */

type IndexInfo = IndexesFindResult['indexes'][number];
type Field = IndexInfo['fields'][number];

const TOKEN_KEY = 'quarry.console.token';
const AGGREGATIONS = [
  'Count',
  'Sum',
  'Average',
  'Min',
  'Max',
  'Median',
  'Percentile',
  'StdDev',
  'CountDistinct',
] as const;
const XLSX = 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet';
/** A calculated total is chosen like an aggregation, and then takes a name and a formula. */
const FORMULA = 'Formula';
const SHOW_AS: Array<[string, string]> = [
  ['value', 'value'],
  ['percentOfGrandTotal', '% of grand total'],
  ['percentOfRowTotal', '% of row total'],
  ['percentOfColumnTotal', '% of column total'],
  ['runningTotal', 'running total'],
  ['differenceFromPrevious', 'difference from previous'],
  ['percentDifferenceFromPrevious', '% difference from previous'],
];

function el<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  attrs: Record<string, string> = {},
  ...children: Array<Node | string>
): HTMLElementTagNameMap[K] {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, v);
  for (const c of children) node.append(c);
  return node;
}

function byId<T extends HTMLElement>(id: string): T {
  const node = document.getElementById(id);
  if (!node) throw new Error(`#${id} is missing from the page`);
  return node as T;
}

const state: {
  client?: QuarryClient;
  indexes: IndexInfo[];
  search?: QueriesExecuteParams;
  lastCrosstab?: CrosstabExecuteParams;
  chartTypes: string[];
  /** The report whose versions are listed. */
  versionsOf?: { guid: string; name: string; index: string };
} = {
  indexes: [],
  chartTypes: [],
};

function setStatus(text: string): void {
  byId('status').textContent = text;
}

function showError(err: unknown): void {
  const box = byId('error');
  box.replaceChildren();
  if (err instanceof QuarryError) {
    box.append(el('strong', {}, `${err.code} ${err.title}`), ' ', err.detail);
    if (err.requestId) box.append(el('small', {}, ` (request ${err.requestId})`));
  } else {
    box.append(el('strong', {}, 'Request failed'), ' ', err instanceof Error ? err.message : String(err));
  }
  box.hidden = false;
}

function clearError(): void {
  byId('error').hidden = true;
}

/** The call as a copyable curl command; the token stays out of it ($QUARRY_TOKEN). */
function showCurl(method: string, params: object): void {
  const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method, params });
  const quoted = `'${body.replace(/'/g, `'\\''`)}'`;
  byId('curl').textContent =
    `curl -s ${location.origin}/api/v1 \\\n  -H "Authorization: Bearer $QUARRY_TOKEN" \\\n  -H 'Content-Type: application/json' \\\n  -d ${quoted}`;
}

async function call<M extends MethodName>(method: M, params: ParamsOf<M>): Promise<ResultOf<M> | undefined> {
  showCurl(method, params);
  if (!state.client) {
    showError(new Error('Enter an API token first'));
    return undefined;
  }
  clearError();
  try {
    return (await state.client.call(method, params)).data;
  } catch (err) {
    showError(err);
    return undefined;
  }
}

// ---- tabs -------------------------------------------------------------------------------------------

const TABS = ['indexes', 'search', 'crosstab', 'reports'] as const;
type Tab = (typeof TABS)[number];

function selectTab(tab: Tab): void {
  for (const t of TABS) {
    byId(`tab-${t}`).setAttribute('aria-selected', String(t === tab));
    byId(`panel-${t}`).hidden = t !== tab;
  }
}

// ---- indexes ----------------------------------------------------------------------------------------

function fillSelect(select: HTMLSelectElement, values: Array<[string, string]>, keep = true): void {
  const previous = select.value;
  select.replaceChildren(...values.map(([value, label]) => el('option', { value }, label)));
  if (keep && values.some(([v]) => v === previous)) select.value = previous;
}

function indexNamed(name: string): IndexInfo | undefined {
  return state.indexes.find((i) => i.name === name);
}

function renderIndexes(): void {
  const list = byId('index-list');
  list.replaceChildren(
    ...state.indexes.map((i) => {
      const fields = el(
        'ul',
        { class: 'fields' },
        ...i.fields.map((f) => el('li', {}, el('span', {}, f.name), ' ', el('small', {}, f.type))),
      );
      const views = el('p', { class: 'views' }, el('strong', {}, 'Dynamic views: '), i.dynamicViews.join(', ') || '—');
      const search = el('button', { type: 'button' }, 'Search');
      search.addEventListener('click', () => {
        byId<HTMLSelectElement>('search-index').value = i.name;
        selectTab('search');
        void runSearch(1);
      });
      const pivot = el('button', { type: 'button', class: 'quiet' }, 'Crosstab');
      pivot.addEventListener('click', () => {
        byId<HTMLSelectElement>('ct-index').value = i.name;
        refreshCrosstabFields();
        selectTab('crosstab');
      });
      return el(
        'article',
        { class: 'card' },
        el('h3', {}, i.name),
        el(
          'p',
          { class: 'meta' },
          `${i.recordCount.toLocaleString('en')} records · updated ${i.updatedAt.slice(0, 10)}`,
        ),
        el('p', {}, i.description || 'No description.'),
        fields,
        views,
        el('div', { class: 'actions' }, search, pivot),
      );
    }),
  );
  const names: Array<[string, string]> = state.indexes.map((i) => [i.name, i.name]);
  fillSelect(byId('search-index'), names);
  fillSelect(byId('ct-index'), names);
  refreshCrosstabFields();
}

async function loadIndexes(): Promise<void> {
  const found: IndexInfo[] = [];
  let cursor: string | undefined;
  do {
    const page = await call('INDEXES.FIND', cursor ? { limit: 200, cursor } : { limit: 200 });
    if (!page) return;
    found.push(...page.indexes);
    cursor = page.nextCursor ?? undefined;
  } while (cursor);
  state.indexes = found;
  renderIndexes();
  setStatus(`${found.length} readable ${found.length === 1 ? 'index' : 'indexes'}.`);
}

// ---- search -----------------------------------------------------------------------------------------

function cellText(value: unknown): string {
  if (value === null || value === undefined) return '';
  return typeof value === 'object' ? JSON.stringify(value) : String(value);
}

async function runSearch(page: number): Promise<void> {
  const index = byId<HTMLSelectElement>('search-index').value;
  if (!index) return;
  const previous = state.search;
  const params: QueriesExecuteParams = {
    index,
    query: byId<HTMLInputElement>('search-query').value.trim() || '*',
    page,
    pageSize: Number(byId<HTMLSelectElement>('search-size').value),
    ...(previous?.index === index && previous.sort ? { sort: previous.sort } : {}),
  };
  await showSearch(params);
}

async function showSearch(params: QueriesExecuteParams): Promise<void> {
  const res = await call('QUERIES.EXECUTE', params);
  if (!res) return;
  state.search = params;
  const sort = params.sort?.[0];
  const head = el(
    'tr',
    {},
    ...res.fields.map((f: Field) => {
      const active = sort?.field === f.name;
      const dir = active ? (sort?.direction ?? 'asc') : undefined;
      const button = el(
        'button',
        { type: 'button', class: 'sort', title: `Sort by ${f.name}` },
        f.name,
        dir ? (dir === 'asc' ? ' ▲' : ' ▼') : '',
      );
      button.addEventListener('click', () => {
        const direction = active && dir === 'asc' ? 'desc' : 'asc';
        void showSearch({ ...params, page: 1, sort: [{ field: f.name, direction }] });
      });
      return el(
        'th',
        { scope: 'col', 'aria-sort': dir === 'asc' ? 'ascending' : dir === 'desc' ? 'descending' : 'none' },
        button,
      );
    }),
  );
  const cell = (value: unknown) => {
    const text = cellText(value);
    // The full value on hover, as text: the cell itself may end in an ellipsis.
    return el('td', text.length > 24 ? { title: text } : {}, text);
  };
  const rows = res.records.map((r) => el('tr', {}, ...res.fields.map((f: Field) => cell(r[f.name]))));
  byId('search-table').replaceChildren(el('thead', {}, head), el('tbody', {}, ...rows));
  byId('search-summary').textContent = `${res.total.toLocaleString('en')} records match ${res.query}`;
  byId('search-page').textContent = res.totalPages ? `page ${res.page} of ${res.totalPages}` : 'no records';
  byId<HTMLButtonElement>('search-prev').disabled = res.page <= 1;
  byId<HTMLButtonElement>('search-next').disabled = res.page >= res.totalPages;
  setStatus(`Search on ${res.index}: ${res.records.length} of ${res.total} records shown.`);
}

// ---- crosstab ---------------------------------------------------------------------------------------

function refreshCrosstabFields(): void {
  const index = indexNamed(byId<HTMLSelectElement>('ct-index').value);
  const fields: Array<[string, string]> = (index?.fields ?? []).map((f) => [f.name, f.name]);
  fillSelect(byId('ct-rows'), fields);
  fillSelect(byId('ct-columns'), fields);
  const totals = byId('ct-totals');
  if (totals.children.length === 0) addTotalRow();
  for (const row of Array.from(totals.querySelectorAll<HTMLElement>('.total'))) fillTotalRow(row);
}

function fillTotalRow(row: HTMLElement): void {
  const index = indexNamed(byId<HTMLSelectElement>('ct-index').value);
  // Counts take any field; the numeric aggregations are refused on text by the server, with a message.
  fillSelect(row.querySelector<HTMLSelectElement>('.t-field')!, [
    ['', '(records)'],
    ...(index?.fields ?? []).map((f): [string, string] => [f.name, `${f.name} (${f.type})`]),
  ]);
  fillSelect(row.querySelector<HTMLSelectElement>('.t-view')!, [
    ['', '(none)'],
    ...(index?.dynamicViews ?? []).filter((v) => v !== 'Records').map((v): [string, string] => [v, `distinct ${v}`]),
  ]);
}

function addTotalRow(): void {
  const n = byId('ct-totals').children.length + 1;
  const agg = el(
    'select',
    { class: 't-agg', 'aria-label': `Total ${n} aggregation` },
    ...[...AGGREGATIONS, FORMULA].map((a) => el('option', { value: a }, a)),
  );
  const field = el('select', { class: 't-field', 'aria-label': `Total ${n} field` });
  const percentile = el('input', {
    class: 't-pct',
    type: 'number',
    min: '0',
    max: '100',
    step: 'any',
    placeholder: 'p',
    'aria-label': `Total ${n} percentile`,
    hidden: '',
  });
  const name = el('input', { class: 't-name', type: 'text', placeholder: 'name', 'aria-label': `Total ${n} name` });
  const formula = el('input', {
    class: 't-formula',
    type: 'text',
    placeholder: '[Sum (Cost)] / [Count (Records)]',
    'aria-label': `Total ${n} formula`,
    hidden: '',
  });
  agg.addEventListener('change', () => {
    percentile.hidden = agg.value !== 'Percentile';
    const isFormula = agg.value === FORMULA;
    formula.hidden = !isFormula;
    field.hidden = isFormula;
    view.hidden = isFormula;
  });
  const view = el('select', { class: 't-view', 'aria-label': `Total ${n} dynamic view` });
  const showAs = el(
    'select',
    { class: 't-show', 'aria-label': `Total ${n} show as` },
    ...SHOW_AS.map(([v, label]) => el('option', { value: v }, label)),
  );
  const remove = el('button', { type: 'button', class: 'quiet', 'aria-label': `Remove total ${n}` }, '×');
  const row = el('div', { class: 'total row' }, agg, field, percentile, formula, view, name, showAs, remove);
  remove.addEventListener('click', () => {
    if (byId('ct-totals').children.length > 1) row.remove();
  });
  byId('ct-totals').append(row);
  fillTotalRow(row);
}

function selected(select: HTMLSelectElement): string[] {
  return Array.from(select.selectedOptions).map((o) => o.value);
}

function crosstabParams(): CrosstabExecuteParams | string {
  const index = byId<HTMLSelectElement>('ct-index').value;
  const rows = selected(byId('ct-rows'));
  if (!index) return 'Choose an index.';
  if (rows.length === 0) return 'Choose at least one row field.';
  const totals = Array.from(byId('ct-totals').querySelectorAll<HTMLElement>('.total')).map((row) => {
    const aggregationType = row.querySelector<HTMLSelectElement>('.t-agg')!.value;
    const field = row.querySelector<HTMLSelectElement>('.t-field')!.value;
    const view = row.querySelector<HTMLSelectElement>('.t-view')!.value;
    const name = row.querySelector<HTMLInputElement>('.t-name')!.value.trim();
    const percentile = row.querySelector<HTMLInputElement>('.t-pct')!.value;
    const showAs = row.querySelector<HTMLSelectElement>('.t-show')!.value as NonNullable<
      CrosstabExecuteParams['totals'][number]['showAs']
    >;
    const shown = { ...(name ? { name } : {}), ...(showAs !== 'value' ? { showAs } : {}) };
    if (aggregationType === FORMULA)
      return { ...shown, formula: row.querySelector<HTMLInputElement>('.t-formula')!.value };
    return {
      aggregationType,
      ...(view ? { dynamicView: view } : field ? { field } : {}),
      ...(aggregationType === 'Percentile' && percentile !== '' ? { percentile: Number(percentile) } : {}),
      ...shown,
    };
  });
  // Date fields group by the chosen part, numeric fields fall in bins of the chosen width.
  const fields = new Map((indexNamed(index)?.fields ?? []).map((f) => [f.name, f.type]));
  const dateGroup = byId<HTMLSelectElement>('ct-date-group').value;
  const binWidth = Number(byId<HTMLInputElement>('ct-bin').value);
  const axis = (field: string) => {
    const type = fields.get(field);
    if (type === 'date' && dateGroup)
      return { field, dateGroup: dateGroup as NonNullable<CrosstabExecuteParams['columns']>[number]['dateGroup'] };
    if ((type === 'integer' || type === 'number') && binWidth > 0) return { field, bin: { width: binWidth } };
    return { field };
  };
  const timeZone = byId<HTMLInputElement>('ct-time-zone').value.trim();
  const filterOp = byId<HTMLSelectElement>('ct-filter-op').value;
  const filterValue = byId<HTMLInputElement>('ct-filter-value').value;
  const rowFilter =
    filterOp && filterValue !== ''
      ? {
          rowFilter: {
            measure: 0,
            op: filterOp as NonNullable<CrosstabExecuteParams['rowFilter']>['op'],
            value: Number(filterValue),
          },
        }
      : {};
  const limit = Number(byId<HTMLInputElement>('ct-row-limit').value);
  const chart = byId<HTMLSelectElement>('ct-chart').value;
  const columns = selected(byId('ct-columns')).map(axis);
  const [first, ...more] = totals;
  const [firstRow, ...moreRows] = rows;
  return {
    index,
    query: byId<HTMLInputElement>('ct-query').value.trim() || '*',
    rows: [axis(firstRow), ...moreRows.map(axis)],
    ...(columns.length ? { columns } : {}),
    totals: [first, ...more],
    ...(timeZone ? { timeZone } : {}),
    ...rowFilter,
    ...(byId<HTMLInputElement>('ct-subtotals').checked ? { subtotals: true } : {}),
    ...(limit >= 1 ? { rowLimit: limit, rowOrder: { by: 'value', direction: 'desc' } } : {}),
    ...(chart
      ? { chartType: chart, imageFormat: byId<HTMLSelectElement>('ct-image').value, width: 900, height: 560 }
      : { format: byId<HTMLSelectElement>('ct-format').value as 'html' | 'json' | 'csv' | 'xlsx' }),
  };
}

const TABLE_TAGS = new Set([
  'table',
  'caption',
  'thead',
  'tbody',
  'tfoot',
  'tr',
  'th',
  'td',
  'colgroup',
  'col',
  'span',
  'abbr',
]);
const TABLE_ATTRS = new Set(['colspan', 'rowspan', 'scope', 'class', 'headers', 'id', 'title', 'aria-label', 'role']);

/** Rebuilds an element from the allowlist: table elements, their structural attributes, and text. */
function rebuild(node: Node): Node | null {
  if (node.nodeType === Node.TEXT_NODE) return document.createTextNode(node.textContent ?? '');
  if (!(node instanceof Element)) return null;
  const tag = node.tagName.toLowerCase();
  if (!TABLE_TAGS.has(tag)) return node.textContent ? document.createTextNode(node.textContent) : null;
  const copy = document.createElement(tag);
  for (const attr of Array.from(node.attributes))
    if (TABLE_ATTRS.has(attr.name)) copy.setAttribute(attr.name, attr.value);
  for (const child of Array.from(node.childNodes)) {
    const c = rebuild(child);
    if (c) copy.append(c);
  }
  return copy;
}

/**
 * The server's crosstab table, parsed inertly and rebuilt from an allowlist (anything else becomes its
 * text), so even a server bug that let markup through could not add a script, a link or a redirect.
 */
function importTable(html: string): Node {
  // The table's own <style> rule would be refused by the page's CSP (and reported): the console's
  // stylesheet styles the table instead.
  const doc = new DOMParser().parseFromString(html.replace(/<style[\s\S]*?<\/style>/gi, ''), 'text/html');
  const table = doc.querySelector('table');
  return (table && rebuild(table)) ?? document.createTextNode('(no table)');
}

async function showCrosstab(params: CrosstabExecuteParams): Promise<void> {
  const res = await call('CROSSTAB.EXECUTE', params);
  if (!res) return;
  state.lastCrosstab = params;
  setStatus(renderCrosstab(byId('crosstab-result'), res, params.index));
}

/** A crosstab answer (a table in any format, or a chart) into `out`; returns the status line to show. */
function renderCrosstab(out: HTMLElement, res: ResultOf<'CROSSTAB.EXECUTE'>, index: string): string {
  if ('chartType' in res && res.contentType === 'application/json') {
    out.replaceChildren(el('pre', { class: 'data' }, JSON.stringify(res.data, null, 2)));
    return `${res.chartType} chart as its ECharts option.`;
  }
  if ('chartType' in res) {
    const src =
      res.contentType === 'image/png'
        ? `data:image/png;base64,${res.data}`
        : `data:image/svg+xml;base64,${btoa(unescape(encodeURIComponent(res.data)))}`;
    out.replaceChildren(
      el('img', {
        src,
        alt: `${res.chartType} chart of ${index}`,
        width: String(res.width),
        height: String(res.height),
        class: 'chart',
      }),
    );
    return `${res.chartType} chart drawn (${res.width}×${res.height}).`;
  }
  if (res.contentType === 'text/html') out.replaceChildren(el('div', { class: 'table-wrap' }, importTable(res.data)));
  else if (res.contentType === 'application/json')
    out.replaceChildren(el('pre', { class: 'data' }, JSON.stringify(res.data, null, 2)));
  else if (res.contentType === XLSX)
    // The workbook as a file to download: a data: link (the page's CSP allows no script-made blobs to run).
    out.replaceChildren(
      el(
        'a',
        { href: `data:${XLSX};base64,${res.data}`, download: `${index}.xlsx`, class: 'download', id: 'ct-xlsx' },
        `Download ${index}.xlsx`,
      ),
    );
  else out.replaceChildren(el('pre', { class: 'data' }, res.data));
  return `Crosstab: ${res.rowCount} rows × ${res.columnCount} columns.`;
}

// ---- reports ----------------------------------------------------------------------------------------

async function saveReport(kind: 'search' | 'crosstab'): Promise<void> {
  const name = byId<HTMLInputElement>(`${kind}-save-name`).value.trim();
  const shared = byId<HTMLInputElement>(`${kind}-save-shared`).checked;
  if (!name) return showError(new Error('Give the report a name'));
  const saveReport = { name, ...(shared ? { shared } : {}) };
  const res =
    kind === 'search'
      ? state.search && (await call('QUERIES.EXECUTE', { ...state.search, saveReport }))
      : state.lastCrosstab && (await call('CROSSTAB.EXECUTE', { ...state.lastCrosstab, saveReport }));
  if (!res) return;
  await findReports();
  // After the list's own status line, so that this one is what stays on screen.
  setStatus(`Saved report "${name}" (${res.report?.guid ?? ''}).`);
}

async function findReports(): Promise<void> {
  const search = byId<HTMLInputElement>('reports-search').value.trim();
  const res = await call('REPORTS.FIND', search ? { search, limit: 100 } : { limit: 100 });
  if (!res) return;
  const head = el(
    'tr',
    {},
    ...['Name', 'Type', 'Index', 'Owner', 'Updated', ''].map((h) => el('th', { scope: 'col' }, h)),
  );
  const rows = res.reports.map((r) => {
    const open = el('button', { type: 'button' }, 'Open');
    open.addEventListener('click', () => void openReport(r.guid));
    const versions = el('button', { type: 'button', class: 'quiet' }, 'Versions');
    versions.addEventListener('click', () => void showVersions(r.guid));
    return el(
      'tr',
      {},
      el('td', {}, r.name, r.shared ? el('small', {}, ' shared') : ''),
      el('td', {}, r.type),
      el('td', {}, r.index),
      el('td', {}, r.owner),
      el('td', {}, r.updatedAt.slice(0, 16).replace('T', ' ')),
      el('td', { class: 'cell-actions' }, open, versions),
    );
  });
  byId('reports-table').replaceChildren(el('thead', {}, head), el('tbody', {}, ...rows));
  setStatus(`${res.reports.length} reports.`);
}

async function openReport(guid: string): Promise<void> {
  const meta = await call('REPORTS.METADATA', { guid });
  if (!meta) return;
  if (meta.method === 'QUERIES.EXECUTE') {
    const params = meta.params as unknown as QueriesExecuteParams;
    byId<HTMLSelectElement>('search-index').value = params.index;
    byId<HTMLInputElement>('search-query').value = params.query ?? '';
    // Paging goes on with the report's page size, which the list may not offer yet.
    const size = byId<HTMLSelectElement>('search-size');
    const wanted = String(params.pageSize ?? 50);
    if (!Array.from(size.options).some((o) => o.value === wanted)) size.append(el('option', { value: wanted }, wanted));
    size.value = wanted;
    selectTab('search');
    await showSearch(params);
  } else {
    const params = meta.params as unknown as CrosstabExecuteParams;
    byId<HTMLSelectElement>('ct-index').value = params.index;
    byId<HTMLInputElement>('ct-query').value = params.query ?? '';
    refreshCrosstabFields();
    selectTab('crosstab');
    await showCrosstab(params);
  }
  setStatus(`Opened report "${meta.name}".`);
}

/** A report's versions, each to run on the index as it is now or as it was when that version was saved. */
async function showVersions(guid: string): Promise<void> {
  const meta = await call('REPORTS.METADATA', { guid });
  if (!meta) return;
  const head = el('tr', {}, ...['Version', 'Saved', 'Index load', ''].map((h) => el('th', { scope: 'col' }, h)));
  const rows = [...meta.versions].reverse().map((v) => {
    const run = el('button', { type: 'button' }, 'Run');
    run.addEventListener('click', () => void runReport(guid, v.version, 'latest'));
    // A version saved before index loads were recorded has no load to run on.
    const asSaved = el(
      'button',
      v.indexVersion > 0
        ? { type: 'button', class: 'quiet' }
        : { type: 'button', class: 'quiet', disabled: '', title: 'Saved before index loads were recorded' },
      'Run as saved',
    );
    asSaved.addEventListener('click', () => void runReport(guid, v.version, 'saved'));
    return el(
      'tr',
      {},
      el('td', {}, String(v.version), v.version === meta.version ? el('small', {}, ' latest') : ''),
      el('td', {}, v.savedAt.slice(0, 16).replace('T', ' ')),
      el('td', {}, v.indexVersion > 0 ? String(v.indexVersion) : '—'),
      el('td', { class: 'cell-actions' }, run, asSaved),
    );
  });
  state.versionsOf = { guid, name: meta.name, index: meta.index };
  const box = byId('report-versions');
  box.replaceChildren(
    el('h3', {}, `Versions of "${meta.name}"`),
    el(
      'div',
      { class: 'table-wrap' },
      el('table', { class: 'grid', id: 'versions-table' }, el('thead', {}, head), el('tbody', {}, ...rows)),
    ),
  );
  box.hidden = false;
  byId('report-run').replaceChildren();
  setStatus(`"${meta.name}": ${meta.versions.length} version${meta.versions.length === 1 ? '' : 's'}.`);
}

async function runReport(guid: string, version: number, asOf: 'latest' | 'saved'): Promise<void> {
  const res = await call('REPORTS.EXECUTE', { guid, version, asOf });
  if (!res) return;
  const out = byId('report-run');
  const caption = el(
    'p',
    { class: 'meta', id: 'report-run-caption' },
    `Version ${res.report.version}, run on load ${res.indexVersion} of the index${asOf === 'saved' ? ' (as saved)' : ' (latest)'}`,
  );
  const body = el('div', {});
  let status: string;
  if ('records' in res) {
    const head = el('tr', {}, ...res.fields.map((f: Field) => el('th', { scope: 'col' }, f.name)));
    const rows = res.records.map((r) =>
      el('tr', {}, ...res.fields.map((f: Field) => el('td', {}, cellText(r[f.name])))),
    );
    body.append(
      el(
        'div',
        { class: 'table-wrap' },
        el('table', { class: 'grid' }, el('thead', {}, head), el('tbody', {}, ...rows)),
      ),
    );
    status = `Report on ${res.index}: ${res.records.length} of ${res.total} records shown.`;
  } else status = renderCrosstab(body, res, state.versionsOf?.index ?? 'report');
  out.replaceChildren(caption, body);
  setStatus(`"${state.versionsOf?.name ?? 'Report'}", version ${res.report.version}: ${status}`);
}

// ---- start ------------------------------------------------------------------------------------------

async function connect(token: string): Promise<void> {
  state.client = new QuarryClient({ url: location.origin, token });
  setStatus('Connecting…');
  await loadIndexes();
  // Kept for this tab only once the server took it; a refused token is not retried on reload.
  if (byId('error').hidden) sessionStorage.setItem(TOKEN_KEY, token);
  else sessionStorage.removeItem(TOKEN_KEY);
}

async function loadChartTypes(): Promise<void> {
  // The server's own list, from its OpenRPC document (no token needed).
  try {
    const doc = (await new QuarryClient({ url: location.origin }).discover()) as {
      methods?: Array<{ name: string; params: Array<{ name: string; schema: { examples?: unknown } }> }>;
    };
    const param = doc.methods?.find((m) => m.name === 'CROSSTAB.EXECUTE')?.params.find((p) => p.name === 'chartType');
    const names = Array.isArray(param?.schema.examples)
      ? param.schema.examples.filter((x): x is string => typeof x === 'string')
      : [];
    state.chartTypes = names;
    fillSelect(byId('ct-chart'), [['', '(no chart)'], ...names.map((n): [string, string] => [n, n])]);
  } catch (err) {
    showError(err);
  }
}

function on(id: string, event: string, handler: (e: Event) => void): void {
  byId(id).addEventListener(event, handler);
}

function start(): void {
  for (const t of TABS) on(`tab-${t}`, 'click', () => selectTab(t));
  on('token-form', 'submit', (e) => {
    e.preventDefault();
    const token = byId<HTMLInputElement>('token').value.trim();
    if (token) void connect(token);
  });
  on('forget', 'click', () => {
    sessionStorage.removeItem(TOKEN_KEY);
    state.client = undefined;
    byId<HTMLInputElement>('token').value = '';
    setStatus('Token forgotten.');
  });
  on('search-form', 'submit', (e) => {
    e.preventDefault();
    if (state.search?.index !== byId<HTMLSelectElement>('search-index').value) state.search = undefined;
    void runSearch(1);
  });
  on('search-prev', 'click', () => void runSearch(Math.max(1, (state.search?.page ?? 1) - 1)));
  on('search-next', 'click', () => void runSearch((state.search?.page ?? 1) + 1));
  on('search-save', 'submit', (e) => {
    e.preventDefault();
    void saveReport('search');
  });
  on('ct-index', 'change', refreshCrosstabFields);
  on('ct-add-total', 'click', addTotalRow);
  on('crosstab-form', 'submit', (e) => {
    e.preventDefault();
    const params = crosstabParams();
    if (typeof params === 'string') return showError(new Error(params));
    void showCrosstab(params);
  });
  on('crosstab-save', 'submit', (e) => {
    e.preventDefault();
    void saveReport('crosstab');
  });
  on('reports-form', 'submit', (e) => {
    e.preventDefault();
    void findReports();
  });
  on('tab-reports', 'click', () => void (state.client && findReports()));
  on('copy-curl', 'click', () => void navigator.clipboard?.writeText(byId('curl').textContent ?? ''));
  void loadChartTypes();
  const saved = sessionStorage.getItem(TOKEN_KEY);
  if (saved) {
    byId<HTMLInputElement>('token').value = saved;
    void connect(saved);
  }
}

start();

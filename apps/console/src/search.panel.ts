import type { QueriesExecuteParams } from '@quarry/client';
import type { Field } from './app-state';
import { byId, el, on, onSubmit } from './dom';
import { showExportControl, startExportControl } from './export-control';
import { formatNumber, isNumericType } from './number-format';
import { Panel } from './panel';
import { followSaveName, saveAsReport } from './save-report';
import { scrollingTable } from './table-scroll';

export const searchPanel = new Panel('search');
let current: QueriesExecuteParams | undefined;

function cell(value: unknown, numeric: boolean, first: boolean): HTMLTableCellElement {
  if (typeof value === 'number' && numeric) {
    // The reader's format; the exact value on hover.
    return el('td', { class: `num${first ? ' row-label' : ''}`, title: String(value) }, formatNumber(value));
  }
  const text =
    value === null || value === undefined ? '' : typeof value === 'object' ? JSON.stringify(value) : String(value);
  // The full value on hover, as text: the cell itself may end in an ellipsis.
  return el('td', { ...(text.length > 24 ? { title: text } : {}), ...(first ? { class: 'row-label' } : {}) }, text);
}

export async function showSearch(params: QueriesExecuteParams): Promise<void> {
  const res = await searchPanel.call('QUERIES.EXECUTE', params);
  if (!res) {
    byId('search-pager').hidden = true;
    return;
  }
  current = params;
  const sort = params.sort?.[0];
  const head = el(
    'tr',
    {},
    ...res.fields.map((f: Field, i) => {
      const active = sort?.field === f.name;
      const dir = active ? (sort?.direction ?? 'asc') : undefined;
      const next = active && dir === 'asc' ? 'descending' : 'ascending';
      const button = el(
        'button',
        { type: 'button', class: 'sort', 'aria-label': `${f.name}: sort ${next}` },
        f.name,
        dir ? (dir === 'asc' ? ' ▲' : ' ▼') : '',
      );
      button.addEventListener('click', () => {
        const direction = active && dir === 'asc' ? 'desc' : 'asc';
        void showSearch({ ...params, page: 1, sort: [{ field: f.name, direction }] });
      });
      const classes = [isNumericType(f.type) ? 'num' : '', i === 0 ? 'row-label corner' : ''].join(' ').trim();
      return el(
        'th',
        {
          scope: 'col',
          ...(classes ? { class: classes } : {}),
          'aria-sort': dir === 'asc' ? 'ascending' : dir === 'desc' ? 'descending' : 'none',
        },
        button,
      );
    }),
  );
  const numeric = res.fields.map((f: Field) => isNumericType(f.type));
  const rows = res.records.map((r) =>
    el('tr', {}, ...res.fields.map((f: Field, i) => cell(r[f.name], numeric[i], i === 0))),
  );
  const table = el('table', { id: 'search-table', class: 'grid' }, el('thead', {}, head), el('tbody', {}, ...rows));
  byId('search-result').replaceChildren(
    el('p', { id: 'search-summary', class: 'summary' }, `${formatNumber(res.total)} records match ${res.query}`),
    scrollingTable(table, `Records of ${res.index}`),
  );
  byId('search-page').textContent = res.totalPages
    ? `page ${formatNumber(res.page)} of ${formatNumber(res.totalPages)}`
    : 'no records';
  byId('search-pager').hidden = false;
  showExportControl('search');
  byId<HTMLButtonElement>('search-prev').disabled = res.page <= 1;
  byId<HTMLButtonElement>('search-next').disabled = res.page >= res.totalPages;
  const from = (res.page - 1) * res.pageSize + 1;
  const sorted = sort ? `, sorted by ${sort.field} ${sort.direction === 'desc' ? 'descending' : 'ascending'}` : '';
  searchPanel.status(
    res.total === 0
      ? `No record of ${res.index} matches ${res.query}.`
      : `Records ${formatNumber(from)}–${formatNumber(from + res.records.length - 1)} of ${formatNumber(res.total)}${sorted}.`,
  );
}

export function runSearch(page: number): void {
  const index = byId<HTMLSelectElement>('search-index').value;
  if (!index) return searchPanel.fail(new Error('Choose an index to search.'));
  // A new index starts unsorted: the old sort field may not exist there.
  const sort = current?.index === index ? current.sort : undefined;
  void showSearch({
    index,
    query: byId<HTMLInputElement>('search-query').value.trim() || '*',
    page,
    pageSize: Number(byId<HTMLSelectElement>('search-size').value),
    ...(sort ? { sort } : {}),
  });
}

/** A saved search: its query and page size back in the form, then run as saved. */
export async function openSearch(params: QueriesExecuteParams): Promise<void> {
  searchPanel.reset();
  byId<HTMLSelectElement>('search-index').value = params.index;
  byId<HTMLInputElement>('search-query').value = params.query ?? '';
  // Paging goes on with the report's page size, which the list may not offer yet.
  const size = byId<HTMLSelectElement>('search-size');
  const wanted = String(params.pageSize ?? 20);
  if (!Array.from(size.options).some((o) => o.value === wanted)) size.append(el('option', { value: wanted }, wanted));
  size.value = wanted;
  await showSearch(params);
}

export function startSearch(): void {
  onSubmit('search-form', () => runSearch(1));
  on('search-prev', 'click', () => runSearch(Math.max(1, (current?.page ?? 1) - 1)));
  on('search-next', 'click', () => runSearch((current?.page ?? 1) + 1));
  startExportControl('search', searchPanel, () => current && { method: 'QUERIES.EXECUTE', params: current });
  followSaveName('search');
  onSubmit(
    'search-save',
    () => void saveAsReport(searchPanel, 'search', current && { method: 'QUERIES.EXECUTE', params: current }),
  );
}

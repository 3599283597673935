import type { QueriesExecuteParams } from '@quarry/client';
import { indexNamed, type Field } from './app-state';
import { byId, el, on, onSubmit } from './dom';
import { showExportControl, startExportControl } from './export-control';
import { fragmentNodes } from './highlight-fragment';
import { formatNumber, isNumericType } from './number-format';
import { Panel } from './panel';
import { followSaveName, saveAsReport } from './save-report';
import { facetFields, facetLists, filterChips, narrowedQuery, sameFilter, type FacetFilter } from './search-facets';
import { scrollingTable } from './table-scroll';

export const searchPanel = new Panel('search');
let current: QueriesExecuteParams | undefined;
/** The facet values the analyst clicked, and the query they narrow (what the query box holds). */
let narrowing: { index: string; query: string; filters: FacetFilter[] } | undefined;
const SCORE = '_score';

function cell(value: unknown, numeric: boolean, first: boolean, fragment?: string): HTMLTableCellElement {
  // A highlighted field shows its fragment: the matched words marked, the rest as text.
  if (fragment !== undefined) return el('td', { class: `hl${first ? ' row-label' : ''}` }, ...fragmentNodes(fragment));
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
  const scores = res.scores;
  // Ranked results show their score beside the row label, where it is read with it; sortable like any column.
  const scoreColumn = { name: SCORE, type: 'number' } as Field;
  const columns: Field[] = scores ? [res.fields[0], scoreColumn, ...res.fields.slice(1)] : res.fields;
  const head = el(
    'tr',
    {},
    ...columns.map((f: Field, i) => {
      const active = sort?.field === f.name || (f.name === SCORE && !sort);
      const ranked = f.name === SCORE && !sort;
      const dir = ranked ? 'desc' : active ? (sort?.direction ?? 'asc') : undefined;
      const next = active && dir === 'asc' ? 'descending' : 'ascending';
      const button = el(
        'button',
        { type: 'button', class: 'sort', 'aria-label': `${f.name}: sort ${next}` },
        f.name === SCORE ? 'score' : f.name,
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
  const rows = res.records.map((r, row) =>
    el(
      'tr',
      {},
      ...res.fields.flatMap((f: Field, i) => [
        cell(r[f.name], numeric[i], i === 0, res.highlights?.[row]?.[f.name]),
        ...(scores && i === 0
          ? [el('td', { class: 'num score', title: String(scores[row]) }, formatNumber(Number(scores[row].toFixed(3))))]
          : []),
      ]),
    ),
  );
  const table = el('table', { id: 'search-table', class: 'grid' }, el('thead', {}, head), el('tbody', {}, ...rows));
  const filters = narrowing?.index === res.index ? narrowing.filters : [];
  const narrow = (next: FacetFilter[]) => {
    // A saved search opened as it was saved: its query is what the facets narrow.
    narrowing = { ...(narrowing ?? { index: res.index, query: params.query ?? '*' }), filters: next };
    void showSearch({ ...params, page: 1, query: narrowedQuery(narrowing.query, next) });
  };
  byId('search-result').replaceChildren(
    el('p', { id: 'search-summary', class: 'summary' }, `${formatNumber(res.total)} records match ${res.query}`),
    ...(filters.length ? [filterChips(filters, (f) => narrow(filters.filter((x) => !sameFilter(x, f))))] : []),
    el(
      'div',
      { class: res.facets?.length ? 'search-body with-facets' : 'search-body' },
      ...(res.facets?.length ? [facetLists(res.facets, filters, (f) => narrow([...filters, f]))] : []),
      scrollingTable(table, `Records of ${res.index}`),
    ),
  );
  byId('search-page').textContent = res.totalPages
    ? `page ${formatNumber(res.page)} of ${formatNumber(res.totalPages)}`
    : 'no records';
  byId('search-pager').hidden = false;
  showExportControl('search');
  byId<HTMLButtonElement>('search-prev').disabled = res.page <= 1;
  byId<HTMLButtonElement>('search-next').disabled = res.page >= res.totalPages;
  const from = (res.page - 1) * res.pageSize + 1;
  const sorted = sort
    ? `, sorted by ${sort.field === SCORE ? 'score' : sort.field} ${sort.direction === 'desc' ? 'descending' : 'ascending'}`
    : scores
      ? ', best match first'
      : '';
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
  const query = byId<HTMLInputElement>('search-query').value.trim() || '*';
  // Facet filters stay while the analyst pages or searches the same index, and go with it.
  narrowing = narrowing?.index === index ? { ...narrowing, query } : { index, query, filters: [] };
  const facets = facetFields(indexNamed(index)?.fields ?? []);
  void showSearch({
    index,
    query: narrowedQuery(query, narrowing.filters),
    page,
    pageSize: Number(byId<HTMLSelectElement>('search-size').value),
    ...(sort ? { sort } : {}),
    highlight: {},
    ...(facets.length ? { facets: facets.map((field) => ({ field })) } : {}),
  });
}

/** A saved search: its query and page size back in the form, then run as saved. */
export async function openSearch(params: QueriesExecuteParams): Promise<void> {
  searchPanel.reset();
  narrowing = undefined;
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

import type { QueriesExecuteResult } from '@quarry/client';
import type { Field } from './app-state';
import { el } from './dom';
import { formatNumber } from './number-format';
import { escapeQueryText, fieldPrefix } from './query-text';

export type Facet = NonNullable<QueriesExecuteResult['facets']>[number];

/** A facet value the search is narrowed to; `blank` for records without a value. */
export interface FacetFilter {
  field: string;
  value: string;
  blank: boolean;
}

/** How the server names a facet's records without a value, as crosstabs do. */
const BLANK = '(blank)';
const FACET_FIELDS = 3;
/** Names that say a field holds free text: nearly every record has its own value, no use as a facet. */
const FREE_TEXT = /\b(title|name|description|summary|body|text|content|comments?|notes?|abstract)\b/i;

/**
 * The fields a search asks facets for. The index says nothing of how many distinct values a field has,
 * and asking for more facets to keep the useful ones would cost a scan per field on every search, so
 * this guesses from what the index does say: text fields (numbers and dates range more than they
 * repeat), not the first (the table's row label, usually a title or name) and not those whose name
 * says free text, the first three of them in the index's order.
 */
export function facetFields(fields: readonly Field[]): string[] {
  return fields
    .slice(1)
    .filter((f) => f.type === 'string' && !FREE_TEXT.test(f.name))
    .slice(0, FACET_FIELDS)
    .map((f) => f.name);
}

/** A server facet value as a filter: `(blank)` means no value at all. */
export function facetFilter(field: string, value: Facet['values'][number]['value']): FacetFilter {
  return value === BLANK ? { field, value: BLANK, blank: true } : { field, value: String(value), blank: false };
}

/** The filter as a query clause, written as drill-through queries write theirs. */
function clause(f: FacetFilter): string {
  return f.blank ? `NOT ${fieldPrefix(f.field)}*` : `${fieldPrefix(f.field)}=${escapeQueryText(f.value)}`;
}

/** The analyst's query ANDed with every facet filter; the query alone when there is none. */
export function narrowedQuery(query: string, filters: readonly FacetFilter[]): string {
  if (!filters.length) return query;
  const clauses = filters.map(clause).join(' AND ');
  return query === '*' ? clauses : `(${query}) AND ${clauses}`;
}

export const sameFilter = (a: FacetFilter, b: FacetFilter) =>
  a.field === b.field && a.blank === b.blank && a.value === b.value;

/** The active filters as chips, each removing its own filter. */
export function filterChips(filters: readonly FacetFilter[], remove: (f: FacetFilter) => void): HTMLElement {
  return el(
    'div',
    { id: 'search-filters', class: 'chips', role: 'group', 'aria-label': 'Facet filters' },
    el('span', { class: 'chips-label' }, 'Narrowed to'),
    ...filters.map((f) => {
      const chip = el(
        'button',
        { type: 'button', class: 'chip', 'aria-label': `Remove filter ${f.field}: ${f.value}` },
        el('span', { class: 'chip-field' }, `${f.field}:`),
        ` ${f.value} `,
        el('span', { 'aria-hidden': 'true' }, '×'),
      );
      chip.addEventListener('click', () => remove(f));
      return chip;
    }),
  );
}

/** Each facet as a list of its values with their counts; a click narrows the search to the value. */
export function facetLists(
  facets: readonly Facet[],
  active: readonly FacetFilter[],
  pick: (f: FacetFilter) => void,
): HTMLElement {
  // On a narrow screen the lists would push the records a screen down: they start folded there.
  const details = el(
    'details',
    {},
    el('summary', {}, 'Facets'),
    ...facets.map((facet) => facetSection(facet, active, pick)),
  );
  details.open = !window.matchMedia('(max-width: 720px)').matches;
  return el('aside', { id: 'search-facets', class: 'facets', 'aria-label': 'Facets' }, details);
}

function facetSection(facet: Facet, active: readonly FacetFilter[], pick: (f: FacetFilter) => void): HTMLElement {
  const items = facet.values.map((v) => {
    const filter = facetFilter(facet.field, v.value);
    const on = active.some((a) => sameFilter(a, filter));
    const button = el(
      'button',
      {
        type: 'button',
        class: `facet-value${filter.blank ? ' blank' : ''}`,
        'aria-pressed': String(on),
        'data-value': filter.value,
        title: on ? 'Shown: remove it with its chip above' : `Only ${filter.value}`,
      },
      el('span', { class: 'facet-label' }, filter.value),
      el('span', { class: 'facet-count' }, formatNumber(v.count)),
    );
    if (!on) button.addEventListener('click', () => pick(filter));
    return el('li', {}, button);
  });
  return el(
    'section',
    { class: 'facet', 'data-field': facet.field },
    el('h3', {}, facet.field),
    facet.values.length ? el('ul', {}, ...items) : el('p', { class: 'facet-none' }, 'no values'),
    ...(facet.others > 0 ? [el('p', { class: 'facet-others' }, `${formatNumber(facet.others)} others`)] : []),
  );
}

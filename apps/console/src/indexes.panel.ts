import { app, type IndexInfo } from './app-state';
import { byId, el, fillSelect } from './dom';
import { formatNumber } from './number-format';
import { Panel } from './panel';
import { selectTab } from './tabs';

export const indexesPanel = new Panel('indexes');

/** Called with an index's name when its card's Search or Crosstab button is used. */
export interface IndexActions {
  search(index: string): void;
  crosstab(index: string): void;
}

function card(i: IndexInfo, actions: IndexActions): HTMLElement {
  const fields = el(
    'ul',
    { class: 'fields', 'aria-label': `Fields of ${i.name}` },
    ...i.fields.map((f) => el('li', {}, el('span', {}, f.name), ' ', el('small', {}, f.type))),
  );
  const views = el('p', { class: 'views' }, el('strong', {}, 'Dynamic views: '), i.dynamicViews.join(', ') || '—');
  const search = el('button', { type: 'button', 'aria-label': `Search ${i.name}` }, 'Search');
  search.addEventListener('click', () => actions.search(i.name));
  const pivot = el('button', { type: 'button', class: 'quiet', 'aria-label': `Crosstab of ${i.name}` }, 'Crosstab');
  pivot.addEventListener('click', () => actions.crosstab(i.name));
  return el(
    'article',
    { class: 'card' },
    el('h3', {}, i.name),
    el('p', { class: 'meta' }, `${formatNumber(i.recordCount)} records · updated ${i.updatedAt.slice(0, 10)}`),
    el('p', {}, i.description || 'No description.'),
    fields,
    views,
    el('div', { class: 'actions' }, search, pivot),
  );
}

/** Every readable index, page after page; false when the server refused (the panel says why). */
export async function loadIndexes(actions: IndexActions): Promise<boolean> {
  const found: IndexInfo[] = [];
  let cursor: string | undefined;
  do {
    const page = await indexesPanel.call('INDEXES.FIND', cursor ? { limit: 200, cursor } : { limit: 200 });
    if (!page) return false;
    found.push(...page.indexes);
    cursor = page.nextCursor ?? undefined;
  } while (cursor);
  app.indexes = found;
  byId('index-list').replaceChildren(...found.map((i) => card(i, actions)));
  const names: Array<[string, string]> = found.map((i) => [i.name, i.name]);
  fillSelect(byId('search-index'), names);
  fillSelect(byId('ct-index'), names);
  indexesPanel.status(
    found.length
      ? `${found.length} readable ${found.length === 1 ? 'index' : 'indexes'}: search one, or build a crosstab from it.`
      : 'This token may read no index. Ask for one with indexes:read and query:execute on an index.',
  );
  return true;
}

/** The empty page: what to do first, shown until a token is accepted. */
export function showWelcome(show: boolean): void {
  byId('welcome').hidden = !show;
  if (show) selectTab('indexes');
}

import type { CrosstabExecuteParams, QueriesExecuteParams } from '@quarry/client';
import { app } from './app-state';
import { byId, el, onSubmit } from './dom';
import { Panel } from './panel';
import { showVersions } from './report-versions';
import { loadedReport, showLoaded } from './save-report';
import { scheduleReport } from './schedules.panel';
import { onTabShown } from './tabs';

export const reportsPanel = new Panel('reports');

/** What opening a report does: each kind goes to its own tab and runs there. */
export interface ReportOpeners {
  search(params: QueriesExecuteParams): Promise<void>;
  crosstab(params: CrosstabExecuteParams): Promise<void>;
}

let openers: ReportOpeners;

async function findReports(): Promise<void> {
  const search = byId<HTMLInputElement>('reports-search').value.trim();
  const res = await reportsPanel.call('REPORTS.FIND', search ? { search, limit: 100 } : { limit: 100 });
  if (!res) return;
  const head = el(
    'tr',
    {},
    ...['Name', 'Type', 'Index', 'Owner', 'Updated', ''].map((h) => el('th', { scope: 'col' }, h)),
  );
  const rows = res.reports.map((r) => {
    const open = el('button', { type: 'button', 'aria-label': `Open and run ${r.name}` }, 'Open');
    open.addEventListener('click', () => void openReport(r.guid));
    const versions = el(
      'button',
      { type: 'button', class: 'quiet', 'aria-label': `Versions of ${r.name}` },
      'Versions',
    );
    versions.addEventListener('click', () => void showVersions(reportsPanel, r.guid));
    const schedule = el(
      'button',
      { type: 'button', class: 'quiet', 'aria-label': `Schedule deliveries of ${r.name}` },
      'Schedule',
    );
    schedule.addEventListener('click', () => scheduleReport(r.guid));
    const rename = el('button', { type: 'button', class: 'quiet', 'aria-label': `Rename ${r.name}` }, 'Rename');
    rename.addEventListener('click', () => void renameReport(r));
    const share = el(
      'button',
      { type: 'button', class: 'quiet', 'aria-label': `${r.shared ? 'Stop sharing' : 'Share'} ${r.name}` },
      r.shared ? 'Unshare' : 'Share',
    );
    share.addEventListener('click', () => void changeReport(r, { shared: !r.shared }));
    const remove = el('button', { type: 'button', class: 'quiet danger', 'aria-label': `Delete ${r.name}` }, 'Delete');
    remove.addEventListener('click', () => void deleteReport(r));
    return el(
      'tr',
      {},
      el('td', {}, r.name, r.shared ? el('small', { class: 'tag' }, 'shared') : ''),
      el('td', {}, r.type),
      el('td', {}, r.index),
      el('td', {}, r.owner),
      el('td', {}, r.updatedAt.slice(0, 16).replace('T', ' ')),
      el('td', { class: 'cell-actions' }, open, versions, schedule, rename, share, remove),
    );
  });
  byId('reports-result').replaceChildren(
    res.reports.length
      ? el(
          'div',
          { class: 'table-wrap' },
          el('table', { id: 'reports-table', class: 'grid' }, el('thead', {}, head), el('tbody', {}, ...rows)),
        )
      : el(
          'p',
          { class: 'empty' },
          search
            ? `No report matches “${search}”.`
            : 'No reports yet: run a search or a crosstab and use “Save as report” below it.',
        ),
  );
  reportsPanel.status(`${res.reports.length} ${res.reports.length === 1 ? 'report' : 'reports'}.`);
}

async function openReport(guid: string): Promise<void> {
  const meta = await reportsPanel.call('REPORTS.METADATA', { guid }, { keep: true });
  if (!meta) return;
  reportsPanel.status('');
  if (meta.method === 'QUERIES.EXECUTE') {
    showLoaded('search', meta);
    await openers.search(meta.params as unknown as QueriesExecuteParams);
  } else {
    showLoaded('crosstab', meta);
    await openers.crosstab(meta.params as unknown as CrosstabExecuteParams);
  }
}

type Summary = { guid: string; name: string; shared: boolean };
const KINDS = ['search', 'crosstab'] as const;

/** A change of name or sharing (no new version), then the list again; a tab showing the report follows. */
async function changeReport(r: Summary, change: { name?: string; shared?: boolean }): Promise<void> {
  const res = await reportsPanel.call('REPORTS.UPDATE', { guid: r.guid, ...change }, { keep: true });
  if (!res) return;
  for (const kind of KINDS) if (loadedReport(kind)?.guid === r.guid) showLoaded(kind, res);
  await findReports();
  reportsPanel.status(
    change.name !== undefined
      ? `Renamed “${r.name}” to “${res.name}”.`
      : `“${res.name}” is ${res.shared ? 'shared with every user who may read its index' : 'no longer shared'}.`,
  );
}

async function renameReport(r: Summary): Promise<void> {
  const name = window.prompt(`New name for “${r.name}”`, r.name)?.trim();
  if (!name || name === r.name) return;
  await changeReport(r, { name });
}

async function deleteReport(r: Summary): Promise<void> {
  if (!window.confirm(`Delete “${r.name}”? It goes to the trash, from which an operator can restore it.`)) return;
  const res = await reportsPanel.call('REPORTS.DELETE', { guid: r.guid }, { keep: true });
  if (!res) return;
  for (const kind of KINDS) if (loadedReport(kind)?.guid === r.guid) showLoaded(kind, undefined);
  await findReports();
  // The API restores nothing: an operator does, with the CLI, until the trash is emptied.
  reportsPanel.status(
    `Deleted “${r.name}”. An operator can restore it until ${res.restorableUntil.slice(0, 10)} with: quarry report restore ${r.guid}`,
  );
}

export function startReports(o: ReportOpeners): void {
  openers = o;
  onSubmit('reports-form', () => void findReports());
  onTabShown('reports', () => void (app.client && findReports()));
}

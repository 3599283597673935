import type { CrosstabExecuteParams, QueriesExecuteParams } from '@quarry/client';
import { app } from './app-state';
import { byId, el, onSubmit } from './dom';
import { Panel } from './panel';
import { showVersions } from './report-versions';
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
    return el(
      'tr',
      {},
      el('td', {}, r.name, r.shared ? el('small', { class: 'tag' }, 'shared') : ''),
      el('td', {}, r.type),
      el('td', {}, r.index),
      el('td', {}, r.owner),
      el('td', {}, r.updatedAt.slice(0, 16).replace('T', ' ')),
      el('td', { class: 'cell-actions' }, open, versions, schedule),
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
  if (meta.method === 'QUERIES.EXECUTE') await openers.search(meta.params as unknown as QueriesExecuteParams);
  else await openers.crosstab(meta.params as unknown as CrosstabExecuteParams);
}

export function startReports(o: ReportOpeners): void {
  openers = o;
  onSubmit('reports-form', () => void findReports());
  onTabShown('reports', () => void (app.client && findReports()));
}

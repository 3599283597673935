import type { Field } from './app-state';
import { renderCrosstab } from './crosstab/crosstab.panel';
import { byId, el } from './dom';
import { formatNumber } from './number-format';
import type { Panel } from './panel';
import { parametersForm, parametersOf } from './report-parameters';
import { scrollingTable } from './table-scroll';

/*
 * A report's versions (REPORTS.METADATA), each to run (REPORTS.EXECUTE) on the index as it is now or as
 * it was when that version was saved. Shown under the reports list, in the Reports tab.
 */

let shown:
  | {
      guid: string;
      name: string;
      index: string;
      parameters: Parameters<typeof parametersOf>[1];
      form: ReturnType<typeof parametersForm>;
    }
  | undefined;

function cellText(value: unknown): string {
  if (value === null || value === undefined) return '';
  if (typeof value === 'number') return formatNumber(value);
  return typeof value === 'object' ? JSON.stringify(value) : String(value);
}

async function runReport(panel: Panel, guid: string, version: number, asOf: 'latest' | 'saved'): Promise<void> {
  // The declared parameters of the latest version; an older version is refused a name it does not declare.
  const parameters = shown?.guid === guid ? parametersOf(shown.form, shown.parameters) : {};
  const res = await panel.call(
    'REPORTS.EXECUTE',
    { guid, version, asOf, ...(Object.keys(parameters).length ? { parameters } : {}) },
    { keep: true },
  );
  if (!res) return;
  const out = byId('report-run');
  const caption = el(
    'p',
    { class: 'meta', id: 'report-run-caption' },
    `Version ${res.report.version}, run on load ${res.indexVersion} of the index${asOf === 'saved' ? ' (as saved)' : ' (latest)'}`,
  );
  const body = el('div', {});
  out.replaceChildren(caption, body);
  let status: string;
  if ('records' in res) {
    const head = el('tr', {}, ...res.fields.map((f: Field) => el('th', { scope: 'col' }, f.name)));
    const rows = res.records.map((r) =>
      el('tr', {}, ...res.fields.map((f: Field) => el('td', {}, cellText(r[f.name])))),
    );
    const table = el('table', { class: 'grid' }, el('thead', {}, head), el('tbody', {}, ...rows));
    body.append(scrollingTable(table, `Records of ${res.index}`));
    status = `Report on ${res.index}: ${res.records.length} of ${res.total} records shown.`;
  } else status = await renderCrosstab(body, res, { index: shown?.index ?? 'report', rows: [] });
  panel.status(`"${shown?.name ?? 'Report'}", version ${res.report.version}: ${status}`);
}

export async function showVersions(panel: Panel, guid: string): Promise<void> {
  const meta = await panel.call('REPORTS.METADATA', { guid }, { keep: true });
  if (!meta) return;
  const head = el('tr', {}, ...['Version', 'Saved', 'Index load', ''].map((h) => el('th', { scope: 'col' }, h)));
  const rows = [...meta.versions].reverse().map((v) => {
    const run = el('button', { type: 'button', 'aria-label': `Run version ${v.version} on the index now` }, 'Run');
    run.addEventListener('click', () => void runReport(panel, guid, v.version, 'latest'));
    // A version saved before index loads were recorded has no load to run on.
    const asSaved = el(
      'button',
      v.indexVersion > 0
        ? { type: 'button', class: 'quiet', 'aria-label': `Run version ${v.version} on the index as it was saved` }
        : { type: 'button', class: 'quiet', disabled: '', title: 'Saved before index loads were recorded' },
      'Run as saved',
    );
    asSaved.addEventListener('click', () => void runReport(panel, guid, v.version, 'saved'));
    return el(
      'tr',
      {},
      el('td', {}, String(v.version), v.version === meta.version ? el('small', {}, ' latest') : ''),
      el('td', {}, v.savedAt.slice(0, 16).replace('T', ' ')),
      el('td', {}, v.indexVersion > 0 ? String(v.indexVersion) : '—'),
      el('td', { class: 'cell-actions' }, run, asSaved),
    );
  });
  const form = parametersForm(meta.parameters);
  shown = { guid, name: meta.name, index: meta.index, parameters: meta.parameters, form };
  const box = byId('report-versions');
  box.replaceChildren(
    el('h3', {}, `Versions of "${meta.name}"`),
    ...(form ? [form] : []),
    el(
      'div',
      { class: 'table-wrap' },
      el('table', { class: 'grid', id: 'versions-table' }, el('thead', {}, head), el('tbody', {}, ...rows)),
    ),
  );
  box.hidden = false;
  byId('report-run').replaceChildren();
  panel.status(`"${meta.name}": ${meta.versions.length} version${meta.versions.length === 1 ? '' : 's'}.`);
}

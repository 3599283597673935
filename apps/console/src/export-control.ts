import type { CrosstabExecuteParams, ExportsStartParams, QueriesExecuteParams } from '@quarry/client';
import { app } from './app-state';
import { byId, el, onSubmit } from './dom';
import { formatNumber } from './number-format';
import type { Panel } from './panel';

type Kind = 'search' | 'crosstab';
type Exportable =
  | { method: 'QUERIES.EXECUTE'; params: QueriesExecuteParams }
  | { method: 'CROSSTAB.EXECUTE'; params: CrosstabExecuteParams };

const POLL_MS = 500;
/** Each tab's current export: a poll whose number is no longer current stops (a new export, a new result). */
const current: Record<Kind, number> = { search: 0, crosstab: 0 };

/** Bytes as a reader reads them: 812 B, 3.4 MB. */
export function formatBytes(n: number): string {
  const units = ['B', 'KB', 'MB', 'GB', 'TB'];
  let v = n;
  let u = 0;
  while (v >= 1000 && u < units.length - 1) {
    v /= 1000;
    u++;
  }
  return `${u === 0 ? v : v.toLocaleString(undefined, { maximumFractionDigits: 1 })} ${units[u]}`;
}

/**
 * What an export is of: the search without its page, the crosstab without its on-screen output, except
 * that a PDF prints what is on screen: the chart (its type and size) when a chart is shown.
 */
function exportParams(last: Exportable, format: ExportsStartParams['format']): Record<string, unknown> {
  if (last.method === 'QUERIES.EXECUTE') {
    const { page: _page, pageSize: _size, saveReport: _save, ...search } = last.params;
    return search;
  }
  const { format: _format, imageFormat: _image, saveReport: _save, ...shown } = last.params;
  if (format === 'pdf' && shown.chartType !== undefined) return shown;
  const { chartType: _chart, chartTotals: _totals, width: _w, height: _h, ...table } = shown;
  return table;
}

/**
 * The result's file, fetched when the link is clicked (the download needs the token, which a plain link
 * cannot send), then handed to the browser as a file named by the server.
 */
function downloadLink(kind: Kind, exportId: string, label: string): HTMLAnchorElement {
  const link = el('a', { href: '#', id: `${kind}-export-link`, class: 'download' }, label);
  link.addEventListener('click', (e) => {
    if (link.getAttribute('href') !== '#') return;
    e.preventDefault();
    void (async () => {
      const client = app.client;
      if (!client) return;
      link.textContent = 'Downloading…';
      const file = await client.exports.download({ exportId });
      const blob = await new Response(file.body).blob();
      link.href = URL.createObjectURL(blob);
      link.download = file.fileName;
      link.textContent = label;
      link.click();
    })().catch((err: unknown) => {
      link.textContent = `Download failed: ${err instanceof Error ? err.message : String(err)}`;
    });
  });
  return link;
}

/**
 * The "Export" control under a tab's result: a format picker, then the export's progress while it runs
 * (records and bytes written), and a download link once it is done. Each new export replaces the last.
 */
export function startExportControl(kind: Kind, panel: Panel, last: () => Exportable | undefined): void {
  const progress = byId(`${kind}-export-progress`);
  // A crosstab's export is its table's rows; a search's, its records.
  const unit = kind === 'crosstab' ? 'rows' : 'records';
  onSubmit(`${kind}-export`, () => {
    const lastCall = last();
    if (!lastCall) return panel.fail(new Error(`Run a ${kind} first: the export is of what was run last.`), true);
    const format = byId<HTMLSelectElement>(`${kind}-export-format`).value as ExportsStartParams['format'];
    void (async () => {
      const started = await panel.call(
        'EXPORTS.START',
        { method: lastCall.method, params: exportParams(lastCall, format), format },
        { keep: true },
      );
      if (!started) return;
      const mine = ++current[kind];
      const { exportId } = started;
      progress.replaceChildren('Export queued…');
      panel.status(`Export ${exportId} started.`);
      for (;;) {
        if (mine !== current[kind] || !app.client) return;
        const s = await app.client.exports.status({ exportId });
        if (mine !== current[kind]) return;
        if (s.state === 'done') {
          progress.replaceChildren(
            `Export done: ${formatNumber(s.rowsWritten)} ${unit}, ${formatBytes(s.bytes)}. `,
            downloadLink(kind, exportId, `Download ${format.toUpperCase()}`),
          );
          return;
        }
        if (s.state === 'failed') {
          progress.replaceChildren(el('strong', {}, 'Export failed: '), s.error ?? 'no reason given');
          return;
        }
        progress.replaceChildren(
          s.state === 'queued'
            ? 'Export queued…'
            : `Exporting… ${formatNumber(s.rowsWritten)} ${unit}, ${formatBytes(s.bytes)} written`,
        );
        await new Promise((r) => setTimeout(r, POLL_MS));
      }
    })().catch((err: unknown) => panel.fail(err, true));
  });
}

/** Shows the control beside a new result, its last export's words gone. */
export function showExportControl(kind: Kind): void {
  current[kind]++;
  byId(`${kind}-export`).hidden = false;
  byId(`${kind}-export-progress`).replaceChildren();
}

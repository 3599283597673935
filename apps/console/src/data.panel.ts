import { QuarryError } from '@quarry/client';
import { app } from './app-state';
import { startSources } from './data-sources';
import { byId, el, on } from './dom';
import { formatNumber } from './number-format';
import { Panel } from './panel';

export const dataPanel = new Panel('data');

/** The media type an upload is sent as, from the file's name (a browser's own guess is often empty). */
function uploadType(name: string): { type: string; gzip: boolean } | undefined {
  const lower = name.toLowerCase();
  const gzip = lower.endsWith('.gz');
  const base = gzip ? lower.slice(0, -3) : lower;
  const ext = base.slice(base.lastIndexOf('.') + 1);
  const type =
    ext === 'csv'
      ? 'text/csv'
      : ext === 'json'
        ? 'application/json'
        : ext === 'jsonl' || ext === 'ndjson'
          ? 'application/x-ndjson'
          : ext === 'parquet'
            ? 'application/vnd.apache.parquet'
            : undefined;
  return type ? { type, gzip } : undefined;
}

interface UploadAnswer {
  index: string;
  version?: number;
  rowsRead?: number;
  loaded: number;
  rejected: number;
  rejects: Array<{ line?: number; record?: number; column?: string; reason: string }>;
  replaced: number;
  recordCount?: number;
  detail?: string;
  title?: string;
  status?: number;
}

function rejectsTable(rejects: UploadAnswer['rejects']): HTMLElement {
  const row = (r: UploadAnswer['rejects'][number]) =>
    el(
      'tr',
      {},
      el('td', {}, r.line !== undefined ? `line ${r.line}` : `record ${r.record ?? '?'}`),
      el('td', {}, r.column ?? ''),
      el('td', {}, r.reason),
    );
  return el(
    'div',
    { class: 'table-wrap' },
    el(
      'table',
      { id: 'upload-rejects', class: 'grid' },
      el('thead', {}, el('tr', {}, el('th', {}, 'Where'), el('th', {}, 'Column'), el('th', {}, 'Why'))),
      el('tbody', {}, ...rejects.map(row)),
    ),
  );
}

function showCurl(path: string, type: string, gzip: boolean, file: string): void {
  byId('curl').textContent =
    `curl -s -X POST '${location.origin}${path}' \\\n  -H "Authorization: Bearer $QUARRY_TOKEN" \\\n  -H 'Content-Type: ${type}'${gzip ? " -H 'Content-Encoding: gzip'" : ''} \\\n  --data-binary @'${file.replace(/'/g, `'\\''`)}'`;
}

/**
 * The "Add data" tab: a file sent as the body of POST /indexes/<name>/records (not JSON-RPC: the file is
 * the request), its answer shown row for row, and the index list brought up to date after a publish;
 * under it, the sources the server reads itself (data-sources.ts).
 */
export function startData(onPublished: () => Promise<unknown>): void {
  startSources(onPublished);
  on('upload-mode', 'change', () => {
    byId('upload-key-label').hidden = byId<HTMLSelectElement>('upload-mode').value !== 'upsert';
  });
  on('upload-form', 'submit', (e) => {
    e.preventDefault();
    void upload(onPublished);
  });
}

async function upload(onPublished: () => Promise<unknown>): Promise<void> {
  const file = byId<HTMLInputElement>('upload-file').files?.[0];
  const index = byId<HTMLInputElement>('upload-index').value.trim();
  const mode = byId<HTMLSelectElement>('upload-mode').value;
  const key = byId<HTMLInputElement>('upload-key').value.trim();
  const skip = byId<HTMLInputElement>('upload-skip').checked;
  if (!file || !index) return;
  const kind = uploadType(file.name);
  if (!kind) {
    dataPanel.fail(new Error(`${file.name}: name the file .csv, .json, .jsonl, .ndjson or .parquet (optionally .gz)`));
    return;
  }
  const query = new URLSearchParams({
    mode,
    ...(mode === 'upsert' ? { key } : {}),
    ...(skip ? { onError: 'skip' } : {}),
  });
  const path = `/indexes/${encodeURIComponent(index)}/records?${query.toString()}`;
  showCurl(path, kind.type, kind.gzip, file.name);
  if (!app.token) {
    dataPanel.fail(new Error('Enter an API token first (in the field at the top), then Connect.'));
    return;
  }
  dataPanel.clearError();
  dataPanel.status(`Uploading ${file.name} (${formatNumber(file.size)} bytes)…`);
  let answer: UploadAnswer;
  let status: number;
  try {
    const res = await fetch(path, {
      method: 'POST',
      headers: {
        Authorization: `Bearer ${app.token}`,
        'Content-Type': kind.type,
        ...(kind.gzip ? { 'Content-Encoding': 'gzip' } : {}),
      },
      body: file,
    });
    status = res.status;
    answer = (await res.json()) as UploadAnswer;
  } catch (err) {
    dataPanel.fail(err);
    return;
  }
  const result = byId('upload-result');
  if (status !== 200) {
    dataPanel.fail(new QuarryError({ code: status, message: answer.title ?? 'Upload refused', detail: answer.detail }));
    // A failed load still says how far it got and which rows it refused.
    if (answer.rejects?.length)
      result.replaceChildren(el('p', {}, 'Nothing was published. Rejected rows:'), rejectsTable(answer.rejects));
    return;
  }
  dataPanel.status(`Published ${answer.index} version ${answer.version ?? '?'}.`);
  result.replaceChildren(
    el(
      'p',
      { id: 'upload-summary' },
      `${formatNumber(answer.rowsRead ?? 0)} rows read = ${formatNumber(answer.loaded)} loaded + ${formatNumber(answer.rejected)} rejected` +
        (answer.replaced ? `; ${formatNumber(answer.replaced)} records replaced` : '') +
        ` · the index now holds ${formatNumber(answer.recordCount ?? 0)} records.`,
    ),
    ...(answer.rejects.length ? [rejectsTable(answer.rejects)] : []),
  );
  await onPublished();
  // The list's refresh is a call of its own: the curl shown stays the upload's, what this tab did.
  showCurl(path, kind.type, kind.gzip, file.name);
}

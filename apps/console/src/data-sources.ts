import { QuarryError, type ParamsOf, type ResultOf } from '@quarry/client';
import { app } from './app-state';
import { showCurl } from './curl';
import { byId, el, on, onSubmit } from './dom';
import { formatNumber } from './number-format';
import { Panel } from './panel';
import { onTabShown } from './tabs';

/*
 * The Sources part of the "Add data" tab: a source defined (SOURCES.CREATE), the caller's sources listed
 * (SOURCES.FIND) with Run now and Delete, and one source's runs (SOURCES.RUNS: state, rows, version,
 * error), followed while a run it started is under way. Its own status line and error box sit above its
 * form, so that what it says is seen where it was asked.
 */

export const sourcesPanel = new Panel('sources');

type Source = ResultOf<'SOURCES.FIND'>['sources'][number];
type Run = ResultOf<'SOURCES.RUNS'>['runs'][number];
type CreateParams = ParamsOf<'SOURCES.CREATE'>;

/** The source whose runs are shown, and the run followed until it ends. */
let shownRuns: { sourceId: string; name: string } | undefined;
let following: string | undefined;

const value = (id: string) => byId<HTMLInputElement>(id).value.trim();
const when = (iso: string | undefined) => (iso ? `${iso.slice(0, 16).replace('T', ' ')} UTC` : '—');

/** The API's parameters as the form labels them, with the control that sets each. */
const CONTROLS: ReadonlyArray<[RegExp, string, string]> = [
  [/\bconnection\.url\b/g, 'URL', 'source-url'],
  [/\bconnection\.host\b/g, 'Host', 'source-host'],
  [/\bconnection\.port\b/g, 'Port', 'source-port'],
  [/\bconnection\.database\b/g, 'Database', 'source-database'],
  [/\bconnection\.user\b/g, 'User', 'source-user'],
  [/\bconnection\.password\b/g, 'Password', 'source-password'],
  [/^connection\b/g, 'Connection', 'source-host'],
  [/\brefresh\.cron\b/g, 'Cron', 'source-cron'],
  [/\brefresh\.timeZone\b/g, 'Time zone', 'source-tz'],
  [/\brefresh\.mode\b/g, 'Mode', 'source-mode'],
  [/\brefresh\.cursor\b/g, 'Cursor column', 'source-cursor'],
  [/\brefresh\.key\b/g, 'Key field', 'source-key'],
  [/^index\b/g, 'Index', 'source-index'],
  [/^name\b/g, 'Name', 'source-name'],
  [/^query\b/g, 'Query', 'source-query'],
  [/^table\b/g, 'Table', 'source-table'],
];

function explainSourceError(detail: string): { detail: string; controls: HTMLElement[] } {
  const named = new Set<string>();
  let text = detail;
  for (const [pattern, label, id] of CONTROLS)
    text = text.replace(pattern, () => {
      named.add(id);
      return `“${label}”`;
    });
  // A connection refused as a whole is the URL's when the form gives one.
  if (named.has('source-host') && !byId('source-url-label').hidden) {
    named.delete('source-host');
    named.add('source-url');
  }
  const controls = [...named].map((id) => document.getElementById(id)).filter((c): c is HTMLElement => c !== null);
  return { detail: text, controls };
}

/** Shows the controls the chosen kind, connection and mode take; hides the others. */
function syncForm(): void {
  const kind = byId<HTMLSelectElement>('source-kind').value;
  const database = kind === 'postgres' || kind === 'mysql';
  const byUrl = !database || byId<HTMLSelectElement>('source-connect').value === 'url';
  byId('source-connect-label').hidden = !database;
  byId('source-url-label').hidden = !byUrl;
  for (const part of ['host', 'port', 'database', 'user', 'password', 'ssl'])
    byId(`source-${part}-label`).hidden = byUrl;
  byId('source-url-name').textContent =
    kind === 'sqlite' ? 'File on the server' : kind === 'url' ? 'URL of the file' : 'Connection URL';
  byId<HTMLInputElement>('source-url').placeholder =
    kind === 'sqlite'
      ? '/srv/data/shop.sqlite'
      : kind === 'url'
        ? 'https://files.example.com/orders.csv'
        : `${kind}://user:password@db.example.com:${kind === 'mysql' ? 3306 : 5432}/shop`;
  byId<HTMLInputElement>('source-port').placeholder = kind === 'mysql' ? '3306' : '5432';
  // A file at a URL is read whole: no table, no query.
  byId('source-reads').hidden = kind === 'url';
  const query = byId<HTMLSelectElement>('source-read').value === 'query';
  byId('source-table-label').hidden = query;
  byId('source-query-label').hidden = !query;
  const mode = byId<HTMLSelectElement>('source-mode').value;
  byId('source-cursor-label').hidden = mode !== 'append';
  byId('source-key-label').hidden = mode !== 'upsert';
  // What the shown controls need is asked for by the browser before anything is sent.
  const required: Array<[string, boolean]> = [
    ['source-url', byUrl],
    ['source-host', !byUrl],
    ['source-database', !byUrl],
    ['source-user', !byUrl],
    ['source-table', kind !== 'url' && !query],
    ['source-query', kind !== 'url' && query],
    ['source-key', mode === 'upsert'],
  ];
  for (const [id, on] of required) byId<HTMLInputElement>(id).required = on;
}

/** SOURCES.CREATE's params from what the form shows (hidden controls send nothing). */
function createParams(): CreateParams {
  const shown = (id: string) => !byId(`${id}-label`).hidden;
  const kind = byId<HTMLSelectElement>('source-kind').value as CreateParams['kind'];
  const port = value('source-port');
  const connection: CreateParams['connection'] = shown('source-url')
    ? { url: value('source-url') }
    : {
        host: value('source-host'),
        ...(port ? { port: Number(port) } : {}),
        database: value('source-database'),
        user: value('source-user'),
        // A password is sent as typed (spaces are part of it), never trimmed.
        ...(byId<HTMLInputElement>('source-password').value
          ? { password: byId<HTMLInputElement>('source-password').value }
          : {}),
        ...(byId<HTMLInputElement>('source-ssl').checked ? { ssl: true } : {}),
      };
  const reads =
    kind === 'url'
      ? {}
      : byId<HTMLSelectElement>('source-read').value === 'query'
        ? { query: byId<HTMLTextAreaElement>('source-query').value.trim() }
        : { table: value('source-table') };
  const mode = byId<HTMLSelectElement>('source-mode').value as NonNullable<CreateParams['refresh']>['mode'];
  const cron = value('source-cron');
  const cursor = value('source-cursor');
  const key = value('source-key');
  return {
    name: value('source-name'),
    index: value('source-index'),
    kind,
    connection,
    ...reads,
    refresh: {
      mode,
      ...(cron ? { cron, timeZone: value('source-tz') || 'UTC' } : {}),
      ...(mode === 'append' && cursor ? { cursor } : {}),
      ...(mode === 'upsert' && key ? { key } : {}),
    },
    ...(byId<HTMLInputElement>('source-skip').checked ? { load: { onError: 'skip' } } : {}),
  };
}

async function createSource(): Promise<void> {
  const params = createParams();
  // The curl shown never carries the password (it is put up as the call starts): the request does.
  const answer = sourcesPanel.call('SOURCES.CREATE', params, { keep: true });
  hidePasswordInCurl(params);
  const res = await answer;
  if (!res) return;
  byId<HTMLInputElement>('source-password').value = '';
  await listSources();
  // The list's refresh is a call of its own: the curl shown stays the create, what was done.
  showCurl('SOURCES.CREATE', params);
  hidePasswordInCurl(params);
  sourcesPanel.status(`Added source “${params.name}” (${res.sourceId}). Run now reads it.`);
}

function hidePasswordInCurl(params: CreateParams): void {
  const password = params.connection.password;
  const curl = byId('curl');
  if (password && curl.textContent) curl.textContent = curl.textContent.split(JSON.stringify(password)).join('"***"');
  const url = params.connection.url;
  if (url && curl.textContent) {
    try {
      const u = new URL(url);
      if (u.password) {
        const shown = new URL(url);
        shown.password = '***';
        curl.textContent = curl.textContent.split(JSON.stringify(url)).join(JSON.stringify(shown.toString()));
      }
    } catch {
      // A path, not a URL: no password in it.
    }
  }
}

/** Where a source reads from, as the server shows it: never its password. */
function from(s: Source): string {
  const c = s.connection;
  if (c.url !== undefined) return c.url;
  const where = `${c.user ?? ''}@${c.host ?? ''}${c.port !== undefined ? `:${c.port}` : ''}/${c.database ?? ''}`;
  return c.hasPassword ? `${where} (password kept)` : where;
}

function refreshText(s: Source): Array<Node | string> {
  const r = s.refresh;
  const how =
    r.mode === 'append' && r.cursor
      ? `append by ${r.cursor}`
      : r.mode === 'upsert' && r.key
        ? `upsert by ${r.key}`
        : r.mode;
  return r.cron !== undefined
    ? [how, el('small', { class: 'detail' }, el('code', {}, r.cron), ` ${r.timeZone}`)]
    : [how, el('small', { class: 'detail' }, 'on demand')];
}

const stateTag = (state: Run['state']) => el('span', { class: `tag run-${state}` }, state);

function lastRun(run: Run | undefined): Array<Node | string> {
  if (!run) return ['never run'];
  return [
    stateTag(run.state),
    run.version !== undefined ? ` v${run.version}` : '',
    el('small', { class: 'detail' }, when(run.endedAt ?? run.startedAt ?? run.queuedAt)),
  ];
}

async function listSources(): Promise<void> {
  let res: ResultOf<'SOURCES.FIND'> | undefined;
  try {
    res = await sourcesPanel.call('SOURCES.FIND', {}, { keep: true, rethrow: true });
  } catch (err) {
    // A token that may not write has no sources: said where the list would be, not as a failure of the page.
    if (err instanceof QuarryError && err.code === 403) {
      byId('sources-result').replaceChildren(
        el('p', { class: 'empty' }, `${err.detail}: ask for a token that holds it to add sources (and uploads).`),
      );
      return;
    }
    sourcesPanel.fail(err, true);
    return;
  }
  if (!res) return;
  drawSources(res.sources);
  // None: the list says what to do, the status line nothing more.
  const n = res.sources.length;
  sourcesPanel.status(n ? `${n} ${n === 1 ? 'source' : 'sources'} (times in UTC).` : '');
}

function drawSources(sources: Source[]): void {
  const head = el(
    'tr',
    {},
    ...['Name', 'Index', 'Kind', 'From', 'Refresh', 'Last run', 'Next run', ''].map((h) =>
      el('th', { scope: 'col' }, h),
    ),
  );
  const rows = sources.map((s) => {
    const button = (label: string, aria: string, cls: string, act: () => void) => {
      const b = el('button', { type: 'button', class: cls, 'aria-label': `${aria} ${s.name}` }, label);
      b.addEventListener('click', act);
      return b;
    };
    return el(
      'tr',
      { 'data-source': s.sourceId },
      el('td', {}, s.name),
      el('td', {}, s.index),
      el('td', {}, s.kind),
      el('td', { title: from(s) }, from(s)),
      el('td', {}, ...refreshText(s)),
      el('td', {}, ...lastRun(s.lastRun)),
      el('td', {}, when(s.nextRunAt)),
      el(
        'td',
        { class: 'cell-actions' },
        button('Run now', 'Run', '', () => void runNow(s)),
        button('Runs', 'The runs of', 'quiet', () => void showRuns(s.sourceId, s.name)),
        button('Delete', 'Delete', 'quiet danger', () => void deleteSource(s)),
      ),
    );
  });
  byId('sources-result').replaceChildren(
    sources.length
      ? el(
          'div',
          { class: 'table-wrap' },
          el('table', { id: 'sources-table', class: 'grid' }, el('thead', {}, head), el('tbody', {}, ...rows)),
        )
      : el('p', { class: 'empty' }, 'No sources yet: define one above, then Run now.'),
  );
}

function drawRuns(name: string, runs: Run[]): void {
  const head = el(
    'tr',
    {},
    ...['Run', 'State', 'Trigger', 'Queued', 'Ended', 'Rows read', 'Loaded', 'Rejected', 'Version', 'Error'].map((h) =>
      el('th', { scope: 'col', ...(/Rows|Loaded|Rejected|Version/.test(h) ? { class: 'num' } : {}) }, h),
    ),
  );
  const num = (n: number) => el('td', { class: 'num' }, formatNumber(n));
  const rows = runs.map((r) =>
    el(
      'tr',
      { 'data-run': r.runId },
      el('td', { title: r.runId }, el('code', {}, r.runId.slice(0, 8))),
      el('td', {}, stateTag(r.state)),
      el('td', {}, r.trigger),
      el('td', {}, when(r.queuedAt)),
      el('td', {}, when(r.endedAt)),
      num(r.rowsRead),
      num(r.loaded),
      num(r.rejected),
      el('td', { class: 'num' }, r.version !== undefined ? `v${r.version}` : '—'),
      el('td', { class: 'run-error' }, r.error ?? ''),
    ),
  );
  byId('source-runs').replaceChildren(
    el('h3', {}, `Runs of “${name}”`, el('small', {}, ' newest first')),
    runs.length
      ? el(
          'div',
          { class: 'table-wrap' },
          el('table', { id: 'source-runs-table', class: 'grid' }, el('thead', {}, head), el('tbody', {}, ...rows)),
        )
      : el('p', { class: 'empty' }, 'No runs yet: Run now starts one.'),
  );
}

async function showRuns(sourceId: string, name: string): Promise<Run[] | undefined> {
  const res = await sourcesPanel.call('SOURCES.RUNS', { sourceId }, { keep: true });
  if (!res) return undefined;
  shownRuns = { sourceId, name };
  drawRuns(name, res.runs);
  sourcesPanel.status(`${res.runs.length} ${res.runs.length === 1 ? 'run' : 'runs'} of “${name}”.`);
  return res.runs;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** SOURCES.RUN, then its runs followed (quietly: the curl shown stays the run's) until the run ends. */
async function runNow(s: Source): Promise<void> {
  const res = await sourcesPanel.call('SOURCES.RUN', { sourceId: s.sourceId }, { keep: true });
  if (!res) return;
  const client = app.client;
  following = res.runId;
  shownRuns = { sourceId: s.sourceId, name: s.name };
  for (;;) {
    // Another token, another run followed, or the source's runs no longer shown: this one stops.
    if (app.client !== client || following !== res.runId || !client) return;
    let runs: Run[];
    try {
      runs = (await client.call('SOURCES.RUNS', { sourceId: s.sourceId })).data.runs;
    } catch (err) {
      following = undefined;
      sourcesPanel.fail(err, true);
      return;
    }
    if (app.client !== client || following !== res.runId) return;
    drawRuns(s.name, runs);
    const run = runs.find((r) => r.runId === res.runId);
    if (run && (run.state === 'done' || run.state === 'failed')) {
      following = undefined;
      await listSources();
      if (run.state === 'done' && run.version !== undefined) await onPublished();
      // The refreshes are calls of their own: the curl shown stays the run's, what was done.
      showCurl('SOURCES.RUN', { sourceId: s.sourceId });
      if (run.state === 'done')
        sourcesPanel.status(
          run.version !== undefined
            ? `“${s.name}” published ${s.index} version ${run.version}: ${formatNumber(run.rowsRead)} rows read, ${formatNumber(run.loaded)} loaded, ${formatNumber(run.rejected)} rejected.`
            : `“${s.name}” found nothing new: no version published.`,
        );
      else sourcesPanel.status(`The run of “${s.name}” failed; nothing was published: ${run.error ?? ''}`);
      return;
    }
    sourcesPanel.status(`Running “${s.name}”: ${run?.state ?? 'queued'}…`);
    await sleep(1000);
  }
}

async function deleteSource(s: Source): Promise<void> {
  if (!window.confirm(`Delete the source “${s.name}”? Its schedule and runs go; the index ${s.index} keeps its data.`))
    return;
  const res = await sourcesPanel.call('SOURCES.DELETE', { sourceId: s.sourceId }, { keep: true });
  if (!res) return;
  if (shownRuns?.sourceId === s.sourceId) {
    shownRuns = undefined;
    following = undefined;
    byId('source-runs').replaceChildren();
  }
  await listSources();
  showCurl('SOURCES.DELETE', { sourceId: s.sourceId });
  sourcesPanel.status(`Deleted the source “${s.name}”; the index ${s.index} keeps what it loaded.`);
}

let onPublished: () => Promise<unknown> = async () => undefined;

/** Forgets another connection's sources (a new token, or none). */
export function resetSources(): void {
  shownRuns = undefined;
  following = undefined;
  byId('source-runs').replaceChildren();
  byId('sources-result').replaceChildren(
    el('p', { class: 'empty' }, 'Connect with a token that holds indexes:write to see your sources.'),
  );
}

/** The list, and the runs shown, brought up to date (the tab shown, Refresh). */
export async function refreshSources(): Promise<void> {
  await listSources();
  if (shownRuns && !following) await showRuns(shownRuns.sourceId, shownRuns.name);
}

export function startSources(published: () => Promise<unknown>): void {
  onPublished = published;
  sourcesPanel.configure({ explain: explainSourceError });
  for (const id of ['source-kind', 'source-connect', 'source-read', 'source-mode']) on(id, 'change', syncForm);
  syncForm();
  onSubmit('source-form', () => void createSource());
  on('sources-refresh', 'click', () => void refreshSources());
  onTabShown('data', () => void (app.client && refreshSources()));
}

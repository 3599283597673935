import type { ParamsOf, ResultOf } from '@quarry/client';
import { app } from './app-state';
import { byId, el, fillSelect, on, onSubmit } from './dom';
import { Panel } from './panel';
import { onTabShown, selectTab } from './tabs';

/*
 * Scheduled deliveries (REPORTS.SCHEDULE, REPORTS.SCHEDULES, REPORTS.UNSCHEDULE): create one for a saved
 * report, see the webhook secret the one time it is given, list the caller's schedules with their status,
 * next run and last delivery, and remove one.
 */

export const schedulesPanel = new Panel('schedules');

type Schedule = ResultOf<'REPORTS.SCHEDULES'>['schedules'][number];

/** Report names by guid, for the list (a schedule names its report by guid only). */
const reportNames = new Map<string, string>();
/** A report to preselect when the tab next fills its report list (from a report's Schedule button). */
let wanted: string | undefined;

const when = (iso: string) => `${iso.slice(0, 16).replace('T', ' ')} UTC`;

async function loadReports(): Promise<void> {
  const res = await schedulesPanel.call('REPORTS.FIND', { limit: 100 }, { keep: true });
  if (!res) return;
  for (const r of res.reports) reportNames.set(r.guid, r.name);
  const select = byId<HTMLSelectElement>('schedule-report');
  if (res.reports.length)
    fillSelect(
      select,
      res.reports.map((r): [string, string] => [r.guid, `${r.name} (${r.type}, ${r.index})`]),
    );
  else select.replaceChildren(el('option', { value: '' }, '(no reports yet: save a search or a crosstab first)'));
  if (wanted && res.reports.some((r) => r.guid === wanted)) select.value = wanted;
  wanted = undefined;
}

function lastDelivery(s: Schedule): Array<Node | string> {
  const last = s.deliveries[0];
  if (!last) return ['none yet'];
  const status = last.httpStatus ? ` (${last.httpStatus})` : '';
  return [
    `${last.outcome}${status} ${when(last.at)}, try ${last.attempt}`,
    last.detail ? el('small', { class: 'detail' }, last.detail) : '',
  ];
}

async function listSchedules(): Promise<void> {
  const res = await schedulesPanel.call('REPORTS.SCHEDULES', {}, { keep: true });
  if (!res) return;
  const head = el(
    'tr',
    {},
    ...['Report', 'When', 'Format', 'To', 'Status', 'Next run', 'Last delivery', ''].map((h) =>
      el('th', { scope: 'col' }, h),
    ),
  );
  const rows = res.schedules.map((s) => {
    const name = reportNames.get(s.guid) ?? s.guid;
    const remove = el(
      'button',
      { type: 'button', class: 'quiet', 'aria-label': `Remove the schedule of ${name}` },
      'Remove',
    );
    remove.addEventListener('click', () => void removeSchedule(s.scheduleId));
    const to = 'webhook' in s.deliver ? s.deliver.webhook.url : s.deliver.email.to.join(', ');
    return el(
      'tr',
      {},
      el('td', {}, name),
      el('td', {}, el('code', {}, s.cron), ` ${s.timeZone}`),
      el('td', {}, s.format),
      el('td', {}, to),
      el(
        'td',
        {},
        el('span', { class: `tag status-${s.status}` }, s.status),
        s.stoppedReason ? el('small', { class: 'detail' }, s.stoppedReason) : '',
      ),
      el('td', {}, s.nextRunAt ? when(s.nextRunAt) : '—'),
      el('td', {}, ...lastDelivery(s)),
      el('td', { class: 'cell-actions' }, remove),
    );
  });
  byId('schedules-result').replaceChildren(
    res.schedules.length
      ? el(
          'div',
          { class: 'table-wrap' },
          el('table', { id: 'schedules-table', class: 'grid' }, el('thead', {}, head), el('tbody', {}, ...rows)),
        )
      : el('p', { class: 'empty' }, 'No schedules yet: choose a report above and when to deliver it.'),
  );
  schedulesPanel.status(
    `${res.schedules.length} ${res.schedules.length === 1 ? 'schedule' : 'schedules'} (times in UTC).`,
  );
}

async function refresh(): Promise<void> {
  await loadReports();
  await listSchedules();
}

async function createSchedule(): Promise<void> {
  const guid = byId<HTMLSelectElement>('schedule-report').value;
  if (!guid)
    return schedulesPanel.fail(new Error('Choose a report to schedule (save a search or a crosstab first).'), true);
  const to = byId<HTMLInputElement>('schedule-to').value.trim();
  const deliver: ParamsOf<'REPORTS.SCHEDULE'>['deliver'] =
    byId<HTMLSelectElement>('schedule-by').value === 'email'
      ? { email: { to: to.split(/[,;\s]+/).filter(Boolean) as [string, ...string[]] } }
      : { webhook: { url: to } };
  const res = await schedulesPanel.call(
    'REPORTS.SCHEDULE',
    {
      guid,
      cron: byId<HTMLInputElement>('schedule-cron').value.trim(),
      timeZone: byId<HTMLInputElement>('schedule-tz').value.trim() || 'UTC',
      format: byId<HTMLSelectElement>('schedule-format').value as ParamsOf<'REPORTS.SCHEDULE'>['format'],
      deliver,
      ...(byId<HTMLInputElement>('schedule-now').checked ? { runNow: true } : {}),
    },
    { keep: true },
  );
  if (!res) return;
  const note = byId('schedule-secret');
  note.replaceChildren();
  if (res.secret)
    note.append(
      el('strong', {}, 'Webhook signing secret, shown this once: '),
      el('code', {}, res.secret),
      ' Receivers check the Quarry-Signature header with it; copy it now.',
    );
  note.hidden = !res.secret;
  await listSchedules();
  schedulesPanel.status(`Scheduled ${res.scheduleId}.`);
}

async function removeSchedule(scheduleId: string): Promise<void> {
  const res = await schedulesPanel.call('REPORTS.UNSCHEDULE', { scheduleId }, { keep: true });
  if (!res) return;
  byId('schedule-secret').hidden = true;
  await listSchedules();
  schedulesPanel.status(`Removed schedule ${scheduleId}.`);
}

/** Forgets another connection's reports (a new token, or none). */
export function resetSchedules(): void {
  reportNames.clear();
  byId('schedule-report').replaceChildren(el('option', { value: '' }, '(no reports yet)'));
}

/** Opens the tab with this report chosen (a report row's Schedule button). */
export function scheduleReport(guid: string): void {
  wanted = guid;
  selectTab('schedules');
  byId('schedule-cron').focus();
}

export function startSchedules(): void {
  onSubmit('schedule-form', () => void createSchedule());
  on('schedules-refresh', 'click', () => void refresh());
  on('schedule-by', 'change', () => {
    const email = byId<HTMLSelectElement>('schedule-by').value === 'email';
    byId<HTMLInputElement>('schedule-to').placeholder = email
      ? 'ana@example.com, bo@example.com'
      : 'https://hooks.example.com/quarry';
  });
  // Cron is read in the viewer's own zone unless they change it.
  byId<HTMLInputElement>('schedule-tz').value = Intl.DateTimeFormat().resolvedOptions().timeZone || 'UTC';
  onTabShown('schedules', () => void (app.client && refresh()));
}

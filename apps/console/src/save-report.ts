import { QuarryError, type CrosstabExecuteParams, type QueriesExecuteParams } from '@quarry/client';
import { byId, el } from './dom';
import type { Panel } from './panel';

type LastCall =
  | { method: 'QUERIES.EXECUTE'; params: QueriesExecuteParams }
  | { method: 'CROSSTAB.EXECUTE'; params: CrosstabExecuteParams };
type Kind = 'search' | 'crosstab';

/** The report a tab shows (opened, or saved there): saving under its name updates it. */
export interface LoadedReport {
  guid: string;
  name: string;
  shared: boolean;
  owner: string;
  version: number;
}

const loaded: Partial<Record<Kind, LoadedReport>> = {};

/** The line above the save form saying which report the tab shows, made once. */
function loadedLine(kind: Kind): HTMLElement {
  const id = `${kind}-loaded`;
  const found = document.getElementById(id);
  if (found) return found;
  const line = el('p', { id, class: 'loaded', role: 'status', hidden: '' });
  byId(`${kind}-save`).before(line);
  return line;
}

/** Says which report the tab shows and fills the save form with it; undefined: none (a new call was run). */
export function showLoaded(kind: Kind, report: LoadedReport | undefined): void {
  const line = loadedLine(kind);
  const button = byId(`${kind}-save`).querySelector<HTMLButtonElement>('button[type=submit]');
  if (!report) {
    delete loaded[kind];
    line.hidden = true;
    line.replaceChildren();
    if (button) button.textContent = 'Save as report';
    return;
  }
  loaded[kind] = report;
  line.replaceChildren(
    'Report ',
    el('strong', {}, `“${report.name}”`),
    ` (version ${report.version}, owner ${report.owner}${report.shared ? ', shared' : ''}). Saving under its name updates it; another name saves a new report.`,
  );
  line.hidden = false;
  byId<HTMLInputElement>(`${kind}-save-name`).value = report.name;
  byId<HTMLInputElement>(`${kind}-save-shared`).checked = report.shared;
  if (button) button.textContent = 'Update report';
}

/** The report a tab shows, if any. */
export const loadedReport = (kind: Kind): LoadedReport | undefined => loaded[kind];

/** The name box follows what saving will do: update the shown report, or save a new one. */
export function followSaveName(kind: Kind): void {
  byId(`${kind}-save-name`).addEventListener('input', () => {
    const button = byId(`${kind}-save`).querySelector<HTMLButtonElement>('button[type=submit]');
    const same = loaded[kind]?.name === byId<HTMLInputElement>(`${kind}-save-name`).value.trim();
    if (button) button.textContent = same ? 'Update report' : 'Save as report';
  });
}

/**
 * Saves the panel's last call as a report (the call runs again with saveReport), named in its form; under
 * the name of the report the tab shows, updates that report instead (its params become a new version).
 */
export async function saveAsReport(panel: Panel, kind: Kind, last: LastCall | undefined): Promise<void> {
  const name = byId<HTMLInputElement>(`${kind}-save-name`).value.trim();
  const shared = byId<HTMLInputElement>(`${kind}-save-shared`).checked;
  if (!last) return panel.fail(new Error(`Run a ${kind} first: the report saves what was run last.`), true);
  if (!name) return panel.fail(new Error('Give the report a name.'), true);
  const current = loaded[kind];
  if (current && current.name === name) {
    const params = last.params as unknown as Record<string, unknown>;
    const res = await panel.call(
      'REPORTS.UPDATE',
      { guid: current.guid, params, ...(shared !== current.shared ? { shared } : {}) },
      { keep: true },
    );
    if (!res) return;
    showLoaded(kind, res);
    panel.status(`Updated report “${res.name}”: version ${res.version}.`);
    return;
  }
  const saveReport = { name, ...(shared ? { shared } : {}) };
  // The answer on screen stays: saving runs the same call, it does not change what is shown.
  let res;
  try {
    res =
      last.method === 'QUERIES.EXECUTE'
        ? await panel.call('QUERIES.EXECUTE', { ...last.params, saveReport }, { keep: true, rethrow: true })
        : await panel.call('CROSSTAB.EXECUTE', { ...last.params, saveReport }, { keep: true, rethrow: true });
  } catch (err) {
    panel.fail(
      err instanceof QuarryError && err.code === 409
        ? new Error(
            `You already have a report named “${name}”. Open it from Reports and save again to update it, or choose another name.`,
          )
        : err,
      true,
    );
    return;
  }
  if (!res) return;
  const guid = res.report?.guid ?? '';
  panel.status(`Saved report "${name}" (${guid}). It is listed under Reports.`);
  // The saved report as the tab now shows it, with its owner: the token's user, which no other call tells.
  const meta = guid ? await panel.call('REPORTS.METADATA', { guid }, { keep: true }) : undefined;
  if (meta) {
    showLoaded(kind, meta);
    panel.status(`Saved report “${name}” (${guid}). It is listed under Reports.`);
  }
}

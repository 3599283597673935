import type { CrosstabExecuteParams, QueriesExecuteParams } from '@quarry/client';
import { byId } from './dom';
import type { Panel } from './panel';

type LastCall =
  | { method: 'QUERIES.EXECUTE'; params: QueriesExecuteParams }
  | { method: 'CROSSTAB.EXECUTE'; params: CrosstabExecuteParams };

/** Saves the panel's last call as a report (the call runs again with saveReport), named in its form. */
export async function saveAsReport(
  panel: Panel,
  kind: 'search' | 'crosstab',
  last: LastCall | undefined,
): Promise<void> {
  const name = byId<HTMLInputElement>(`${kind}-save-name`).value.trim();
  const shared = byId<HTMLInputElement>(`${kind}-save-shared`).checked;
  if (!last) return panel.fail(new Error(`Run a ${kind} first: the report saves what was run last.`), true);
  if (!name) return panel.fail(new Error('Give the report a name.'), true);
  const saveReport = { name, ...(shared ? { shared } : {}) };
  // The answer on screen stays: saving runs the same call, it does not change what is shown.
  const res =
    last.method === 'QUERIES.EXECUTE'
      ? await panel.call('QUERIES.EXECUTE', { ...last.params, saveReport }, { keep: true })
      : await panel.call('CROSSTAB.EXECUTE', { ...last.params, saveReport }, { keep: true });
  if (!res) return;
  panel.status(`Saved report "${name}" (${res.report?.guid ?? ''}). It is listed under Reports.`);
}

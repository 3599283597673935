import type { MessagePort } from 'node:worker_threads';
import { isAppError } from '@quarry/errors';
import type { CachedResult } from '@quarry/result-cache';
import type { GroupRow } from '../domain/axis-value';
import { tableResult, type TableJob } from '../domain/table-result';

export interface TableTask {
  /** The groups arrive on it in slices, `total` in all. */
  port: MessagePort;
  head: Omit<TableJob, 'groups'> & { total: number };
}

/** An AppError crosses back as its code and detail: a thread's rejection would lose its class. */
export type TableAnswer = { ok: CachedResult } | { error: { code: string; detail: string } };

/** Runs in a pool thread (piscina): collects the groups, then builds and renders the table there. */
export default async function renderTable({ port, head }: TableTask): Promise<TableAnswer> {
  const groups: GroupRow[] = [];
  if (head.total > 0)
    await new Promise<void>((resolve) => {
      port.on('message', (slice: GroupRow[]) => {
        for (const g of slice) groups.push(g);
        if (groups.length >= head.total) resolve();
      });
    });
  port.close();
  const { total: _total, ...job } = head;
  try {
    return { ok: await tableResult({ ...job, groups }) };
  } catch (err) {
    if (isAppError(err)) return { error: { code: err.code, detail: err.detail } };
    throw err;
  }
}

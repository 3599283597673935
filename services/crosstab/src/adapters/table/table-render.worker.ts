import { isAppError } from '@quarry/errors';
import type { CachedResult } from '@quarry/result-cache';
import { tableResult, type TableJob } from '../../domain/table-result';
import { unpackGroups, type PackedGroups } from './packed-groups';

/** A table to draw, or 'warm': start the thread and load its modules before the first table. */
export type TableTask =
  | {
      head: Omit<TableJob, 'groups'>;
      /** The groups, packed: their typed arrays were moved here, not cloned. */
      packed: PackedGroups;
    }
  | 'warm';

/** An AppError crosses back as its code and detail: a thread's rejection would lose its class. */
export type TableAnswer = { ok: CachedResult } | { error: { code: string; detail: string } } | { warm: true };

/** Runs in a pool thread (piscina): builds and renders the table there. */
export default async function renderTable(task: TableTask): Promise<TableAnswer> {
  if (task === 'warm') return { warm: true };
  const { head, packed } = task;
  try {
    return { ok: await tableResult({ ...head, groups: unpackGroups(packed) }) };
  } catch (err) {
    if (isAppError(err)) return { error: { code: err.code, detail: err.detail } };
    throw err;
  }
}

import { isAppError } from '@quarry/errors';
import type { CachedResult } from '@quarry/result-cache';
import { tableResult, type TableJob } from '../domain/table-result';
import { unpackGroups, type PackedGroups } from './packed-groups';

export interface TableTask {
  head: Omit<TableJob, 'groups'>;
  /** The groups, packed: their typed arrays were moved here, not cloned. */
  packed: PackedGroups;
}

/** An AppError crosses back as its code and detail: a thread's rejection would lose its class. */
export type TableAnswer = { ok: CachedResult } | { error: { code: string; detail: string } };

/** Runs in a pool thread (piscina): builds and renders the table there. */
export default async function renderTable({ head, packed }: TableTask): Promise<TableAnswer> {
  try {
    return { ok: await tableResult({ ...head, groups: unpackGroups(packed) }) };
  } catch (err) {
    if (isAppError(err)) return { error: { code: err.code, detail: err.detail } };
    throw err;
  }
}

import { AppError } from '@quarry/errors';
import type { IndexEntry, RollupDef, RollupTotal } from '@quarry/metadata-store';

export interface RollupOptions {
  rows?: string;
  columns?: string;
  totals?: string;
  name?: string;
}

/** Rollups an index may keep: each is built at every load, and each costs a pass of its own. */
export const MAX_ROLLUPS = 16;
/** Fields a rollup groups by (rows, columns and distinct-counted fields together). */
export const MAX_ROLLUP_FIELDS = 8;
const MAX_TOTALS = 32;
const NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;
const GRAINS = ['day', 'week', 'month', 'quarter', 'year'];
const KINDS: ReadonlyArray<RollupTotal['kind']> = ['count', 'sum', 'countDistinct', 'min', 'max', 'average'];

const shown = (text: string) => JSON.stringify(text.slice(0, 100));

function list(text: string | undefined, option: string): string[] {
  if (text === undefined) return [];
  if (text.length > 4096) throw AppError.invalid(`${option} is longer than 4096 characters`);
  const items = text.split(',').map((s) => s.trim());
  if (items.some((s) => s === '')) throw AppError.invalid(`${option} has an empty item: ${shown(text)}`);
  return items;
}

/**
 * `quarry index rollup add`'s options as a rollup of `entry`: every field named exists, a grain only on a
 * date, sums, averages, minimums and maximums only of numbers, no field on two axes, a new name.
 */
export function parseRollup(entry: IndexEntry, opts: RollupOptions): RollupDef {
  const types = new Map(entry.fields.map((f) => [f.name, f.type]));
  const field = (name: string, option: string) => {
    if (!types.has(name))
      throw AppError.invalid(
        `${option}: index "${entry.name}" has no field ${shown(name)} (it has ${entry.fields.map((f) => f.name).join(', ')})`,
      );
    return name;
  };
  const rows = list(opts.rows, '--rows').map((f) => field(f, '--rows'));
  if (rows.length === 0) throw AppError.invalid('--rows names at least one field');
  const columns = list(opts.columns, '--columns').map((text) => {
    const at = text.lastIndexOf(':');
    const name = field(at > 0 ? text.slice(0, at) : text, '--columns');
    if (at <= 0) return { field: name };
    const grain = text.slice(at + 1);
    if (types.get(name) !== 'date')
      throw AppError.invalid(`--columns: ${shown(name)} is not a date; only a date has a grain`);
    if (!GRAINS.includes(grain))
      throw AppError.invalid(
        `--columns: the grain of ${shown(name)} must be one of ${GRAINS.join(', ')}, got ${shown(grain)}`,
      );
    return { field: name, grain };
  });
  const axes = [...rows, ...columns.map((c) => c.field)];
  const twice = axes.find((f, i) => axes.indexOf(f) !== i);
  if (twice !== undefined) throw AppError.invalid(`--rows/--columns: ${shown(twice)} is named twice`);
  const totals = list(opts.totals, '--totals').map((text): RollupTotal => {
    const at = text.indexOf(':');
    const kind = KINDS.find((k) => k === (at < 0 ? text : text.slice(0, at)));
    if (!kind) throw AppError.invalid(`--totals: ${shown(text)} must be count or ${KINDS.slice(1).join('|')}:field`);
    if (kind === 'count') {
      if (at >= 0) throw AppError.invalid(`--totals: count takes no field (every rollup counts records)`);
      return { kind };
    }
    if (at < 0) throw AppError.invalid(`--totals: ${kind} needs a field (${kind}:field)`);
    const name = field(text.slice(at + 1), '--totals');
    const type = types.get(name);
    if (kind !== 'countDistinct' && type !== 'integer' && type !== 'number')
      throw AppError.invalid(`--totals: ${kind} of ${shown(name)} needs a number field (it is ${type})`);
    return { kind, field: name };
  });
  if (totals.length === 0) throw AppError.invalid('--totals names at least one total (count, sum:field, …)');
  if (totals.length > MAX_TOTALS) throw AppError.invalid(`--totals: at most ${MAX_TOTALS} totals`);
  const keyed = new Set([...axes, ...totals.flatMap((t) => (t.kind === 'countDistinct' && t.field ? [t.field] : []))]);
  if (keyed.size > MAX_ROLLUP_FIELDS)
    throw AppError.invalid(`A rollup groups by at most ${MAX_ROLLUP_FIELDS} fields (rows, columns, countDistinct)`);
  const name =
    opts.name ?? [rows.join('_'), ...columns.map((c) => c.field + (c.grain ? `_${c.grain}` : ''))].join('_by_');
  if (!NAME.test(name))
    throw AppError.invalid(`--name must be 1-64 letters, digits, ".", "_" or "-", starting with a letter or digit`);
  const kept = entry.rollups ?? [];
  if (kept.some((r) => r.name === name))
    throw AppError.conflict(`Index "${entry.name}" already has a rollup named ${shown(name)}`);
  if (kept.length >= MAX_ROLLUPS) throw AppError.invalid(`An index keeps at most ${MAX_ROLLUPS} rollups`);
  return { name, rows, columns, totals: [...new Map(totals.map((t) => [`${t.kind}:${t.field ?? ''}`, t])).values()] };
}

/** A rollup as `rollup list` shows it: the options that would add it again. */
export function describeRollup(r: RollupDef): string {
  const totals = r.totals.map((t) => (t.field ? `${t.kind}:${t.field}` : t.kind)).join(',');
  const columns = r.columns.length
    ? ` --columns ${r.columns.map((c) => (c.grain ? `${c.field}:${c.grain}` : c.field)).join(',')}`
    : '';
  return `${r.name}\t--rows ${r.rows.join(',')}${columns} --totals ${totals}`;
}

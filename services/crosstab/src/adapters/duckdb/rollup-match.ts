import type { IndexEntry } from '@quarry/metadata-store';
import type { QueryNode } from '@quarry/query-language';
import {
  ident,
  ROLLUP_COUNT,
  rollupCountColumn,
  rollupKeyFields,
  rollupMaxColumn,
  rollupMinColumn,
  rollupSumColumn,
  type BuiltRollup,
  type LoadedTable,
} from '@quarry/snapshots';
import type { AxisSpec, CrosstabSpec } from '../../domain/crosstab-spec';
import type { PivotRestriction } from '../../ports/pivot-engine.port';
import type { PivotPlan, RollupSource } from '../pivot/pivot-plan';

/** Date grains each stored grain can be truncated further to (a week is within no month). */
const COARSER: Record<string, readonly string[]> = {
  day: ['day', 'week', 'month', 'quarter', 'year'],
  week: ['week'],
  month: ['month', 'quarter', 'year'],
  quarter: ['quarter', 'year'],
  year: ['year'],
};

/** Every field a filter reads; undefined when it reads something else than named fields. */
function queryFields(q: QueryNode, into: Set<string>): Set<string> {
  switch (q.kind) {
    case 'all':
    case 'none':
      return into;
    case 'and':
    case 'or':
      for (const c of q.children) queryFields(c, into);
      return into;
    case 'not':
      return queryFields(q.child, into);
    case 'match':
      for (const f of q.fields) into.add(f);
      return into;
    default:
      into.add(q.field);
      return into;
  }
}

/**
 * The records' partial aggregates the rollup re-adds exactly, keyed by the plan's SQL for them: each
 * as the same aggregate of its column, or (`perRow`) as the column itself, when each rollup row is one
 * group of the pivot's pre-aggregate.
 */
function partialsOf(r: BuiltRollup, fields: ReadonlyMap<string, string>, perRow: boolean): Map<string, string> {
  const out = new Map<string, string>();
  const add = (sql: string, agg: string, col: string) => out.set(sql, perRow ? col : `${agg}(${col})`);
  add('count(*)', 'sum', ROLLUP_COUNT);
  for (const t of r.def.totals) {
    if (!t.field || t.kind === 'countDistinct') continue;
    const col = ident(t.field);
    const type = fields.get(t.field);
    add(type === 'string' ? `count(nullif(${col}, ''))` : `count(${col})`, 'sum', rollupCountColumn(t.field));
    const sum = type === 'number' ? 'fsum' : 'sum';
    if (t.kind === 'sum' || t.kind === 'average') add(`${sum}(${col})`, sum, rollupSumColumn(t.field));
    if (t.kind === 'min') add(`min(${col})`, 'min', rollupMinColumn(t.field));
    if (t.kind === 'max') add(`max(${col})`, 'max', rollupMaxColumn(t.field));
  }
  return out;
}

/**
 * Whether each row of the rollup is one group of the pivot's pre-aggregate: it groups by every field
 * the rollup keeps, each by its stored value (text, numbers, a date at the grain it was stored at),
 * so re-grouping the rollup would only copy it.
 */
function oneGroupPerRow(r: BuiltRollup, keys: readonly string[], plan: PivotPlan): boolean {
  const grain = new Set([...plan.axes.map((a) => a.field.name), ...plan.distinct.map((d) => d.field.name)]);
  if (!keys.every((k) => grain.has(k))) return false;
  return plan.axes.every(
    (a) => !a.bin && !a.dateGroup && (a.field.type !== 'date' || (a.field.grain ?? 'day') === r.grains[a.field.name]),
  );
}

/** Whether an axis groups the rollup's stored (possibly truncated) value as it groups the records'. */
function axisCovered(a: AxisSpec, r: BuiltRollup, keys: readonly string[], table: LoadedTable, zone: string) {
  const name = a.field.name;
  if (!keys.includes(name)) return false;
  const stored = r.grains[name];
  if (a.field.type !== 'date' || stored === undefined) return true;
  // A time zone's own calendar (TIMESTAMP WITH TIME ZONE) truncates by the loading process's zone.
  const type = table.columnTypes.get(name);
  if (type !== 'DATE' && type !== 'TIMESTAMP') return false;
  if (a.bin) return false;
  if (!a.dateGroup) return COARSER[stored]?.includes(a.field.grain ?? 'day') ?? false;
  // A date group reads wall-clock time in the crosstab's zone: the same instant only in UTC.
  if (type !== 'DATE' && zone !== 'UTC') return false;
  if (a.dateGroup === 'monthOfYear') return stored === 'day' || stored === 'month';
  if (a.dateGroup === 'dayOfWeek') return stored === 'day';
  return COARSER[stored]?.includes(a.dateGroup) ?? false;
}

/**
 * The rollup answering a pivot exactly, or undefined for a scan: one the index still keeps (a dropped
 * one is no longer matched, though its table stays in the version's file for crosstabs under way),
 * whose fields hold every axis at the crosstab's grouping (an Other pass's left-out axis too), every
 * field the filter (query, realm, restriction) reads, every distinct-counted field, and a partial for
 * every total; never for a median, percentile or standard deviation. The smallest such rollup wins.
 */
export function matchRollup(
  entry: IndexEntry,
  table: LoadedTable,
  spec: CrosstabSpec,
  where: QueryNode,
  plan: PivotPlan,
  restrict: PivotRestriction = {},
): RollupSource | undefined {
  // A period comparison's shifted pivot keys records by a moved time, which no rollup stored.
  if (!table.rollups?.length || !entry.rollups?.length || plan.holistic || spec.shift) return undefined;
  const kept = new Set(entry.rollups.map((r) => JSON.stringify(r)));
  const filtered = [...queryFields(where, new Set())];
  const fieldTypes = new Map(entry.fields.map((f) => [f.name, f.type]));
  // An Other pass leaves its outer axis out of the spec but still tests its key: the rollup must hold it.
  const excluded = [restrict.notRows?.axis, restrict.notColumns?.axis].filter((a): a is AxisSpec => a !== undefined);
  let best:
    { r: BuiltRollup & { stored: string }; partials: Map<string, string>; size: number; perRow: boolean } | undefined;
  for (const r of table.rollups) {
    if (!kept.has(JSON.stringify(r.def))) continue;
    const keys = rollupKeyFields(r.def);
    if (![...spec.rows, ...spec.columns, ...excluded].every((a) => axisCovered(a, r, keys, table, spec.timeZone)))
      continue;
    // A truncated date can neither be filtered nor counted distinct: its records' values are gone.
    const whole = (f: string) => keys.includes(f) && r.grains[f] === undefined;
    if (!filtered.every(whole) || !plan.distinct.every((d) => whole(d.field.name))) continue;
    const perRow = oneGroupPerRow(r, keys, plan);
    const partials = partialsOf(r, fieldTypes, perRow);
    if (!plan.partials.every((p) => partials.has(p.sql))) continue;
    if (!best || keys.length < best.size) best = { r, partials, size: keys.length, perRow };
  }
  return (
    best && {
      name: best.r.def.name,
      table: best.r.stored,
      partials: best.partials,
      ...(best.perRow ? { oneGroupPerRow: true } : {}),
      ...(best.r.rows !== undefined ? { rows: best.r.rows } : {}),
    }
  );
}

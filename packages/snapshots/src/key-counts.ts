import { rollupKeyFields, type BuiltRollup } from './rollup-tables';
import { ident, literal } from './sql';

type Query = (sql: string) => Promise<Array<Record<string, unknown>>>;
type Field = { name: string; type: string; grain?: string };

/**
 * Per field, how many keys it has on a crosstab axis (SnapshotFacts.distinctKeys), in one pass over
 * `from`. A blank (null, or empty text) is one key, present when some row's key is null. A date's month
 * or year is counted from its distinct days (far fewer than records), not truncated on every record:
 * the day decides the month and year, and date_trunc on every record was most of the pass.
 */
export async function countKeys(all: Query, from: string, fields: readonly Field[]): Promise<Record<string, number>> {
  const distinctKeys: Record<string, number> = {};
  if (fields.length === 0) return distinctKeys;
  const counts = fields.map((f, i) => {
    const col = ident(f.name);
    const grain = f.grain ?? 'day';
    const value = f.type === 'string' ? `nullif(${col}, '')` : f.type === 'date' ? `CAST(${col} AS DATE)` : col;
    const distinct =
      f.type === 'date' && grain !== 'day'
        ? `len(list_distinct(list_transform(list(DISTINCT ${value}), x -> date_trunc(${literal(grain)}, x))))`
        : `count(DISTINCT ${value})`;
    return `${distinct} + (count(*) > count(${value}))::INT AS k${i}`;
  });
  const [row] = await all(`SELECT ${counts.join(', ')} FROM ${from}`);
  fields.forEach((f, i) => (distinctKeys[f.name] = Number(row[`k${i}`])));
  return distinctKeys;
}

/**
 * Whether a date kept at `stored` (a rollup's grain, undefined when kept whole) still tells the key at
 * `grain` of every record it groups: truncating to the stored grain, then to `grain`, must be
 * truncating to `grain` (a week is within no month).
 */
function keepsGrain(stored: string | undefined, grain: string): boolean {
  if (stored === undefined || stored === grain || stored === 'day') return true;
  return grain === 'year' && (stored === 'month' || stored === 'quarter');
}

/**
 * The key counts of every field, each read from the smallest rollup that groups by it (a rollup holds
 * each distinct key of its key fields, blanks included, in far fewer rows than the records), the rest
 * from `records` in one pass: the same counts as a pass over the records alone, for less of a load's time.
 */
export async function countKeysWithRollups(
  all: Query,
  records: string,
  fields: readonly Field[],
  rollups: readonly BuiltRollup[],
): Promise<Record<string, number>> {
  const bySource = new Map<string, Field[]>();
  for (const f of fields) {
    let best: BuiltRollup | undefined;
    for (const r of rollups) {
      if (r.rows === undefined || !rollupKeyFields(r.def).includes(f.name)) continue;
      if (f.type === 'date' && !keepsGrain(r.grains[f.name], f.grain ?? 'day')) continue;
      if (!best || r.rows < (best.rows ?? Infinity)) best = r;
    }
    const from = best ? ident(best.table) : records;
    bySource.set(from, [...(bySource.get(from) ?? []), f]);
  }
  const out: Record<string, number> = {};
  for (const [from, some] of bySource) Object.assign(out, await countKeys(all, from, some));
  // In the fields' order, as one pass over the records gives them.
  return Object.fromEntries(fields.map((f) => [f.name, out[f.name]]));
}

import type { IndexEntry } from '@quarry/metadata-store';
import { compileWhere, type LoadedTable, type SnapshotEngine } from '@quarry/snapshots';
import type { QueryNode } from '@quarry/query-language';
import type { AxisSpec, CrosstabSpec } from '../../domain/crosstab-spec';
import type { KeysAtLeast } from '../../ports/pivot-engine.port';
import { groupedKey } from './pivot-sql';

/**
 * Records the key estimate samples of a version without a stored sample (read into memory, or written
 * before there was one): DuckDB's system sampling reads whole vectors, so this many records cost the
 * same few milliseconds at 3M records as at 120M (bench/scale.bench.js).
 */
export const KEY_SAMPLE_RECORDS = 100_000;
/**
 * The thorough sample of such a version, for a selective filter (quick once its pages are in DuckDB's
 * buffer, slow the first time a column is read). Attached versions
 * keep their own sample, contiguous and read at open (LoadedTable.sample).
 */
export const THOROUGH_SAMPLE_RECORDS = 4_000_000;

/**
 * Where the key estimate reads: the version's stored sample (its first level, or all of it when
 * thorough), else a system sample of the records. `more`: a thorough look would read more records.
 */
function sampleSource(
  table: LoadedTable,
  recordCount: number,
  thorough: boolean,
): { from: { sql: string; where: string; more: boolean }; sampled: number } {
  const s = table.sample;
  if (s) {
    const sampled = thorough ? s.records : s.first;
    // The level prunes by the row groups' zone maps: the first level reads only its own pages.
    return {
      from: { sql: s.table, where: thorough ? 'true' : s.firstLevel, more: !thorough && s.records > s.first },
      sampled,
    };
  }
  const sampled = thorough ? THOROUGH_SAMPLE_RECORDS : KEY_SAMPLE_RECORDS;
  const percent = Math.min(100, (sampled / Math.max(recordCount, 1)) * 100);
  return {
    from: {
      sql: `${table.stored} TABLESAMPLE ${percent.toFixed(6)}% (system)`,
      where: 'true',
      more: !thorough && percent < 100,
    },
    sampled,
  };
}

/**
 * A lower bound on the pivot's row and column keys (all and outer), from a sample of the filtered
 * records and the exact key counts the load kept.
 */
export async function estimateKeys(
  engine: SnapshotEngine,
  entry: IndexEntry,
  where: QueryNode,
  spec: CrosstabSpec,
  signal?: AbortSignal,
  opts: { thorough?: boolean } = {},
): Promise<KeysAtLeast> {
  // A small index is pivoted whole in about the time a sample would take: nothing to estimate.
  if (entry.recordCount <= KEY_SAMPLE_RECORDS) return { rows: 0, outerRows: 0, columns: 0, outerColumns: 0 };
  const table = await engine.table(entry);
  const w = compileWhere(where, table);
  const key = (a: AxisSpec, alias: string) => {
    const k = groupedKey(a, table.columnTypes, spec.timeZone);
    return `${a.field.type === 'string' && !a.bin && !a.dateGroup ? `nullif(${k}, '')` : k} AS ${alias}`;
  };
  const rows = spec.rows.map((_, i) => `__r${i}`);
  const cols = spec.columns.map((_, i) => `__c${i}`);
  // row(...) is never null, so a blank key counts as one key, as the pivot groups it.
  const distinct = (aliases: string[]) => (aliases.length ? `count(DISTINCT row(${aliases.join(', ')}))` : '1');
  // Every key a sample holds is a key of the index: a lower bound, in time bounded by the sample.
  const { from, sampled } = sampleSource(table, entry.recordCount, opts.thorough === true);
  const keys = [...spec.rows.map((a, i) => key(a, rows[i])), ...spec.columns.map((a, i) => key(a, cols[i]))];
  // One aggregate over the sampled records (a CTE read four times planned and ran 1.5-2x slower).
  const [row] = await engine.all(
    `SELECT ${distinct(rows)} AS nr, ${distinct(rows.slice(0, 1))} AS nor, ${distinct(cols)} AS nc, ${distinct(cols.slice(0, 1))} AS noc, count(*) AS kept
FROM (SELECT ${keys.length ? keys.join(', ') : '1 AS __one'} FROM ${from.sql} WHERE ${from.where} AND (${w.sql}))`,
    w.params,
    signal,
  );
  const out = {
    rows: Number(row.nr),
    outerRows: Number(row.nor),
    columns: Number(row.nc),
    outerColumns: Number(row.noc),
    // The filter kept under a quarter of what was sampled, and a larger sample is possible.
    moreToSee: from.more && Number(row.kept) < sampled / 4,
  };
  // Of every record, the load counted each field's keys exactly (attached versions; a date by its grain).
  const exact = (a: AxisSpec) =>
    where.kind === 'all' && !a.bin && !a.dateGroup ? (table.distinctKeys?.get(a.field.name) ?? 0) : 0;
  const most = (axes: AxisSpec[]) => Math.max(0, ...axes.map(exact));
  if (spec.rows.length) {
    out.rows = Math.max(out.rows, most(spec.rows));
    out.outerRows = Math.max(out.outerRows, exact(spec.rows[0]));
  }
  if (spec.columns.length) {
    out.columns = Math.max(out.columns, most(spec.columns));
    out.outerColumns = Math.max(out.outerColumns, exact(spec.columns[0]));
  }
  return out;
}

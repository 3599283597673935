import type { RollupDef } from '@quarry/metadata-store';
import { singleWordExpr } from './single-word-fields';
import { ident, literal, wordsColumn, wordsExpr } from './sql';

/**
 * Rollups as stored in a version's DuckDB file: one table per rollup, the records grouped by the
 * rollup's fields (a date truncated to its grain, in the column's own type) and by every field it
 * counts distinct values of (so a distinct count over any set of its groups stays exact), with one
 * partial aggregate per total: what a scan's pre-aggregate computes per record, added up per group.
 */

/** A rollup built into a version: its definition, its table and each date field's stored grain. */
export interface BuiltRollup {
  def: RollupDef;
  table: string;
  /** Date fields on the rollup's axes and the grain they were truncated to (the field's own when not given). */
  grains: Record<string, string>;
  /** Rows of its table (absent in versions written before it was kept). */
  rows?: number;
}

/** Columns of a rollup table beside its fields. */
export const ROLLUP_COUNT = '__n';
export const rollupSumColumn = (field: string) => ident(`__sum:${field}`);
export const rollupCountColumn = (field: string) => ident(`__count:${field}`);
export const rollupMinColumn = (field: string) => ident(`__min:${field}`);
export const rollupMaxColumn = (field: string) => ident(`__max:${field}`);

/** The fields a rollup groups by: its rows and columns, then the fields it counts distinct values of. */
export function rollupKeyFields(def: RollupDef): string[] {
  const keys = [...def.rows, ...def.columns.map((c) => c.field)];
  for (const t of def.totals) if (t.kind === 'countDistinct' && t.field && !keys.includes(t.field)) keys.push(t.field);
  return keys;
}

/** Every field a rollup reads; a load that no longer has one of them drops the rollup. */
export function rollupFields(def: RollupDef): string[] {
  return [...new Set([...rollupKeyFields(def), ...def.totals.flatMap((t) => (t.field ? [t.field] : []))])];
}

type Field = { name: string; type: string; grain?: string };
type Query = (sql: string) => Promise<Array<Record<string, unknown>>>;

/**
 * What a load knows of its records that makes a rollup's statement cheaper with the very same table
 * (same columns, types and rows): see learnRollupHints.
 */
export interface RollupHints {
  /** Single-word text fields (single-word-fields): their words are the value lower-cased, no regex needed. */
  singleWord?: ReadonlySet<string>;
  /** Integer fields whose every group's sum fits a BIGINT: summed straight to BIGINT (narrowRollupSums' type). */
  bigintSums?: ReadonlySet<string>;
}

/** Beyond any month, quarter or year key of a finite date: the keys of the infinite dates. */
const INFINITE_KEY = 2n ** 40n;

/**
 * A date's group key at `grain`, and the value the rollup keeps for it, computed once per group.
 * DuckDB's date_trunc on every record cost more than the whole GROUP BY around it, where year(),
 * quarter() and month() are cheap and their integer makes a narrow key: month k = year·12 + month − 1
 * gives back its first day (floor division, so years before 1 AD too). year() of an infinite date is
 * NULL where date_trunc keeps it: those few records (and nulls) take the COALESCE's second branch,
 * which DuckDB evaluates for them alone. A week keeps date_trunc (no cheaper integer measured).
 */
function dateKey(col: string, grain: string, type: string): { key: string; value: (k: string) => string } {
  const back = (date: string) => `CAST(${date} AS ${type})`;
  if (type !== 'DATE' && type !== 'TIMESTAMP')
    return { key: `CAST(date_trunc(${literal(grain)}, ${col}) AS ${type})`, value: (k) => k };
  // A date's own cast keeps infinities, and a day is a DATE.
  if (grain === 'day') return { key: `CAST(${col} AS DATE)`, value: back };
  const perYear: Record<string, [number, string] | undefined> = {
    year: [1, ''],
    quarter: [4, `quarter(${col})`],
    month: [12, `month(${col})`],
  };
  const per = perYear[grain];
  if (!per) return { key: `CAST(date_trunc(${literal(grain)}, ${col}) AS ${type})`, value: (k) => k };
  const [n, part] = per;
  const finite = n === 1 ? `year(${col})` : `year(${col}) * ${n} + ${part} - 1`;
  const infinite = `CASE WHEN ${col} = 'infinity' THEN ${INFINITE_KEY} WHEN ${col} = '-infinity' THEN -${INFINITE_KEY} END`;
  const rest = (k: string) => `((${k} % ${n}) + ${n}) % ${n}`;
  const month = (k: string) => (n === 12 ? rest(k) : `${rest(k)} * ${12 / n}`);
  const first = (k: string) =>
    n === 1 ? `make_date(${k}, 1, 1)` : `make_date((${k} - ${rest(k)}) // ${n}, ${month(k)} + 1, 1)`;
  return {
    key: `coalesce(${finite}, ${infinite})`,
    value: (k) =>
      `CASE ${k} WHEN ${INFINITE_KEY} THEN ${back("'infinity'")} WHEN -${INFINITE_KEY} THEN ${back("'-infinity'")} ELSE ${back(first(k))} END`,
  };
}

/**
 * The statement creating a rollup's table from `records` (a table with the snapshot's columns and words
 * columns, whose DuckDB types are `columnTypes`).
 */
export function rollupTableSql(
  def: RollupDef,
  table: string,
  records: string,
  fields: readonly Field[],
  columnTypes: ReadonlyMap<string, string>,
  hints: RollupHints = {},
): { sql: string; grains: Record<string, string> } {
  const byName = new Map(fields.map((f) => [f.name, f]));
  const grains: Record<string, string> = {};
  const keys: string[] = [];
  // What the table keeps, in order: each key, a text key's words column after it, then the totals.
  const kept: string[] = [];
  const axes = new Set([...def.rows, ...def.columns.map((c) => c.field)]);
  for (const name of rollupKeyFields(def)) {
    const f = byName.get(name);
    if (!f) throw new Error(`rollup "${def.name}": no field "${name}"`);
    const col = ident(name);
    // A date only counted distinct is kept whole: its distinct values are the records'.
    if (f.type === 'date' && axes.has(name)) {
      const grain = def.columns.find((c) => c.field === name)?.grain ?? f.grain ?? 'day';
      grains[name] = grain;
      // The column keeps its type, so a crosstab's date SQL reads the rollup as it reads the records.
      const type = columnTypes.get(name) ?? 'TIMESTAMP';
      const { key, value } = dateKey(col, grain, type);
      keys.push(`${key} AS ${col}`);
      kept.push(`${value(col)} AS ${col}`);
    } else {
      keys.push(col);
      kept.push(col);
    }
    // A word match on the field reads the words column: kept beside the value it derives from. It is
    // the value's own words, computed once per group rather than grouped by (in a version that reads a
    // single-word field's words through a view, grouping by them computed them for every record).
    if (f.type === 'string') {
      const words = hints.singleWord?.has(name) ? singleWordExpr(col) : wordsExpr(col);
      kept.push(`${words} AS ${wordsColumn(name)}`);
    }
  }
  const measures = [`count(*) AS ${ROLLUP_COUNT}`];
  kept.push(ROLLUP_COUNT);
  const add = (sql: string, alias: string) => {
    const measure = `${sql} AS ${alias}`;
    if (measures.includes(measure)) return;
    measures.push(measure);
    kept.push(alias);
  };
  for (const t of def.totals) {
    if (!t.field || t.kind === 'countDistinct') continue;
    const f = byName.get(t.field);
    if (!f) throw new Error(`rollup "${def.name}": no field "${t.field}"`);
    const col = ident(t.field);
    const count = f.type === 'string' ? `count(nullif(${col}, ''))` : `count(${col})`;
    add(count, rollupCountColumn(t.field));
    if (t.kind === 'sum' || t.kind === 'average') {
      const sum =
        f.type === 'number'
          ? `fsum(${col})`
          : hints.bigintSums?.has(t.field)
            ? `CAST(sum(${col}) AS BIGINT)`
            : `sum(${col})`;
      add(sum, rollupSumColumn(t.field));
    }
    if (t.kind === 'min') add(`min(${col})`, rollupMinColumn(t.field));
    if (t.kind === 'max') add(`max(${col})`, rollupMaxColumn(t.field));
  }
  const groupBy = keys.length ? ` GROUP BY ${keys.map((_, i) => i + 1).join(', ')}` : '';
  const grouped = `SELECT ${[...keys, ...measures].join(', ')} FROM ${records}${groupBy}`;
  return { sql: `CREATE TABLE ${ident(table)} AS SELECT ${kept.join(', ')} FROM (${grouped})`, grains };
}

/** DuckDB's integer types whose sum() is a HUGEINT: the type narrowRollupSums narrows to BIGINT. */
const SUMMED_AS_HUGEINT = new Set([
  'TINYINT',
  'SMALLINT',
  'INTEGER',
  'BIGINT',
  'HUGEINT',
  'UTINYINT',
  'USMALLINT',
  'UINTEGER',
  'UBIGINT',
]);

/**
 * Learns RollupHints for `rollups` over `records`. A group's sum fits a BIGINT whenever the largest
 * |value| times the number of records is below 2^63: knowing it from one aggregate (min and max of the
 * summed fields, a light pass) spares the HUGEINT sums, the pass checking each group's and the ALTER
 * rewriting the column, which cost more. Past that bound the sum is a HUGEINT as before, and
 * narrowRollupSums looks at each group's.
 */
export async function learnRollupHints(
  all: Query,
  records: string,
  fields: readonly Field[],
  columnTypes: ReadonlyMap<string, string>,
  rollups: readonly RollupDef[],
  singleWord: ReadonlySet<string>,
): Promise<RollupHints> {
  const byName = new Map(fields.map((f) => [f.name, f]));
  const sums = new Set<string>();
  for (const def of rollups)
    for (const t of def.totals)
      if (
        t.field &&
        (t.kind === 'sum' || t.kind === 'average') &&
        byName.get(t.field)?.type === 'integer' &&
        SUMMED_AS_HUGEINT.has(columnTypes.get(t.field) ?? '')
      )
        sums.add(t.field);
  const bigintSums = new Set<string>();
  if (sums.size === 0) return { singleWord, bigintSums };
  const list = [...sums];
  const bounds = list.map((name, i) => {
    const col = ident(name);
    return `CAST(min(${col}) AS VARCHAR) AS lo${i}, CAST(max(${col}) AS VARCHAR) AS hi${i}`;
  });
  const [row] = await all(`SELECT count(*) AS n, ${bounds.join(', ')} FROM ${records}`);
  const abs = (v: unknown) => {
    const x = v == null ? 0n : BigInt(String(v));
    return x < 0n ? -x : x;
  };
  const n = BigInt(String(row.n));
  list.forEach((name, i) => {
    const lo = abs(row[`lo${i}`]);
    const hi = abs(row[`hi${i}`]);
    if ((lo > hi ? lo : hi) * n < 2n ** 63n) bigintSums.add(name);
  });
  return { singleWord, bigintSums };
}

/** The table name of a version's i-th rollup. */
export function rollupTableName(i: number): string {
  return `quarry_rollup_${i}`;
}

/**
 * Narrows a rollup table's integer sums (DuckDB sums integers as HUGEINT) to BIGINT when every group's
 * sum fits: DuckDB reads a bit-packed HUGEINT column about ten times slower than a BIGINT one, which
 * made most of a covered crosstab's time. The values are the same, and re-adding them gives the same
 * type and the same exact total (a sum of BIGINT is a HUGEINT).
 */
export async function narrowRollupSums(run: (sql: string) => Promise<unknown>, all: Query, table: string) {
  const described = await all(`DESCRIBE ${ident(table)}`);
  const wide = described.flatMap((r) => {
    const name = String(r.column_name);
    return name.startsWith('__sum:') && r.column_type === 'HUGEINT' ? [ident(name)] : [];
  });
  if (wide.length === 0) return;
  // A column of nulls only fits too; TRY_CAST is NULL where a value does not.
  const fits = wide.map(
    (col, i) => `bool_and(${col} IS NULL OR TRY_CAST(${col} AS BIGINT) IS NOT NULL) IS NOT FALSE AS f${i}`,
  );
  const [row] = await all(`SELECT ${fits.join(', ')} FROM ${ident(table)}`);
  for (const [i, col] of wide.entries())
    if (row[`f${i}`] === true) await run(`ALTER TABLE ${ident(table)} ALTER ${col} SET DATA TYPE BIGINT`);
}

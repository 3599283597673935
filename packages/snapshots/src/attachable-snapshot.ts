import fs from 'node:fs';
import { DuckDBInstance } from '@duckdb/node-api';
import type { RollupDef } from '@quarry/metadata-store';
import { narrowRollupSums, rollupTableName, rollupTableSql, type BuiltRollup } from './rollup-tables';
import { learnSingleWordFields, type SingleWordField, type SingleWordFields } from './single-word-fields';
import { ident, literal, wordsColumn, wordsExpr } from './sql';

/**
 * From this many records a published version is also written in DuckDB's own format, which every
 * process serving it attaches read-only instead of reading the Parquet file into memory: attaching is
 * near instant and costs little memory where reading a big version in takes seconds and gigabytes;
 * Parquet queried in place opens as fast but matches words far slower (no words column); the figures
 * are in docs/scaling.md. Below it the read-in is quick and the in-memory table is what answers (a
 * little faster once warm), so small loads stay a file copy.
 */
export const ATTACH_MIN_RECORDS = 500_000;

/** The table of records in an attachable snapshot, its facts table and its sample of records. */
export const RECORDS_TABLE = 'records';
export const FACTS_TABLE = 'quarry_facts';
export const SAMPLE_TABLE = 'quarry_sample';

/**
 * Records in the sample an attachable version keeps for the cell-limit estimate, at most. Contiguous,
 * its pages read in quickly whatever the table's size, where a system sample of as many records spread
 * over the whole table reads pages across every column (seconds the first time on a big version). Its
 * pages take a few tens of MB in DuckDB's buffer.
 */
export const SAMPLE_MAX_RECORDS = 2_000_000;
/** Of them, the first level: what every crosstab's estimate reads; the rest only for a selective filter. */
export const SAMPLE_FIRST_RECORDS = 100_000;
/** Every record of a version this small is in its sample (the thorough look is then exact). */
const SAMPLE_ALL_BELOW = 4 * SAMPLE_FIRST_RECORDS;

/**
 * How many records a version of `recordCount` keeps in its sample: all of them up to 400,000, 400,000
 * up to 1.6M, then a quarter up to SAMPLE_MAX_RECORDS. Writing the sample costs about what writing as many records does
 * (2M of 3M records took as long as the 3M), and under ~8M records a full pass, which the estimate
 * would spare, takes a few hundred milliseconds at most: so a mid-sized version keeps a quarter.
 */
export function sampleRecords(recordCount: number): number {
  return Math.min(recordCount, SAMPLE_MAX_RECORDS, Math.max(Math.ceil(recordCount / 4), SAMPLE_ALL_BELOW));
}

/** A sample row's level: 0 for the first, 1 for the rest. */
export const SAMPLE_LEVEL = '__sample_level';

/**
 * A uniform sample of the records (by a hash of the record's number, so a reload of the same file
 * by the same DuckDB keeps the same sample), in two levels: the rows of level 0 (SAMPLE_LEVEL), written first, are a
 * uniform sample of `first` records, and all `records` rows one of that many. Within a level the rows
 * are in record order, which compresses as the records table does. Each row is a whole record, so every
 * filter runs on it as on the records.
 */
export interface SampleFacts {
  records: number;
  first: number;
}

/** What a load learns once and every process reads back when it attaches the version. */
export interface SnapshotFacts {
  singleWord: Array<[string, { values?: Array<[string, string[]]> }]>;
  /**
   * Per field: how many keys the field has on a crosstab axis with no grouping of its own (blank text
   * and null are one key; a date counts the keys of its own grain, a month of a field loaded by month).
   * A crosstab of every record that needs more is refused without scanning.
   */
  distinctKeys: Record<string, number>;
  /** Absent in versions written before the sample existed: the estimate samples the records table. */
  sample?: SampleFacts;
  /** The rollups built into this version (rollup-tables). */
  rollups?: BuiltRollup[];
}

/** The attachable sibling of a Parquet snapshot (`indexes/x/<id>.parquet` → `indexes/x/<id>.duckdb`). */
export function attachableFile(parquetFile: string): string {
  return parquetFile.replace(/\.parquet$/, '.duckdb');
}

/** The SELECT giving a snapshot's records as every reader sees them: record order, then words columns. */
export function recordsSelect(parquetFile: string, fields: ReadonlyArray<{ name: string; type: string }>): string {
  // Each text field gets its words column (see wordsColumn); the file's own row numbers are the record order.
  const words = fields
    .filter((f) => f.type === 'string')
    .map((f) => `, ${wordsExpr(ident(f.name))} AS ${wordsColumn(f.name)}`);
  return `SELECT file_row_number AS __rowid, * EXCLUDE (file_row_number)${words.join('')} FROM read_parquet(${literal(parquetFile)}, file_row_number = true)`;
}

export function factsFromJson(text: string): {
  singleWord: SingleWordFields;
  distinctKeys: Map<string, number>;
  sample: SampleFacts | undefined;
  rollups: BuiltRollup[];
} {
  const facts = JSON.parse(text) as SnapshotFacts;
  const singleWord = new Map<string, SingleWordField>(
    facts.singleWord.map(([name, f]) => [name, f.values ? { values: new Map(f.values) } : {}]),
  );
  return {
    singleWord,
    distinctKeys: new Map(Object.entries(facts.distinctKeys)),
    sample: facts.sample,
    rollups: facts.rollups ?? [],
  };
}

/** `hash(__rowid) < bound` keeps about `fraction` of the records (DuckDB's hash is a UBIGINT). */
function hashBelow(fraction: number): string {
  if (fraction >= 1) return 'true';
  // 2^64 · fraction, exact in integers: 53 bits of the fraction, shifted.
  const bound = BigInt(Math.floor(fraction * 2 ** 53)) << 11n;
  return `hash(__rowid) < ${bound}::UBIGINT`;
}

/** Writes the sample table (SampleFacts) of `recordCount` records; returns what it holds. */
async function writeSample(
  run: (sql: string) => Promise<void>,
  all: (sql: string) => Promise<Array<Record<string, unknown>>>,
  recordCount: number,
): Promise<SampleFacts> {
  const n = Math.max(recordCount, 1);
  const inSample = hashBelow(sampleRecords(n) / n);
  const inFirst = hashBelow(SAMPLE_FIRST_RECORDS / n);
  // One filtered scan, sorted by level then record number (the records table is not stored in record
  // order; the sample keeps it, which compresses as the source did). Level 0 fills the first row
  // group(s), so `level = 0` reads only those through the zone maps.
  await run(
    `CREATE TABLE ${SAMPLE_TABLE} AS SELECT (NOT (${inFirst}))::UTINYINT AS ${SAMPLE_LEVEL}, * FROM ${RECORDS_TABLE} WHERE ${inSample} ORDER BY 1, __rowid`,
  );
  const [row] = await all(
    `SELECT count(*) AS records, count(*) FILTER (WHERE ${SAMPLE_LEVEL} = 0) AS first FROM ${SAMPLE_TABLE}`,
  );
  return { records: Number(row.records), first: Number(row.first) };
}

/** Builds each rollup's table from the records table; a rollup that fails fails the whole write. */
async function writeRollups(
  c: { run(sql: string): Promise<unknown> },
  all: (sql: string) => Promise<Array<Record<string, unknown>>>,
  fields: ReadonlyArray<{ name: string; type: string; grain?: string }>,
  rollups: readonly RollupDef[],
): Promise<BuiltRollup[]> {
  if (rollups.length === 0) return [];
  const described = await all(`DESCRIBE ${RECORDS_TABLE}`);
  const types = new Map(described.map((r) => [String(r.column_name), String(r.column_type)]));
  const built: BuiltRollup[] = [];
  for (const [i, def] of rollups.entries()) {
    const table = rollupTableName(i);
    const { sql, grains } = rollupTableSql(def, table, RECORDS_TABLE, fields, types);
    let rows: number;
    try {
      await c.run(sql);
      await narrowRollupSums((s) => c.run(s), all, table);
      const [counted] = await all(`SELECT count(*) AS n FROM ${ident(table)}`);
      rows = Number(counted.n);
    } catch (err) {
      throw new Error(`rollup "${def.name}": ${err instanceof Error ? err.message : String(err)}`, { cause: err });
    }
    built.push({ def, table, grains, rows });
  }
  return built;
}

/**
 * Writes the attachable form of a Parquet snapshot to `out` (a temporary name the caller publishes):
 * the records table compressed and checkpointed, and the facts a reader would otherwise compute on
 * opening (single-word fields, distinct keys per field), and the sample of records the cell-limit
 * estimate reads (SampleFacts). Spills to `spill` past 512 MB.
 */
export async function writeAttachable(
  parquetFile: string,
  out: string,
  fields: ReadonlyArray<{ name: string; type: string; grain?: string }>,
  spill: string,
  rollups: readonly RollupDef[] = [],
): Promise<void> {
  fs.rmSync(out, { force: true });
  fs.rmSync(`${out}.wal`, { force: true });
  const instance = await DuckDBInstance.create(out, {
    // Every reader orders by __rowid (the record order is a column), so the rows need not be stored in
    // it: writing them in whatever order DuckDB's threads finish skips the ordered merge, the larger
    // part of the write, and the row groups stay runs of consecutive records (tight zone maps).
    preserve_insertion_order: 'false',
    memory_limit: '512MB',
    temp_directory: spill,
  });
  const c = await instance.connect();
  try {
    await c.run(`CREATE TABLE ${RECORDS_TABLE} AS ${recordsSelect(parquetFile, fields)}`);
    const all = async (sql: string) => (await c.runAndReadAll(sql)).getRowObjectsJS() as Array<Record<string, unknown>>;
    const [{ n }] = await all(`SELECT count(*) AS n FROM ${RECORDS_TABLE}`);
    const sample = await writeSample((sql) => c.run(sql).then(() => undefined), all, Number(n));
    const singleWord = await learnSingleWordFields(all, RECORDS_TABLE, fields);
    const keyed = fields;
    const distinctKeys: Record<string, number> = {};
    if (keyed.length > 0) {
      const counts = keyed.map((f, i) => {
        const col = ident(f.name);
        const blank = f.type === 'string' ? `${col} IS NULL OR ${col} = ''` : `${col} IS NULL`;
        // A date's key is what the crosstab groups it by without a dateGroup: its day, or its grain.
        const grain = f.grain ?? 'day';
        const date = grain === 'day' ? `CAST(${col} AS DATE)` : `date_trunc(${literal(grain)}, ${col})`;
        const value = f.type === 'string' ? `nullif(${col}, '')` : f.type === 'date' ? date : col;
        return `count(DISTINCT ${value}) + (count(*) FILTER (WHERE ${blank}) > 0)::INT AS k${i}`;
      });
      const [row] = await all(`SELECT ${counts.join(', ')} FROM ${RECORDS_TABLE}`);
      keyed.forEach((f, i) => (distinctKeys[f.name] = Number(row[`k${i}`])));
    }
    const built = await writeRollups(c, all, fields, rollups);
    const facts: SnapshotFacts = {
      singleWord: [...singleWord].map(([name, f]) => [
        name,
        f.values ? { values: [...f.values].map(([k, v]) => [k, [...v]]) } : {},
      ]),
      distinctKeys,
      sample,
      ...(built.length ? { rollups: built } : {}),
    };
    await c.run(`CREATE TABLE ${FACTS_TABLE} AS SELECT ${literal(JSON.stringify(facts))} AS facts`);
    await c.run('CHECKPOINT');
  } finally {
    c.closeSync();
    instance.closeSync();
  }
}

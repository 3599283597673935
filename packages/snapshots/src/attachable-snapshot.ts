import fs from 'node:fs';
import { DuckDBInstance } from '@duckdb/node-api';
import type { RollupDef } from '@quarry/metadata-store';
import { countKeysWithRollups } from './key-counts';
import { learnRollupHints, narrowRollupSums, rollupTableName, rollupTableSql, type BuiltRollup } from './rollup-tables';
import {
  learnSingleWordFields,
  singleWordExpr,
  type SingleWordField,
  type SingleWordFields,
} from './single-word-fields';
import { ident, literal, wordsColumn, wordsExpr } from './sql';
import { TERMS_TABLE, termsSql, TEXT_STATS_TABLE, textStatsSql } from './text-terms';

/**
 * From this many records a published version is also written in DuckDB's own format, which every
 * process serving it attaches read-only instead of reading the Parquet file into memory: attaching is
 * near instant and costs little memory where reading a big version in takes seconds and gigabytes;
 * Parquet queried in place opens as fast but matches words far slower (no words column); the figures
 * are in docs/scaling.md. Below it the read-in is quick and the in-memory table is what answers (a
 * little faster once warm), so small loads stay a file copy.
 */
export const ATTACH_MIN_RECORDS = 500_000;

/**
 * The records of an attachable snapshot as every reader names them, its facts table and its sample of
 * records. In versions written before single-word fields' words columns were computed on reading, the
 * records and the sample are tables; since, views over RECORDS_DATA and SAMPLE_DATA (recordsView).
 */
export const RECORDS_TABLE = 'records';
export const FACTS_TABLE = 'quarry_facts';
export const SAMPLE_TABLE = 'quarry_sample';
export const RECORDS_DATA = 'quarry_records';
export const SAMPLE_DATA = 'quarry_sample_records';

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
  /** The version stores its term counts (text-terms); absent in versions written before ranking. */
  terms?: boolean;
}

/** The attachable sibling of a Parquet snapshot (`indexes/x/<id>.parquet` → `indexes/x/<id>.duckdb`). */
export function attachableFile(parquetFile: string): string {
  return parquetFile.replace(/\.parquet$/, '.duckdb');
}

/**
 * The SELECT giving a snapshot's records as every reader sees them: record order, then words columns;
 * with `computed`, the words columns of those fields are left out (recordsView computes them).
 */
export function recordsSelect(
  parquetFile: string,
  fields: ReadonlyArray<{ name: string; type: string }>,
  computed: ReadonlySet<string> = new Set(),
): string {
  // Each text field gets its words column (see wordsColumn); the file's own row numbers are the record order.
  const words = fields
    .filter((f) => f.type === 'string' && !computed.has(f.name))
    .map((f) => `, ${wordsExpr(ident(f.name))} AS ${wordsColumn(f.name)}`);
  return `SELECT file_row_number AS __rowid, * EXCLUDE (file_row_number)${words.join('')} FROM read_parquet(${literal(parquetFile)}, file_row_number = true)`;
}

/**
 * The records (or the sample) as readers see them, over the table written without the words columns
 * of `computed` (single-word fields): those are computed when read, `' ' || lower(value) || ' '`, the
 * very text wordsExpr gives such a value. Writing them was most of a load's time beyond DuckDB's own
 * CREATE TABLE (strings DuckDB compresses as it writes); a VIRTUAL generated column would do the same,
 * but an INSERT into a table that has one computes it for every record. Columns keep the order
 * recordsSelect gives them.
 */
function recordsView(
  view: string,
  data: string,
  fields: ReadonlyArray<{ name: string; type: string }>,
  computed: ReadonlySet<string>,
): string {
  const text = fields.filter((f) => f.type === 'string');
  const stored = text.filter((f) => !computed.has(f.name)).map((f) => wordsColumn(f.name));
  const words = text.map((f) =>
    computed.has(f.name) ? `${singleWordExpr(ident(f.name))} AS ${wordsColumn(f.name)}` : wordsColumn(f.name),
  );
  const rest = stored.length ? `* EXCLUDE (${stored.join(', ')})` : '*';
  return `CREATE VIEW ${view} AS SELECT ${[rest, ...words].join(', ')} FROM ${data}`;
}

export function factsFromJson(text: string): {
  singleWord: SingleWordFields;
  distinctKeys: Map<string, number>;
  sample: SampleFacts | undefined;
  rollups: BuiltRollup[];
  terms: boolean;
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
    terms: facts.terms === true,
  };
}

/** `hash(__rowid) < bound` keeps about `fraction` of the records (DuckDB's hash is a UBIGINT). */
function hashBelow(fraction: number): string {
  if (fraction >= 1) return 'true';
  // 2^64 · fraction, exact in integers: 53 bits of the fraction, shifted.
  const bound = BigInt(Math.floor(fraction * 2 ** 53)) << 11n;
  return `hash(__rowid) < ${bound}::UBIGINT`;
}

/** Writes the sample (SampleFacts) of `recordCount` records to SAMPLE_DATA; returns what it holds. */
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
    `CREATE TABLE ${SAMPLE_DATA} AS SELECT (NOT (${inFirst}))::UTINYINT AS ${SAMPLE_LEVEL}, * FROM ${RECORDS_DATA} WHERE ${inSample} ORDER BY 1, __rowid`,
  );
  const [row] = await all(
    `SELECT count(*) AS records, count(*) FILTER (WHERE ${SAMPLE_LEVEL} = 0) AS first FROM ${SAMPLE_DATA}`,
  );
  return { records: Number(row.records), first: Number(row.first) };
}

/** Builds each rollup's table from the records table; a rollup that fails fails the whole write. */
async function writeRollups(
  c: { run(sql: string): Promise<unknown> },
  all: (sql: string) => Promise<Array<Record<string, unknown>>>,
  fields: ReadonlyArray<{ name: string; type: string; grain?: string }>,
  rollups: readonly RollupDef[],
  singleWord: ReadonlySet<string>,
): Promise<BuiltRollup[]> {
  if (rollups.length === 0) return [];
  const described = await all(`DESCRIBE ${RECORDS_TABLE}`);
  const types = new Map(described.map((r) => [String(r.column_name), String(r.column_type)]));
  const hints = await learnRollupHints(all, RECORDS_TABLE, fields, types, rollups, singleWord);
  const built: BuiltRollup[] = [];
  for (const [i, def] of rollups.entries()) {
    const table = rollupTableName(i);
    const { sql, grains } = rollupTableSql(def, table, RECORDS_TABLE, fields, types, hints);
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
    const all = async (sql: string) => (await c.runAndReadAll(sql)).getRowObjectsJS() as Array<Record<string, unknown>>;
    const run = (sql: string) => c.run(sql).then(() => undefined);
    const source = `read_parquet(${literal(parquetFile)})`;
    // Learnt from the source's distinct values before the table is written: the single-word fields
    // get no stored words column (recordsView).
    const singleWord = await learnSingleWordFields(all, source, fields);
    const computed = new Set(singleWord.keys());
    await run(`CREATE TABLE ${RECORDS_DATA} AS ${recordsSelect(parquetFile, fields, computed)}`);
    await run(recordsView(RECORDS_TABLE, RECORDS_DATA, fields, computed));
    const [{ n }] = await all(`SELECT count(*) AS n FROM ${RECORDS_DATA}`);
    const sample = await writeSample(run, all, Number(n));
    await run(recordsView(SAMPLE_TABLE, SAMPLE_DATA, fields, computed));
    // The rollups first: the key counts of the fields they group by are read from them.
    const built = await writeRollups(c, all, fields, rollups, computed);
    const distinctKeys = await countKeysWithRollups(all, RECORDS_TABLE, fields, built);
    // Sorted by field and word: a lookup of a few words reads only the row groups holding them.
    await run(`CREATE TABLE ${TERMS_TABLE} AS SELECT * FROM (${termsSql(RECORDS_TABLE, fields)}) ORDER BY field, word`);
    await run(`CREATE TABLE ${TEXT_STATS_TABLE} AS ${textStatsSql(RECORDS_TABLE, fields)}`);
    const facts: SnapshotFacts = {
      singleWord: [...singleWord].map(([name, f]) => [
        name,
        f.values ? { values: [...f.values].map(([k, v]) => [k, [...v]]) } : {},
      ]),
      distinctKeys,
      sample,
      ...(built.length ? { rollups: built } : {}),
      terms: true,
    };
    await c.run(`CREATE TABLE ${FACTS_TABLE} AS SELECT ${literal(JSON.stringify(facts))} AS facts`);
    await c.run('CHECKPOINT');
  } finally {
    c.closeSync();
    instance.closeSync();
  }
}

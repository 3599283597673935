import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { DuckDBInstance, type DuckDBConnection } from '@duckdb/node-api';
import { AppError } from '@quarry/errors';
import { type DateGrain, type FieldDef, type FieldType } from '@quarry/query-language';
import { ident, literal } from './sql';

export { INDEX_NAME } from '@quarry/contract';
import { INDEX_NAME } from '@quarry/contract';

export interface BuildRequest {
  name: string;
  file: string;
  dataDir: string;
  /** Declared types that win over inference. */
  types: Record<string, FieldType>;
  /** Declared crosstab grouping of date fields (day when not declared). */
  grains?: Record<string, DateGrain>;
  views: Array<{ name: string; field: string }>;
  /** Called now and then with the fraction done (0..1), when DuckDB can tell. */
  onProgress?: (fraction: number) => void;
}

export interface BuiltSnapshot {
  fields: FieldDef[];
  recordCount: number;
  /** Relative to the data directory. */
  snapshot: string;
}

type Format = 'csv' | 'json' | 'parquet';

function formatOf(file: string): Format {
  const ext = path.extname(file).toLowerCase();
  if (['.csv', '.tsv', '.txt'].includes(ext)) return 'csv';
  if (['.json', '.jsonl', '.ndjson'].includes(ext)) return 'json';
  if (ext === '.parquet') return 'parquet';
  throw AppError.invalid(
    `Cannot tell the format of "${path.basename(file)}": use .csv, .tsv, .json, .jsonl, .ndjson or .parquet`,
  );
}

function sourceSql(file: string, format: Format): string {
  const f = literal(file);
  switch (format) {
    case 'csv':
      // DuckDB's sniffer detects the delimiter, quoting and a UTF-8 BOM, and streams the file.
      return `read_csv(${f}, header = true, auto_detect = true, sample_size = 20480)`;
    case 'json':
      return `read_json_auto(${f}, format = 'auto', sample_size = 20480, maximum_object_size = 67108864)`;
    case 'parquet':
      // The file's own row numbers give the source order without a window over all rows.
      return `read_parquet(${f}, file_row_number = true)`;
  }
}

// Date layouts tried on text columns, most specific first (strptime syntax).
const DATE_FORMATS: Array<{ format: string; hasTime: boolean }> = [
  { format: '%Y-%m-%dT%H:%M:%S', hasTime: true },
  { format: '%Y-%m-%d %H:%M:%S', hasTime: true },
  { format: '%Y-%m-%dT%H:%M', hasTime: true },
  { format: '%Y-%m-%d %H:%M', hasTime: true },
  { format: '%Y/%m/%d %H:%M:%S', hasTime: true },
  { format: '%Y/%m/%d %H:%M', hasTime: true },
  { format: '%Y-%m-%d', hasTime: false },
  { format: '%Y/%m/%d', hasTime: false },
  { format: '%b %d %Y', hasTime: false },
  { format: '%d-%b-%y', hasTime: false },
  { format: '%m/%d/%Y', hasTime: false },
];

function inferType(duckType: string): FieldType | 'text' {
  const t = duckType.toUpperCase();
  if (t === 'BOOLEAN') return 'boolean';
  if (/^(TINYINT|SMALLINT|INTEGER|BIGINT|HUGEINT|UTINYINT|USMALLINT|UINTEGER|UBIGINT|UHUGEINT)$/.test(t))
    return 'integer';
  if (/^(FLOAT|DOUBLE|REAL)$/.test(t) || t.startsWith('DECIMAL')) return 'number';
  if (t === 'DATE' || t.startsWith('TIMESTAMP')) return 'date';
  return 'text';
}

interface ColumnPlan {
  name: string;
  type: FieldType;
  /** SQL turning the source column into the stored value. */
  expr: string;
  /** The same conversion that yields NULL instead of failing, for locating a bad value. */
  tryExpr: string;
}

async function rows(c: DuckDBConnection, sql: string): Promise<Array<Record<string, unknown>>> {
  return (await c.runAndReadAll(sql)).getRowObjectsJS() as Array<Record<string, unknown>>;
}

/** The first date layout that reads every sampled value of a text column, tried in one pass. */
async function detectDateFormat(
  c: DuckDBConnection,
  col: string,
): Promise<{ format: string; hasTime: boolean } | null> {
  const sample = `(SELECT ${ident(col)} AS v FROM src WHERE ${ident(col)} IS NOT NULL AND trim(${ident(col)}) <> '' LIMIT 2000)`;
  const counts = DATE_FORMATS.map((f, i) => `count(try_strptime(v, ${literal(f.format)})) AS f${i}`).join(', ');
  const [r] = await rows(c, `SELECT count(*) AS n, ${counts} FROM ${sample}`);
  const n = Number(r.n);
  if (n === 0) return null;
  const hit = DATE_FORMATS.findIndex((_, i) => Number(r[`f${i}`]) === n);
  return hit >= 0 ? DATE_FORMATS[hit] : null;
}

async function planColumn(
  c: DuckDBConnection,
  name: string,
  duckType: string,
  declared: FieldType | undefined,
): Promise<ColumnPlan> {
  const col = ident(name);
  const inferred = inferType(duckType);
  const upper = duckType.toUpperCase();
  const isJson = upper === 'JSON';
  // A column already of the stored type is taken as it is (this keeps a ready Parquet file loadable by copy).
  const asText = isJson ? `json_extract_string(${col}, '$')` : upper === 'VARCHAR' ? col : `CAST(${col} AS VARCHAR)`;
  const blankToNull = (e: string) => `nullif(trim(${e}), '')`;
  const wanted: FieldType | 'text' = declared ?? inferred;
  const plan = (type: FieldType, expr: string, tryExpr: string): ColumnPlan => ({ name, type, expr, tryExpr });

  switch (wanted) {
    case 'boolean':
      if (inferred === 'boolean') return plan('boolean', col, col);
      return plan('boolean', `CAST(${blankToNull(asText)} AS BOOLEAN)`, `TRY_CAST(${blankToNull(asText)} AS BOOLEAN)`);
    case 'integer':
      if (upper === 'BIGINT') return plan('integer', col, col);
      if (inferred === 'integer') return plan('integer', `CAST(${col} AS BIGINT)`, `TRY_CAST(${col} AS BIGINT)`);
      return plan('integer', `CAST(${blankToNull(asText)} AS BIGINT)`, `TRY_CAST(${blankToNull(asText)} AS BIGINT)`);
    case 'number': {
      const src = inferred === 'integer' || inferred === 'number' ? col : blankToNull(asText);
      // NaN and infinities have no JSON form: store them as missing.
      const clean = (e: string) => `CASE WHEN isfinite(${e}) THEN ${e} END`;
      return plan('number', clean(`CAST(${src} AS DOUBLE)`), clean(`TRY_CAST(${src} AS DOUBLE)`));
    }
    case 'date': {
      if (duckType.toUpperCase() === 'DATE') return plan('date', col, col);
      if (upper === 'TIMESTAMP') return plan('date', col, col);
      if (inferred === 'date') return plan('date', `CAST(${col} AS TIMESTAMP)`, `TRY_CAST(${col} AS TIMESTAMP)`);
      const fmt = await detectDateFormat(c, name);
      if (fmt) {
        const e = `strptime(${blankToNull(asText)}, ${literal(fmt.format)})`;
        const t = `try_strptime(${blankToNull(asText)}, ${literal(fmt.format)})`;
        return fmt.hasTime ? plan('date', e, t) : plan('date', `CAST(${e} AS DATE)`, `CAST(${t} AS DATE)`);
      }
      if (declared)
        return plan(
          'date',
          `CAST(${blankToNull(asText)} AS TIMESTAMP)`,
          `TRY_CAST(${blankToNull(asText)} AS TIMESTAMP)`,
        );
      return plan('string', asText, asText);
    }
    case 'string':
      return plan('string', asText, asText);
    case 'text': {
      const fmt = await detectDateFormat(c, name);
      if (fmt) {
        const e = `strptime(${blankToNull(asText)}, ${literal(fmt.format)})`;
        const t = `try_strptime(${blankToNull(asText)}, ${literal(fmt.format)})`;
        return fmt.hasTime ? plan('date', e, t) : plan('date', `CAST(${e} AS DATE)`, `CAST(${t} AS DATE)`);
      }
      return plan('string', asText, asText);
    }
  }
}

function fieldsOf(plans: ColumnPlan[], grains: BuildRequest['grains']): FieldDef[] {
  return plans.map((p) => {
    const grain = p.type === 'date' ? grains?.[p.name] : undefined;
    return grain && grain !== 'day' ? { name: p.name, type: p.type, grain } : { name: p.name, type: p.type };
  });
}

/** Finds the first record whose value a conversion cannot read, to name its row and column. */
async function locateBadValue(c: DuckDBConnection, plans: ColumnPlan[]): Promise<string | null> {
  for (const p of plans) {
    if (p.expr === p.tryExpr) continue;
    const col = ident(p.name);
    const [bad] = await rows(
      c,
      `SELECT n, v FROM (SELECT row_number() OVER () AS n, CAST(${col} AS VARCHAR) AS v, ${p.tryExpr} AS t FROM src)
       WHERE v IS NOT NULL AND trim(v) <> '' AND t IS NULL ORDER BY n LIMIT 1`,
    );
    if (bad)
      return `record ${String(bad.n)}, column "${p.name}": cannot read "${String(bad.v).slice(0, 80)}" as ${p.type}`;
  }
  return null;
}

/**
 * Moves a finished file into place so that it survives a power cut once the catalog names it: the
 * data is flushed before the rename, and the folder (which records the new name) after it.
 */
function publishFile(tmp: string, final: string): void {
  const fd = fs.openSync(tmp, 'r+');
  try {
    fs.fsyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
  fs.renameSync(tmp, final);
  const dir = fs.openSync(path.dirname(final), 'r');
  try {
    fs.fsyncSync(dir);
  } finally {
    fs.closeSync(dir);
  }
}

function duckMessage(err: unknown): string {
  return (err instanceof Error ? err.message : String(err)).split('\n')[0].slice(0, 300);
}

/** Runs a COPY in small tasks, reporting progress between them; resolves with the rows written. */
async function runWithProgress(c: DuckDBConnection, sql: string, onProgress?: (f: number) => void): Promise<number> {
  const pending = await c.start(sql);
  // State 0 is RESULT_READY; everything else means "call runTask again".
  while (pending.runTask() !== 0) {
    const p = c.progress.percentage;
    if (onProgress && p >= 0) onProgress(Math.min(p / 100, 1));
    await new Promise((r) => setImmediate(r));
  }
  const result = await pending.getResult();
  const written = (await result.getRowObjectsJS())[0];
  onProgress?.(1);
  return Number(written ? Object.values(written)[0] : 0);
}

/**
 * Reads a CSV, JSON array, JSON Lines or Parquet file with DuckDB (streamed: the data never passes
 * through JS) into a new immutable Parquet snapshot whose row order is the source's (readers number
 * the rows with the file's own row numbers). A Parquet source whose columns need no conversion is
 * copied as it is.
 * Nothing is published here: the caller publishes the returned snapshot in the catalog.
 */
export async function buildSnapshot(req: BuildRequest): Promise<BuiltSnapshot> {
  if (!INDEX_NAME.test(req.name))
    throw AppError.invalid('Index names are 1-64 letters, digits, ".", "_" or "-", starting with a letter or digit');
  if (!fs.existsSync(req.file) || !fs.statSync(req.file).isFile()) throw AppError.invalid(`No such file: ${req.file}`);
  const format = formatOf(req.file);
  const dir = path.join(req.dataDir, 'indexes', req.name);
  fs.mkdirSync(dir, { recursive: true });
  const id = `${Date.now().toString(36)}-${randomBytes(4).toString('hex')}`;
  const tmp = path.join(dir, `${id}.parquet.tmp`);
  const final = path.join(dir, `${id}.parquet`);

  const instance = await DuckDBInstance.create(':memory:', { preserve_insertion_order: 'true' });
  const c = await instance.connect();
  try {
    try {
      await c.run(`CREATE VIEW src AS SELECT * FROM ${sourceSql(path.resolve(req.file), format)}`);
    } catch (err) {
      throw AppError.invalid(`Cannot read ${path.basename(req.file)} as ${format}: ${duckMessage(err)}`);
    }
    const described = (await rows(c, 'DESCRIBE src')).map((r) => ({
      name: String(r.column_name),
      type: String(r.column_type),
    }));
    const columns = described.filter((col) => !(format === 'parquet' && col.name === 'file_row_number'));
    if (columns.length === 0) throw AppError.invalid(`${path.basename(req.file)} has no columns`);
    for (const name of Object.keys(req.types)) {
      if (!columns.some((col) => col.name === name)) throw AppError.invalid(`--type names the unknown field "${name}"`);
    }
    if (columns.some((col) => col.name.startsWith('__')))
      throw AppError.invalid('Field names starting with "__" are reserved');
    const seenViews = new Set<string>(['records']);
    for (const v of req.views) {
      if (!columns.some((col) => col.name === v.field))
        throw AppError.invalid(`View "${v.name}" names the unknown field "${v.field}"`);
      if (seenViews.has(v.name.toLowerCase()))
        throw AppError.invalid(`View name "${v.name}" is used twice (or is the built-in Records)`);
      seenViews.add(v.name.toLowerCase());
    }

    const plans: ColumnPlan[] = [];
    for (const col of columns) plans.push(await planColumn(c, col.name, col.type, req.types[col.name]));

    const select = plans.map((p) => `${p.expr} AS ${ident(p.name)}`).join(', ');
    if (format === 'parquet' && plans.every((p) => p.expr === ident(p.name))) {
      // Nothing to convert: the source file is the snapshot, copied so the version stays immutable.
      req.onProgress?.(0);
      fs.copyFileSync(req.file, tmp);
      const [n] = await rows(c, `SELECT count(*) AS n FROM read_parquet(${literal(tmp)})`);
      publishFile(tmp, final);
      req.onProgress?.(1);
      return {
        fields: fieldsOf(plans, req.grains),
        recordCount: Number(n.n),
        snapshot: path.relative(req.dataDir, final),
      };
    }
    let recordCount: number;
    try {
      recordCount = await runWithProgress(
        c,
        // preserve_insertion_order (set on the instance) keeps the source order in the file.
        `COPY (SELECT ${select} FROM src) TO ${literal(tmp)} (FORMAT parquet, COMPRESSION snappy, ROW_GROUP_SIZE 122880)`,
        req.onProgress,
      );
    } catch (err) {
      const where = await locateBadValue(c, plans).catch(() => null);
      throw AppError.invalid(
        `Loading ${path.basename(req.file)} failed${where ? ` at ${where}` : ''}: ${duckMessage(err)}`,
      );
    }
    publishFile(tmp, final);
    return {
      fields: fieldsOf(plans, req.grains),
      recordCount,
      snapshot: path.relative(req.dataDir, final),
    };
  } finally {
    c.closeSync();
    instance.closeSync();
    fs.rmSync(tmp, { force: true });
  }
}

/** Removes snapshot files of an index other than the ones named (the current and previous versions). */
export function pruneSnapshots(dataDir: string, name: string, keep: string[]): void {
  const dir = path.join(dataDir, 'indexes', name);
  if (!fs.existsSync(dir)) return;
  const keepAbs = new Set(keep.map((k) => path.resolve(dataDir, k)));
  for (const f of fs.readdirSync(dir)) {
    const abs = path.join(dir, f);
    if (!keepAbs.has(abs)) fs.rmSync(abs, { force: true });
  }
}

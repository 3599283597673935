import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { DuckDBInstance, type DuckDBConnection } from '@duckdb/node-api';
import { AppError } from '@quarry/errors';
import { type DateGrain, type FieldDef, type FieldType } from '@quarry/query-language';
import { readCsvHeader, type SourceEncoding } from './load/csv-header';
import { planColumns, type ColumnPlan, type TypeNote } from './load/infer-columns';
import { checkJsonArray, checkJsonLines } from './load/json-check';
import { RejectLog, type OnError } from './load/load-problems';
import { findLines } from './load/record-lines';
import { ident, literal } from './sql';
import { ATTACH_MIN_RECORDS, attachableFile, writeAttachable } from './attachable-snapshot';

export { INDEX_NAME } from '@quarry/contract';
import { INDEX_NAME } from '@quarry/contract';
export type { OnError } from './load/load-problems';
export type { SourceEncoding } from './load/csv-header';

export interface BuildRequest {
  name: string;
  file: string;
  dataDir: string;
  /** Declared types that win over inference. */
  types: Record<string, FieldType>;
  /** Declared crosstab grouping of date fields (day when not declared). */
  grains?: Record<string, DateGrain>;
  views: Array<{ name: string; field: string }>;
  /** The source's format when its name does not tell (standard input). */
  format?: SourceFormat;
  /** The file's name in messages (`-` is shown as "standard input"). */
  label?: string;
  /** `fail` (default): a malformed row fails the load; `skip`: it goes to `rejectsFile`. */
  onError?: OnError;
  /** With `skip`: more rejected rows than this fail the load (default: no limit). */
  maxErrors?: number;
  /** Where rejected rows are written with `skip` (`rejects/<index>-v<N>.jsonl`). */
  rejectsFile?: string;
  encoding?: SourceEncoding;
  /** A strptime layout tried first on text columns and declared dates. */
  dateFormat?: string;
  /** Append to this published version: same fields, its rows first. */
  append?: { snapshot: string; fields: FieldDef[] };
  /** Called now and then with the fraction done (0..1). */
  onProgress?: (fraction: number) => void;
  /**
   * From this many records the version is also written in DuckDB's format for processes to attach
   * (ATTACH_MIN_RECORDS unless set; 0 always, Infinity never: the tests run both paths).
   */
  attachMinRecords?: number;
}

export interface BuiltSnapshot {
  fields: FieldDef[];
  recordCount: number;
  /** Relative to the data directory. */
  snapshot: string;
  /** Rows read from the source: recordCount (less any appended-to rows) plus rowsRejected. */
  rowsRead: number;
  rowsRejected: number;
  /** The rejects file, when rows were skipped. */
  rejectsFile?: string;
  /** Lines of a CSV inside an unterminated quote: neither read as rows nor checked. */
  unreadLines?: number;
  /**
   * Columns loaded as text although most values read as another type, each with the first value that
   * did not: at its `line` in a CSV or JSON Lines file, else by its `record`.
   */
  typeNotes?: Array<Omit<TypeNote, 'record'> & { line?: number; record?: number }>;
}

export type SourceFormat = 'csv' | 'json' | 'jsonl' | 'parquet';

export function formatOf(file: string): SourceFormat {
  const ext = path.extname(file).toLowerCase();
  if (['.csv', '.tsv', '.txt'].includes(ext)) return 'csv';
  if (ext === '.json') return 'json';
  if (['.jsonl', '.ndjson'].includes(ext)) return 'jsonl';
  if (ext === '.parquet') return 'parquet';
  throw AppError.invalid(
    `Cannot tell the format of "${path.basename(file)}": use .csv, .tsv, .json, .jsonl, .ndjson or .parquet, or name it with --format`,
  );
}

async function rows(c: DuckDBConnection, sql: string): Promise<Array<Record<string, unknown>>> {
  return (await c.runAndReadAll(sql)).getRowObjectsJS() as Array<Record<string, unknown>>;
}

function fieldsOf(plans: ColumnPlan[], grains: BuildRequest['grains']): FieldDef[] {
  return plans.map((p) => {
    const grain = p.type === 'date' ? grains?.[p.name] : undefined;
    return grain && grain !== 'day' ? { name: p.name, type: p.type, grain } : { name: p.name, type: p.type };
  });
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
  fs.chmodSync(tmp, 0o600);
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

/**
 * Runs one statement on DuckDB's own threads (driving it task by task from JS would run it on one),
 * reading its progress (for a file scan, the share of its bytes read) a few times a second.
 */
async function runWithProgress(
  c: DuckDBConnection,
  sql: string,
  onProgress?: (f: number) => void,
): Promise<Array<Record<string, unknown>>> {
  const timer = onProgress
    ? setInterval(() => {
        const p = c.progress.percentage;
        if (p >= 0) onProgress(Math.min(p / 100, 1));
      }, 100)
    : undefined;
  try {
    const result = (await c.runAndReadAll(sql)).getRowObjectsJS() as Array<Record<string, unknown>>;
    onProgress?.(1);
    return result;
  } finally {
    if (timer) clearInterval(timer);
  }
}

/** Progress over several passes, each a share of the whole. */
function phases(onProgress: ((f: number) => void) | undefined, weights: Record<string, number>) {
  const total = Object.values(weights).reduce((a, b) => a + b, 0);
  const done = new Map<string, number>();
  let last = 0;
  return (phase: string) => (f: number) => {
    done.set(phase, f * (weights[phase] ?? 0));
    const now = [...done.values()].reduce((a, b) => a + b, 0) / total;
    if (now >= last) {
      last = now;
      onProgress?.(Math.min(now, 1));
    }
  };
}

/** DuckDB's reject reasons in Quarry's words. */
function rejectReason(type: string, message: string, columns: number): string {
  const found = /Found: (\d+)/.exec(message)?.[1];
  switch (type) {
    case 'MISSING COLUMNS':
    case 'TOO MANY COLUMNS':
      return `the row has ${found === undefined ? (type === 'MISSING COLUMNS' ? 'fewer fields' : 'more fields') : found === '1' ? '1 field' : `${found} fields`} where the header has ${columns}`;
    case 'UNQUOTED VALUE':
      return /unterminated/i.test(message)
        ? 'a quoted value starts here and its closing quote never comes'
        : 'a quote inside an unquoted value (quote the value and double the quote: "")';
    case 'INVALID ENCODING':
    case 'INVALID UNICODE':
      return 'not valid UTF-8 (if the file is Latin-1, load it with --encoding latin1)';
    case 'LINE SIZE OVER MAXIMUM':
      return 'the line is longer than 8 MiB';
    default:
      return message.split('\n')[0].slice(0, 200);
  }
}

const CSV_MAX_LINE = 8 * 1024 * 1024;

/**
 * Reads a CSV, JSON array, JSON Lines or Parquet file into a new immutable Parquet snapshot, in the
 * source's row order, accounting for every row: rows read = rows loaded + rows rejected. A malformed
 * row fails the whole load unless `onError` is `skip`; types never change a value (see infer-columns).
 * DuckDB streams the data (it never passes through JS, but for the strict JSON check), spilling to a
 * temporary folder in the data directory. Nothing is published here: the caller publishes the result.
 */
export async function buildSnapshot(req: BuildRequest): Promise<BuiltSnapshot> {
  if (!INDEX_NAME.test(req.name))
    throw AppError.invalid('Index names are 1-64 letters, digits, ".", "_" or "-", starting with a letter or digit');
  if (!fs.existsSync(req.file) || !fs.statSync(req.file).isFile()) throw AppError.invalid(`No such file: ${req.file}`);
  const label = req.label ?? path.basename(req.file);
  const format = req.format ?? formatOf(req.file);
  const onError = req.onError ?? 'fail';
  const maxErrors = onError === 'skip' ? (req.maxErrors ?? Number.MAX_SAFE_INTEGER) : 0;
  const encoding = req.encoding ?? 'utf-8';
  if (encoding !== 'utf-8' && format !== 'csv')
    throw AppError.invalid(`--encoding applies to CSV files; JSON is always UTF-8`);
  const dir = path.join(req.dataDir, 'indexes', req.name);
  fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
  const id = `${Date.now().toString(36)}-${randomBytes(4).toString('hex')}`;
  const tmp = path.join(dir, `${id}.parquet.tmp`);
  const cleanTmp = path.join(dir, `${id}.clean.tmp`);
  const final = path.join(dir, `${id}.parquet`);
  const attachTmp = path.join(dir, `${id}.duckdb.tmp`);
  const spill = path.join(req.dataDir, 'tmp');
  fs.mkdirSync(spill, { recursive: true, mode: 0o700 });
  const rejects = new RejectLog(label, onError, maxErrors, onError === 'skip' ? req.rejectsFile : undefined);
  let unreadLines = 0;
  const weights: Record<string, number> =
    format === 'csv'
      ? { scan: 0.45, types: 0.05, write: 0.5 }
      : format === 'parquet'
        ? { read: 0.05, types: 0.15, write: 0.8 }
        : { read: 0.45, scan: 0.2, types: 0.05, write: 0.3 };
  const progress = phases(req.onProgress, weights);
  req.onProgress?.(0);
  /**
   * A large version's attachable form is written from the finished Parquet file and published before
   * it, so a catalog entry never names a Parquet file whose attachable form is half written.
   */
  const publishAttachable = async (parquet: string, records: number, fields: FieldDef[]) => {
    if (records < (req.attachMinRecords ?? ATTACH_MIN_RECORDS)) return;
    try {
      await writeAttachable(parquet, attachTmp, fields, spill);
    } catch (err) {
      throw AppError.invalid(`Loading ${label} failed writing its attachable snapshot: ${duckMessage(err)}`);
    }
    publishFile(attachTmp, attachableFile(final));
  };

  const instance = await DuckDBInstance.create(':memory:', {
    preserve_insertion_order: 'true',
    // A load streams: a file larger than memory spills here instead of growing the process.
    memory_limit: '512MB',
    temp_directory: spill,
  });
  const c = await instance.connect();
  // Progress is read between tasks (runWithProgress), never printed by DuckDB itself.
  await c.run('SET enable_progress_bar = true; SET enable_progress_bar_print = false; SET progress_bar_time = 0');
  let ok = false;
  try {
    const size = fs.statSync(req.file).size;
    let source: string;
    /** Rows the JSON check read (good or not); CSV and Parquet count theirs in the first scan. */
    let checkedRows: number | undefined;
    let csvColumns = 0;
    let jsonLayout: 'array' | 'lines' | undefined;
    /** CSV rows DuckDB rejected, by its line number, with the lines each took. */
    const csvRejected = new Map<number, number>();
    let columns: Array<{ name: string; type: string }>;
    if (format === 'csv') {
      if (size === 0) throw AppError.invalid(`${label} is empty: a CSV file needs a header line`);
      const header = readCsvHeader(req.file, label, path.extname(req.file).toLowerCase(), encoding);
      const columnTypes = `{${header.names.map((n) => `${literal(n)}: 'VARCHAR'`).join(', ')}}`;
      source = `read_csv(${literal(path.resolve(req.file))}, header = true, auto_detect = false, delim = ${literal(header.delimiter)}, quote = '"', escape = '"', columns = ${columnTypes}, strict_mode = true, ignore_errors = true, store_rejects = true, max_line_size = ${CSV_MAX_LINE}, encoding = ${literal(encoding === 'latin1' ? 'latin-1' : 'utf-8')})`;
      csvColumns = header.names.length;
      columns = header.names.map((name) => ({ name, type: 'VARCHAR' }));
    } else if (format === 'parquet') {
      source = `read_parquet(${literal(path.resolve(req.file))}, file_row_number = true)`;
      try {
        columns = (await rows(c, `DESCRIBE SELECT * FROM ${source}`))
          .map((r) => ({ name: String(r.column_name), type: String(r.column_type) }))
          .filter((col) => col.name !== 'file_row_number');
      } catch (err) {
        throw AppError.invalid(`Cannot read ${label} as Parquet: ${duckMessage(err)}`);
      }
    } else {
      let readBytes = 0;
      const onBytes = (n: number) => {
        readBytes += n;
        progress('read')(size > 0 ? readBytes / size : 1);
      };
      const firstChar = size > 0 ? readFirstNonBlank(req.file) : '';
      const check =
        format === 'json' && firstChar === '['
          ? checkJsonArray(req.file, label, rejects, cleanTmp, onBytes)
          : await checkJsonLines(req.file, label, rejects, cleanTmp, onBytes);
      checkedRows = check.rows;
      jsonLayout = format === 'json' && firstChar === '[' ? 'array' : 'lines';
      source = `read_json(${literal(path.resolve(check.clean))}, format = ${literal(check.layout)}, records = true, sample_size = -1, maximum_object_size = 67108864)`;
      try {
        columns = (await rows(c, `DESCRIBE SELECT * FROM ${source}`)).map((r) => ({
          name: String(r.column_name),
          type: String(r.column_type),
        }));
      } catch (err) {
        throw AppError.invalid(`Cannot read ${label} as JSON: ${duckMessage(err)}`);
      }
    }
    await c.run(`CREATE TEMP VIEW src AS SELECT * FROM ${source}`);

    if (columns.length === 0) throw AppError.invalid(`${label} has no columns`);
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

    let declared: Record<string, FieldType> = req.types;
    if (req.append) {
      const want = req.append.fields.map((f) => f.name);
      const have = columns.map((col) => col.name);
      const missing = want.filter((n) => !have.includes(n));
      const extra = have.filter((n) => !want.includes(n));
      if (missing.length > 0 || extra.length > 0) {
        throw AppError.invalid(
          `--append needs the fields of the published version; ${label} ${[
            missing.length > 0 ? `lacks ${missing.map((n) => `"${n}"`).join(', ')}` : '',
            extra.length > 0 ? `has ${extra.map((n) => `"${n}"`).join(', ')} it does not` : '',
          ]
            .filter(Boolean)
            .join(' and ')}`,
        );
      }
      // Appended rows take the published types: a value that does not fit is a malformed row.
      declared = Object.fromEntries(req.append.fields.map((f) => [f.name, f.type]));
      columns = want.map((n) => columns.find((col) => col.name === n) ?? { name: n, type: 'VARCHAR' });
    }

    // Proposals look at the first rows many times: read them once.
    await c.run(`CREATE TEMP TABLE sample AS SELECT * FROM src LIMIT 2048`);
    // One scan counts the rows, proposes nothing new, confirms every proposed type and (for CSV) lists
    // the malformed rows; a second is needed only when a column falls from integer to decimal.
    const planned = await planColumns(
      { c, sample: 'sample', numbersFromText: format === 'csv', dateFormat: req.dateFormat },
      'src',
      columns,
      declared,
      (sql) => runWithProgress(c, sql, progress('scan')),
    );
    const plans = planned.plans;
    progress('types')(1);
    if (format === 'csv') {
      const bad = await rows(
        c,
        `SELECT line, column_name, error_type, csv_line, error_message FROM reject_errors ORDER BY line, column_idx`,
      );
      // The sample's scan and the full one may both have met a row: one reject per line.
      const seen = new Set<number>();
      const found = bad
        .filter((r) => !seen.has(Number(r.line)) && seen.add(Number(r.line)))
        .map((r) => {
          const text = String(r.csv_line ?? '');
          const reason = rejectReason(String(r.error_type), String(r.error_message), csvColumns);
          // An unterminated quote takes every line after it as its value.
          const swallowed = /closing quote never comes/.test(reason)
            ? text.replace(/\r?\n$/, '').split(/\r?\n/).length - 1
            : 0;
          csvRejected.set(Number(r.line), swallowed + 1);
          return { unit: Number(r.line), column: r.column_name, reason, text, swallowed };
        });
      // DuckDB numbers a row by records and blank lines: name it by the line an editor shows.
      const lines = found.length
        ? findLines(req.file, 'csv', { units: found.map((r) => r.unit) }, csvRejected).units
        : undefined;
      for (const r of found) {
        const line = lines?.get(r.unit) ?? r.unit;
        let reason = r.reason;
        // Say how many lines were never read as rows, so nobody takes "rows read" for the whole file.
        if (r.swallowed > 0) {
          unreadLines += r.swallowed;
          const n = r.swallowed;
          reason += `; the ${n === 1 ? 'line' : `${n} lines`} after it (${n === 1 ? `line ${line + 1}` : `lines ${line + 1}-${line + n}`}) ${n === 1 ? 'is' : 'are'} inside that quote and ${n === 1 ? 'was' : 'were'} not read or checked`;
        }
        rejects.add({
          line,
          ...(r.column !== null && r.column !== undefined ? { column: String(r.column) } : {}),
          reason,
          text: r.text,
        });
      }
    }
    // A row of a file with lines is named by its line, whichever check refused it (the type checks
    // only know its position among the rows the reader kept).
    const lineKind = format === 'csv' ? 'csv' : format !== 'parquet' && jsonLayout !== 'array' ? 'jsonl' : undefined;
    const linesOf = (records: number[]) =>
      lineKind && records.length > 0
        ? findLines(req.file, lineKind, { records }, lineKind === 'csv' ? csvRejected : rejects.rejectedLines).records
        : undefined;
    const noteLines = linesOf(planned.notes.map((n) => n.record));
    const typeNotes = planned.notes.map((n) => {
      const line = noteLines?.get(n.record);
      return line !== undefined ? { column: n.column, wanted: n.wanted, line, value: n.value } : n;
    });
    const rowsRead = checkedRows ?? planned.rows + rejects.rejected;

    // Values a declared type cannot read: malformed rows (the first fails a strict load).
    const fallible = plans.filter((p) => p.expr !== p.tryExpr);
    const readable = (p: ColumnPlan) =>
      `(${ident(p.name)} IS NULL OR trim(CAST(${ident(p.name)} AS VARCHAR)) = '' OR ${p.checkExpr ?? p.tryExpr} IS NOT NULL)`;
    const rowOk = fallible.length > 0 ? fallible.map(readable).join(' AND ') : 'true';
    if (fallible.length > 0) {
      const unreadable = await rows(
        c,
        `SELECT __row, ${fallible.map((p, i) => `${readable(p)} AS ok${i}, CAST(${ident(p.name)} AS VARCHAR) AS v${i}`).join(', ')}
         FROM (SELECT row_number() OVER () AS __row, * FROM src) WHERE NOT (${rowOk}) ORDER BY __row LIMIT ${Math.min(maxErrors - rejects.rejected + 1, 1_000_000)}`,
      );
      const lines = linesOf(unreadable.map((r) => Number(r.__row)));
      for (const r of unreadable) {
        const i = fallible.findIndex((_, k) => r[`ok${k}`] === false);
        const p = fallible[i];
        const record = Number(r.__row);
        const line = lines?.get(record);
        rejects.add({
          ...(line !== undefined ? { line } : { record }),
          column: p.name,
          reason: `cannot read ${JSON.stringify(String(r[`v${i}`]).slice(0, 80))} as ${p.type}`,
          text: String(r[`v${i}`]),
        });
      }
      if (unreadable.length > 0) {
        const [all] = await rows(c, `SELECT count(*) AS n FROM src WHERE NOT (${rowOk})`);
        for (let extra = Number(all.n) - unreadable.length; extra > 0; extra--) {
          rejects.add({ reason: 'a value its declared type cannot read (not listed: over the limit)', text: '' });
        }
      }
    }

    const select = plans.map((p) => `${fallible.includes(p) ? p.tryExpr : p.expr} AS ${ident(p.name)}`).join(', ');
    const filter = rowOk === 'true' ? '' : ` WHERE ${rowOk}`;
    const previous = req.append ? path.resolve(req.dataDir, req.append.snapshot) : undefined;
    if (!previous && format === 'parquet' && plans.every((p) => p.expr === ident(p.name))) {
      // Nothing to convert: the source file is the snapshot, copied so the version stays immutable.
      fs.copyFileSync(req.file, tmp);
      const fields = fieldsOf(plans, req.grains);
      await publishAttachable(tmp, rowsRead, fields);
      publishFile(tmp, final);
      progress('write')(1);
      ok = true;
      return {
        fields,
        recordCount: rowsRead,
        snapshot: path.relative(req.dataDir, final),
        rowsRead,
        rowsRejected: 0,
      };
    }
    const body = previous
      ? `SELECT ${plans.map((p) => ident(p.name)).join(', ')} FROM read_parquet(${literal(previous)}) UNION ALL SELECT ${select} FROM src${filter}`
      : `SELECT ${select} FROM src${filter}`;
    let written: number;
    try {
      const [out] = await runWithProgress(
        c,
        // preserve_insertion_order (set on the instance) keeps the source order in the file.
        `COPY (${body}) TO ${literal(tmp)} (FORMAT parquet, COMPRESSION snappy, ROW_GROUP_SIZE 122880)`,
        progress('write'),
      );
      written = Number(out ? Object.values(out)[0] : 0);
    } catch (err) {
      throw AppError.invalid(`Loading ${label} failed: ${duckMessage(err)}`);
    }
    const fields = fieldsOf(plans, req.grains);
    await publishAttachable(tmp, written, fields);
    publishFile(tmp, final);
    ok = true;
    return {
      fields,
      recordCount: written,
      snapshot: path.relative(req.dataDir, final),
      rowsRead,
      rowsRejected: rejects.rejected,
      ...(rejects.rejected > 0 && req.rejectsFile ? { rejectsFile: req.rejectsFile } : {}),
      ...(unreadLines > 0 ? { unreadLines } : {}),
      ...(typeNotes.length ? { typeNotes } : {}),
    };
  } finally {
    if (ok) rejects.close();
    else rejects.discard();
    c.closeSync();
    instance.closeSync();
    fs.rmSync(tmp, { force: true });
    fs.rmSync(cleanTmp, { force: true });
    fs.rmSync(attachTmp, { force: true });
    fs.rmSync(`${attachTmp}.wal`, { force: true });
    if (!ok) fs.rmSync(attachableFile(final), { force: true });
  }
}

/** The first non-blank character of a file (after a BOM): `[` for a JSON array. */
function readFirstNonBlank(file: string): string {
  const fd = fs.openSync(file, 'r');
  try {
    const buf = Buffer.alloc(4096);
    const n = fs.readSync(fd, buf, 0, buf.length, 0);
    const text = buf
      .subarray(0, n)
      .toString('utf8')
      .replace(/^\uFEFF/, '');
    return text.trimStart()[0] ?? '';
  } finally {
    fs.closeSync(fd);
  }
}

/** Removes snapshot files of an index other than the ones named (the current and previous versions). */
export function pruneSnapshots(dataDir: string, name: string, keep: string[]): void {
  const dir = path.join(dataDir, 'indexes', name);
  if (!fs.existsSync(dir)) return;
  // A version is its Parquet file and, when large, its attachable sibling.
  const keepAbs = new Set(keep.flatMap((k) => [path.resolve(dataDir, k), path.resolve(dataDir, attachableFile(k))]));
  for (const f of fs.readdirSync(dir)) {
    const abs = path.join(dir, f);
    if (!keepAbs.has(abs)) fs.rmSync(abs, { force: true });
  }
}

import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { AppError } from '@quarry/errors';
import { type DateGrain, type FieldDef, type FieldType } from '@quarry/query-language';
import { INDEX_NAME } from '@quarry/contract';
import type { RollupDef } from '@quarry/metadata-store';
import { ATTACH_MIN_RECORDS, attachableFile } from './attachable-snapshot';
import type { SourceEncoding } from './load/csv-header';
import { checkColumns } from './load/check-columns';
import { collectCsvRejects } from './load/csv-rejects';
import { openLoadDuckDb, phases, rows, runWithProgress } from './load/duck-run';
import { planColumns, type ColumnPlan, type TypeNote } from './load/infer-columns';
import { RejectLog, type LoadReport, type OnError, type RejectedRow } from './load/load-problems';
import { fileSha256, publishAttachable, publishFile } from './load/publish-files';
import { findLines } from './load/record-lines';
import { formatOf, readSource, type SourceFormat } from './load/read-source';
import { rejectUnreadable } from './load/unreadable-values';
import { checkUpsertKey, stageUpsert, UPLOAD_TABLE } from './load/upsert-key';
import { writeParquet } from './load/write-parquet';
import { rollupFields } from './rollup-tables';
import { ident, literal } from './sql';

export { INDEX_NAME } from '@quarry/contract';
export type { LoadReport, OnError, RejectedRow } from './load/load-problems';
export type { SourceEncoding } from './load/csv-header';
export { formatOf, type SourceFormat } from './load/read-source';

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
  /**
   * With `append`: the file's rows replace the version's rows with the same `key` value (compared as
   * stored) and follow the others. Without it, a first load. Either way a row whose key is empty or
   * repeats an earlier row's is rejected.
   */
  upsert?: { key: string };
  /** Filled as the load goes (rows read once known, rejected rows as found), and left so by a failure. */
  report?: LoadReport;
  /** Called now and then with the fraction done (0..1). */
  onProgress?: (fraction: number) => void;
  /**
   * From this many records the version is also written in DuckDB's format for processes to attach
   * (ATTACH_MIN_RECORDS unless set; 0 always, Infinity never: the tests run both paths).
   */
  attachMinRecords?: number;
  /** Rollups to build inside the version's DuckDB file; one on a field the load no longer has is dropped. */
  rollups?: RollupDef[];
}

export interface BuiltSnapshot {
  fields: FieldDef[];
  recordCount: number;
  /** Relative to the data directory. */
  snapshot: string;
  /** The SHA-256 (hex) of the snapshot file, read as it was written. */
  sha256: string;
  /** Rows read from the source: recordCount (less the previous version's rows kept) plus rowsRejected. */
  rowsRead: number;
  rowsRejected: number;
  /** The first rejected rows (REPORTED_REJECTS of them, their text clipped), when any were. */
  rejects?: RejectedRow[];
  /** With `upsert`: the previous version's rows the file's replaced. */
  replaced?: number;
  /** The rejects file, when rows were skipped. */
  rejectsFile?: string;
  /** Lines of a CSV inside an unterminated quote: neither read as rows nor checked. */
  unreadLines?: number;
  /**
   * Columns loaded as text although most values read as another type, each with the first value that
   * did not: at its `line` in a CSV or JSON Lines file, else by its `record`.
   */
  typeNotes?: Array<Omit<TypeNote, 'record'> & { line?: number; record?: number }>;
  /** The rollups built (those asked for, less the dropped ones). */
  rollups?: RollupDef[];
  /** Rollups not built because a field they read is not in this version (or no longer a number), each with those fields. */
  droppedRollups?: Array<{ name: string; missing: string[] }>;
}

/** The rollups whose fields the version has, and the others with the fields they miss. */
function keptRollups(rollups: RollupDef[] | undefined, fields: FieldDef[]) {
  const have = new Set(fields.map((f) => f.name));
  const numeric = new Set(fields.filter((f) => f.type === 'integer' || f.type === 'number').map((f) => f.name));
  const kept: RollupDef[] = [];
  const dropped: Array<{ name: string; missing: string[] }> = [];
  for (const r of rollups ?? []) {
    // A field that is no longer a number cannot be summed: the rollup goes as if the field had.
    const unsummable = r.totals.filter((t) => t.field && t.kind !== 'countDistinct' && !numeric.has(t.field));
    const missing = [
      ...new Set([...rollupFields(r).filter((f) => !have.has(f)), ...unsummable.map((t) => t.field as string)]),
    ];
    if (missing.length) dropped.push({ name: r.name, missing });
    else kept.push(r);
  }
  return {
    ...(rollups?.length ? { rollups: kept } : {}),
    ...(dropped.length ? { droppedRollups: dropped } : {}),
  };
}

function fieldsOf(plans: ColumnPlan[], grains: BuildRequest['grains']): FieldDef[] {
  return plans.map((p) => {
    const grain = p.type === 'date' ? grains?.[p.name] : undefined;
    return grain && grain !== 'day' ? { name: p.name, type: p.type, grain } : { name: p.name, type: p.type };
  });
}

/**
 * Reads a CSV, JSON array, JSON Lines or Parquet file into a new immutable Parquet snapshot, in the
 * source's row order, accounting for every row: rows read = rows loaded + rows rejected. A malformed
 * row fails the whole load unless `onError` is `skip`; types never change a value (see infer-columns).
 * DuckDB streams the data (it never passes through JS, but for the strict JSON check), spilling to a
 * temporary folder in the data directory. Nothing is published here: the caller publishes the result.
 * `report`, when given, shows how far the load got, even when it fails.
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
  // Known before a byte is read when appending: a wrong key fails at once, not after the file's checks.
  if (req.upsert && req.append) checkUpsertKey(req.upsert.key, req.append.fields);
  const dir = path.join(req.dataDir, 'indexes', req.name);
  fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
  const id = `${Date.now().toString(36)}-${randomBytes(4).toString('hex')}`;
  const tmp = path.join(dir, `${id}.parquet.tmp`);
  const cleanTmp = path.join(dir, `${id}.clean.tmp`);
  const final = path.join(dir, `${id}.parquet`);
  const attachTmp = path.join(dir, `${id}.duckdb.tmp`);
  const spill = path.join(req.dataDir, 'tmp');
  fs.mkdirSync(spill, { recursive: true, mode: 0o700 });
  const rejects = new RejectLog(
    label,
    onError,
    maxErrors,
    onError === 'skip' ? req.rejectsFile : undefined,
    req.report,
  );
  const report = rejects.report;
  const weights: Record<string, number> =
    format === 'csv'
      ? { scan: 0.45, types: 0.05, write: 0.5 }
      : format === 'parquet'
        ? { read: 0.05, types: 0.15, write: 0.8 }
        : { read: 0.45, scan: 0.2, types: 0.05, write: 0.3 };
  const progress = phases(req.onProgress, weights);
  req.onProgress?.(0);
  const attachAt = {
    minRecords: req.attachMinRecords ?? ATTACH_MIN_RECORDS,
    tmp: attachTmp,
    final,
    spill,
    label,
  };

  const { instance, c } = await openLoadDuckDb(spill);
  let ok = false;
  try {
    const size = fs.statSync(req.file).size;
    const opened = await readSource(
      c,
      { path: req.file, label, format, encoding, size, cleanTmp },
      rejects,
      progress('read'),
    );
    const { columns, declared } = checkColumns(opened.columns, req, label);
    if (req.upsert && !req.append) checkUpsertKey(req.upsert.key, columns);

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
    const { unreadLines, csvRejected } =
      format === 'csv'
        ? await collectCsvRejects(c, req.file, rejects, opened.csvColumns, (n) => {
            report.rowsRead = planned.rows + rejects.rejected + n;
          })
        : { unreadLines: 0, csvRejected: new Map<number, number>() };
    // A row of a file with lines is named by its line, whichever check refused it (the type checks
    // only know its position among the rows the reader kept).
    const lineKind =
      format === 'csv' ? 'csv' : format !== 'parquet' && opened.jsonLayout !== 'array' ? 'jsonl' : undefined;
    // The lines the reader left out, as they are now: rows rejected from here on are still rows of `src`,
    // which findLines must count as kept.
    const unread = new Map(lineKind === 'csv' ? csvRejected : rejects.rejectedLines);
    const linesOf = (records: number[]) =>
      lineKind && records.length > 0 ? findLines(req.file, lineKind, { records }, unread).records : undefined;
    const noteLines = linesOf(planned.notes.map((n) => n.record));
    const typeNotes = planned.notes.map((n) => {
      const line = noteLines?.get(n.record);
      return line !== undefined ? { column: n.column, wanted: n.wanted, line, value: n.value } : n;
    });
    const rowsRead = opened.checkedRows ?? planned.rows + rejects.rejected;
    report.rowsRead = rowsRead;

    const { fallible, rowOk } = await rejectUnreadable(c, plans, rejects, maxErrors, linesOf);
    const staged = req.upsert
      ? await stageUpsert(c, { plans, fallible, rowOk, key: req.upsert.key, label }, rejects, maxErrors, linesOf)
      : undefined;

    const previous = req.append ? path.resolve(req.dataDir, req.append.snapshot) : undefined;
    if (!previous && !req.upsert && format === 'parquet' && plans.every((p) => p.expr === ident(p.name))) {
      // Nothing to convert: the source file is the snapshot, copied so the version stays immutable.
      fs.copyFileSync(req.file, tmp);
      const fields = fieldsOf(plans, req.grains);
      const rollups = keptRollups(req.rollups, fields);
      await publishAttachable(tmp, rowsRead, fields, { ...attachAt, rollups: rollups.rollups });
      const sha256 = await fileSha256(tmp);
      publishFile(tmp, final);
      progress('write')(1);
      ok = true;
      return {
        ...rollups,
        fields,
        recordCount: rowsRead,
        snapshot: path.relative(req.dataDir, final),
        sha256,
        rowsRead,
        rowsRejected: 0,
      };
    }
    const upload = req.upsert ? { table: UPLOAD_TABLE, key: req.upsert.key } : undefined;
    const previousRows =
      upload && previous
        ? Number((await rows(c, `SELECT count(*) AS n FROM read_parquet(${literal(previous)})`))[0].n)
        : 0;
    const written = await writeParquet(c, { plans, fallible, rowOk, previous, tmp, label, upload }, progress('write'));
    const fields = fieldsOf(plans, req.grains);
    const rollups = keptRollups(req.rollups, fields);
    await publishAttachable(tmp, written, fields, { ...attachAt, rollups: rollups.rollups });
    const sha256 = await fileSha256(tmp);
    publishFile(tmp, final);
    ok = true;
    return {
      ...rollups,
      fields,
      recordCount: written,
      snapshot: path.relative(req.dataDir, final),
      sha256,
      rowsRead,
      rowsRejected: rejects.rejected,
      ...(rejects.rejected > 0 ? { rejects: [...report.rejects] } : {}),
      // Every staged row is written once: the previous rows missing from what was written were replaced.
      ...(staged !== undefined ? { replaced: previousRows + staged - written } : {}),
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

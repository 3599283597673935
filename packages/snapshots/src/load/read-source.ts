import fs from 'node:fs';
import path from 'node:path';
import type { DuckDBConnection } from '@duckdb/node-api';
import { AppError } from '@quarry/errors';
import { literal } from '../sql';
import { readCsvHeader, type SourceEncoding } from './csv-header';
import { duckMessage, rows } from './duck-run';
import { checkJsonArray, checkJsonLines } from './json-check';
import type { RejectLog } from './load-problems';

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

const CSV_MAX_LINE = 8 * 1024 * 1024;

/** A source opened as the temporary view `src`, with the columns DuckDB reads from it. */
export interface OpenedSource {
  columns: Array<{ name: string; type: string }>;
  /** Rows the JSON check read (good or not); CSV and Parquet count theirs in the first scan. */
  checkedRows?: number;
  /** Fields of the CSV header (0 for other formats): what a reject's field count is compared with. */
  csvColumns: number;
  /** How a JSON source holds its records: one array, or one per line. */
  jsonLayout?: 'array' | 'lines';
}

/**
 * Opens the source file as the view `src`: a CSV with every column as text (types are inferred
 * later), a Parquet file as it is, JSON after a strict check that copies its good rows to `cleanTmp`.
 */
export async function readSource(
  c: DuckDBConnection,
  file: { path: string; label: string; format: SourceFormat; encoding: SourceEncoding; size: number; cleanTmp: string },
  rejects: RejectLog,
  onRead: (fraction: number) => void,
): Promise<OpenedSource> {
  const { label, format, encoding, size, cleanTmp } = file;
  let source: string;
  /** Rows the JSON check read (good or not); CSV and Parquet count theirs in the first scan. */
  let checkedRows: number | undefined;
  let csvColumns = 0;
  let jsonLayout: 'array' | 'lines' | undefined;
  let columns: Array<{ name: string; type: string }>;
  if (format === 'csv') {
    if (size === 0) throw AppError.invalid(`${label} is empty: a CSV file needs a header line`);
    const header = readCsvHeader(file.path, label, path.extname(file.path).toLowerCase(), encoding);
    const columnTypes = `{${header.names.map((n) => `${literal(n)}: 'VARCHAR'`).join(', ')}}`;
    source = `read_csv(${literal(path.resolve(file.path))}, header = true, auto_detect = false, delim = ${literal(header.delimiter)}, quote = '"', escape = '"', columns = ${columnTypes}, strict_mode = true, ignore_errors = true, store_rejects = true, max_line_size = ${CSV_MAX_LINE}, encoding = ${literal(encoding === 'latin1' ? 'latin-1' : 'utf-8')})`;
    csvColumns = header.names.length;
    columns = header.names.map((name) => ({ name, type: 'VARCHAR' }));
  } else if (format === 'parquet') {
    source = `read_parquet(${literal(path.resolve(file.path))}, file_row_number = true)`;
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
      onRead(size > 0 ? readBytes / size : 1);
    };
    const firstChar = size > 0 ? readFirstNonBlank(file.path) : '';
    const check =
      format === 'json' && firstChar === '['
        ? checkJsonArray(file.path, label, rejects, cleanTmp, onBytes)
        : await checkJsonLines(file.path, label, rejects, cleanTmp, onBytes);
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
  return { columns, checkedRows, csvColumns, jsonLayout };
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

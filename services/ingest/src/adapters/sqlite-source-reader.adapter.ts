import fs from 'node:fs';
import path from 'node:path';
import { Readable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import Database from 'better-sqlite3';
import { AppError, abortReason } from '@quarry/errors';
import type { SourceColumn, SourceRead, SourceReader, SourceSpec } from '../ports/source-reader.port';
import { bytesText, checkColumnNames, cursorIndex, sourceQuery, writeCsv, type StagedValue } from './source-staging';

/*
 * SourceReader for SQLite files (better-sqlite3, the driver Quarry has).
 *
 * Guarantees, beyond the port's:
 * - `connection.url` is an absolute path or a file: URL naming an existing regular file; anything else
 *   is refused before SQLite sees it (no `:memory:`, no URI options, no folder, no device). The file is
 *   opened read-only (it is never written: not its data, not its header) and must exist;
 * - `fileAllowed`, when given, is asked first (an operator's list of folders sources may read);
 * - rows are stepped one at a time (`iterate()`) and pulled only as fast as the staged file takes them;
 * - integers are read as BigInt (`safeIntegers`): every 64-bit value is written exactly; reals as the
 *   shortest text that reads back as the same double; text as it is; blobs as `\x` and hex;
 * - SQLite types values, not columns, so types are conservative: a column of TEXT affinity → string;
 *   REAL affinity → number only when every value read was a real (one text or blob among them: no type);
 *   INTEGER and NUMERIC affinity, and columns with no declared type (expressions) → no type, so the
 *   loader's inference decides, which never changes a value;
 * - the cursor bound is a bound parameter (`q.cursor > ?`, compared by SQLite's own rules); rows with a
 *   null cursor are left out, rows come in cursor order, `cursorMax` is the last one's cursor;
 * - an aborted signal stops the read between two rows (SQLite has no interrupt in this driver: one
 *   statement that takes long before its first row runs to that row).
 */

export interface SqliteSourceReaderOptions {
  /** Whether this server may read that file (absolute and resolved); throws an AppError when not. */
  fileAllowed?: (file: string) => Promise<void>;
}

/** A declared column type's affinity, by SQLite's rules (datatype3.html, 3.1). */
function affinity(declared: string | null): 'INTEGER' | 'TEXT' | 'BLOB' | 'REAL' | 'NUMERIC' | 'NONE' {
  if (declared === null || declared.trim() === '') return 'NONE';
  const t = declared.toUpperCase();
  if (t.includes('INT')) return 'INTEGER';
  if (t.includes('CHAR') || t.includes('CLOB') || t.includes('TEXT')) return 'TEXT';
  if (t.includes('BLOB')) return 'BLOB';
  if (t.includes('REAL') || t.includes('FLOA') || t.includes('DOUB')) return 'REAL';
  return 'NUMERIC';
}

function valueText(v: unknown): StagedValue {
  if (v === null || v === undefined) return null;
  if (typeof v === 'bigint') return v.toString();
  if (typeof v === 'number') return String(v);
  if (typeof v === 'string') return v;
  if (v instanceof Uint8Array) return bytesText(v);
  return String(v);
}

/** The file a connection names, checked: absolute, existing, regular. */
export function sqlitePath(spec: Pick<SourceSpec, 'connection'>): string {
  const connection = spec.connection as { url?: unknown };
  if (typeof connection.url !== 'string' || connection.url === '')
    throw AppError.invalid('A sqlite source names its file as connection.url (an absolute path or a file: URL)');
  const raw = connection.url;
  let file: string;
  if (/^file:/i.test(raw)) {
    try {
      const url = new URL(raw);
      if (url.search !== '')
        throw AppError.invalid('A sqlite source file URL takes no query (?mode=…): it is read-only');
      file = fileURLToPath(url);
    } catch (err) {
      if (err instanceof AppError) throw err;
      throw AppError.invalid(`connection.url ${JSON.stringify(raw)} is not a file: URL this server can open`);
    }
  } else if (/^[a-z][a-z0-9+.-]*:/i.test(raw)) {
    throw AppError.invalid(
      `A sqlite source is a file on this server: ${JSON.stringify(raw)} is not a path or a file: URL`,
    );
  } else file = raw;
  if (!path.isAbsolute(file))
    throw AppError.invalid(`A sqlite source's path must be absolute: ${JSON.stringify(raw)} is relative`);
  return path.normalize(file);
}

/**
 * The source's file as it really is (links resolved), asked only once the path was allowed: a caller
 * learns whether a file exists only in the folders this server lets sources read.
 */
export function sqliteFile(file: string): string {
  let stat: fs.Stats;
  try {
    stat = fs.statSync(file);
  } catch {
    throw AppError.invalid(`The sqlite source ${file} does not exist`);
  }
  if (!stat.isFile()) throw AppError.invalid(`The sqlite source ${file} is not a regular file`);
  return fs.realpathSync(file);
}

export class SqliteSourceReader implements SourceReader {
  constructor(private readonly options: SqliteSourceReaderOptions = {}) {}

  async read(
    spec: SourceSpec,
    options: { file: string; cursor?: { column: string; after?: string }; signal: AbortSignal },
  ): Promise<SourceRead> {
    if (spec.kind !== 'sqlite') throw AppError.invalid(`SqliteSourceReader reads sqlite sources, not ${spec.kind}`);
    const named = sqlitePath(spec);
    if (this.options.fileAllowed) await this.options.fileAllowed(named);
    const file = sqliteFile(named);
    // The real file, links resolved, must lie in an allowed folder too.
    if (this.options.fileAllowed && file !== named) await this.options.fileAllowed(file);
    const sql = sourceQuery(spec, '"');
    const { signal } = options;
    if (signal.aborted) throw abortReason(signal);

    let db: Database.Database;
    try {
      db = new Database(file, { readonly: true, fileMustExist: true });
    } catch (err) {
      throw AppError.invalid(`Cannot open ${file} as a SQLite database: ${(err as Error).message}`);
    }
    let iterator: IterableIterator<unknown[]> | undefined;
    try {
      // Not a database at all shows here, on the first read of its header.
      const probe = this.prepare(db, `SELECT * FROM (\n${sql}\n) AS q`, file);
      const described = probe.columns();
      const names = described.map((c) => c.name);
      checkColumnNames(names);
      const at = options.cursor ? cursorIndex(names, options.cursor.column) : -1;
      let text = `SELECT * FROM (\n${sql}\n) AS q`;
      const params: string[] = [];
      if (options.cursor) {
        const col = `q."${options.cursor.column.replace(/"/g, '""')}"`;
        if (options.cursor.after !== undefined) {
          params.push(options.cursor.after);
          text += ` WHERE ${col} > ? AND ${col} IS NOT NULL ORDER BY ${col}`;
        } else text += ` WHERE ${col} IS NOT NULL ORDER BY ${col}`;
      }
      const stmt = this.prepare(db, text, file).raw(true).safeIntegers(true);
      const affinities = described.map((c) => affinity(c.type));
      const realsOnly = affinities.map((a) => a === 'REAL');
      let rows = 0;
      let cursorMax: string | undefined;
      const it = stmt.iterate(...params) as IterableIterator<unknown[]>;
      iterator = it;
      const source = new Readable({
        objectMode: true,
        highWaterMark: 256,
        read() {
          try {
            for (let n = 0; n < 256; n += 1) {
              if (signal.aborted) return;
              const next = it.next();
              if (next.done) {
                this.push(null);
                return;
              }
              const row = next.value;
              for (let i = 0; i < row.length; i += 1) {
                const v = row[i];
                if (realsOnly[i] && v !== null && typeof v !== 'number') realsOnly[i] = false;
              }
              if (!this.push(row.map(valueText))) return;
            }
          } catch (err) {
            this.destroy(err as Error);
          }
        },
        destroy(err, cb) {
          it.return?.();
          cb(err);
        },
      });
      await writeCsv(options.file, names, source, signal, (row) => {
        rows += 1;
        if (at >= 0) cursorMax = row[at] ?? cursorMax;
        return row;
      });
      return {
        file: options.file,
        format: 'csv',
        rows,
        columns: described.map((c, i) => {
          const dbType = c.type ?? '';
          const type: SourceColumn['type'] =
            affinities[i] === 'TEXT' ? 'string' : affinities[i] === 'REAL' && realsOnly[i] ? 'number' : undefined;
          return type ? { name: c.name, dbType, type } : { name: c.name, dbType };
        }),
        ...(cursorMax !== undefined ? { cursorMax } : {}),
      };
    } catch (err) {
      if (signal.aborted) throw abortReason(signal);
      if (err instanceof AppError) throw err;
      throw AppError.invalid(`Reading the sqlite source ${path.basename(file)} failed: ${(err as Error).message}`);
    } finally {
      iterator?.return?.();
      db.close();
    }
  }

  private prepare(db: Database.Database, text: string, file: string): Database.Statement {
    try {
      return db.prepare(text);
    } catch (err) {
      const code = (err as { code?: string }).code ?? '';
      if (code === 'SQLITE_NOTADB')
        throw AppError.invalid(`The sqlite source ${path.basename(file)} is not a SQLite database`);
      throw AppError.invalid(`The source query failed: ${(err as Error).message}`);
    }
  }
}

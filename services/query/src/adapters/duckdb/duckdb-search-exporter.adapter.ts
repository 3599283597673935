import type { IndexEntry } from '@quarry/metadata-store';
import type { QueryNode } from '@quarry/query-language';
import { AppError } from '@quarry/errors';
import { compileSearch, ident, literal, type SnapshotEngine } from '@quarry/snapshots';
import type { SearchExporter, SearchExportPlan } from '../../ports/search-exporter.port';
import type { ExportEngineLease } from './export-engine-lease';
import { orderBy, resolvedPlan } from './search-sql';

/**
 * The characters a spreadsheet reads as the start of a formula (the crosstab CSV's guard: = + - @ ; tab,
 * CR, LF and their full-width forms), as code points: such a text cell is written with a leading
 * apostrophe, unless it is a plain number. Only the first character's code point is compared, and only
 * a cell that starts with one of them is matched against the number pattern: two regular expressions on
 * every text cell were most of a CSV export's formatting (bench/README.md).
 */
const FORMULA_START_CODE_POINTS = [61, 43, 45, 64, 59, 9, 13, 10, 0xff1d, 0xff0b, 0xff0d, 0xff20, 0xff1b].join(', ');
const PLAIN_NUMBER_SQL = `'-?[0-9]+(\\.[0-9]+)?([eE][-+]?[0-9]+)?'`;

const COPY_OPTIONS = {
  csv: '(FORMAT csv, HEADER true)',
  jsonl: '(FORMAT json)',
  parquet: '(FORMAT parquet, COMPRESSION zstd)',
} as const;

/** Searches written by DuckDB's COPY on the snapshot's table: DuckDB streams the rows to the file. */
export class DuckDbSearchExporter implements SearchExporter {
  constructor(private readonly lease: ExportEngineLease) {}

  count(entry: IndexEntry, where: QueryNode, signal?: AbortSignal): Promise<number> {
    return this.lease.use(async (engine) => {
      const loaded = await engine.table(entry);
      const resolved = await resolvedPlan(engine, entry, { where });
      const compiled = compileSearch(resolved.where, null, loaded);
      const [row] = await engine.all(
        `SELECT count(*) AS n FROM ${ident(loaded.table)} WHERE ${compiled.where}`,
        compiled.params,
        signal,
      );
      return Number(row.n);
    });
  }

  write(entry: IndexEntry, plan: SearchExportPlan): Promise<number> {
    return this.lease.use((engine) => this.copy(engine, entry, plan));
  }

  private async copy(engine: SnapshotEngine, entry: IndexEntry, plan: SearchExportPlan): Promise<number> {
    const loaded = await engine.table(entry);
    const { table, columnTypes } = loaded;
    const resolved = await resolvedPlan(engine, entry, plan);
    const compiled = compileSearch(resolved.where, resolved.clauses, loaded);
    const column = (name: string): string => {
      const col = ident(name);
      const type = columnTypes.get(name);
      if (plan.format === 'parquet') return col;
      if (type === 'DATE') return `strftime(${col}, '%Y-%m-%d')`;
      if (type?.startsWith('TIMESTAMP')) return `strftime(${col}, '%Y-%m-%dT%H:%M:%S')`;
      if (plan.format === 'csv' && type === 'VARCHAR')
        return `CASE WHEN unicode(${col}) IN (${FORMULA_START_CODE_POINTS}) AND NOT regexp_full_match(${col}, ${PLAIN_NUMBER_SQL}) THEN '''' || ${col} ELSE ${col} END`;
      return col;
    };
    const projection = entry.fields.map((f) => `${column(f.name)} AS ${ident(f.name)}`).join(', ');
    // Sorted on the stored columns, then formatted: formatting first would carry every row's text through
    // the sort. DuckDB keeps a subquery's order through a projection (insertion order is preserved).
    const stored = entry.fields.map((f) => ident(f.name)).join(', ');
    const score = compiled.score ? `, ${compiled.score} AS __score` : '';
    const sorted = `SELECT ${stored}${score} FROM ${ident(table)} WHERE ${compiled.where} ORDER BY ${orderBy(plan.sort)}`;
    const select = `SELECT ${projection} FROM (${sorted}) AS sorted`;
    let rows;
    try {
      rows = await engine.all(
        `COPY (${select}) TO ${literal(plan.path)} ${COPY_OPTIONS[plan.format]}`,
        compiled.params,
        plan.signal,
      );
    } catch (err) {
      throw writeFailure(err) ?? err;
    }
    return Number(rows[0]?.Count ?? 0);
  }
}

/**
 * A file that could not be written (a full disk, a folder gone unwritable) is the operator's to fix: its
 * cause is told, the server's path is not.
 */
function writeFailure(err: unknown): AppError | undefined {
  const message = err instanceof Error ? err.message : String(err);
  if (!/^IO Error/.test(message)) return undefined;
  const cause = message.slice(message.lastIndexOf(': ') + 2) || 'an I/O error';
  return AppError.unavailable(`The export file could not be written: ${cause}`, err);
}

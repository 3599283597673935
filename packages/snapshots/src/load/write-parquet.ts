import type { DuckDBConnection } from '@duckdb/node-api';
import { AppError } from '@quarry/errors';
import { ident, literal } from '../sql';
import { duckMessage, runWithProgress } from './duck-run';
import type { ColumnPlan } from './infer-columns';

/**
 * Writes the snapshot's Parquet file at `tmp`: the rows of `src` that read (each column converted by its
 * plan), after the rows of the `previous` version when appending. Returns the records written.
 */
export async function writeParquet(
  c: DuckDBConnection,
  target: { plans: ColumnPlan[]; fallible: ColumnPlan[]; rowOk: string; previous?: string; tmp: string; label: string },
  onProgress: (fraction: number) => void,
): Promise<number> {
  const { plans, fallible, rowOk, previous, tmp, label } = target;
  const select = plans.map((p) => `${fallible.includes(p) ? p.tryExpr : p.expr} AS ${ident(p.name)}`).join(', ');
  const filter = rowOk === 'true' ? '' : ` WHERE ${rowOk}`;
  const body = previous
    ? `SELECT ${plans.map((p) => ident(p.name)).join(', ')} FROM read_parquet(${literal(previous)}) UNION ALL SELECT ${select} FROM src${filter}`
    : `SELECT ${select} FROM src${filter}`;
  try {
    const [out] = await runWithProgress(
      c,
      // preserve_insertion_order (set on the instance) keeps the source order in the file.
      `COPY (${body}) TO ${literal(tmp)} (FORMAT parquet, COMPRESSION snappy, ROW_GROUP_SIZE 122880)`,
      onProgress,
    );
    return Number(out ? Object.values(out)[0] : 0);
  } catch (err) {
    throw AppError.invalid(`Loading ${label} failed: ${duckMessage(err)}`);
  }
}

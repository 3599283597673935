import type { DuckDBConnection } from '@duckdb/node-api';
import { AppError } from '@quarry/errors';
import { ident, literal } from '../sql';
import { duckMessage, runWithProgress } from './duck-run';
import type { ColumnPlan } from './infer-columns';

/**
 * Writes the snapshot's Parquet file at `tmp`: the rows of `src` that read (each column converted by its
 * plan), after the rows of the `previous` version when appending. An upsert's rows are already staged
 * (`upload`, see stageUpsert): the previous version's rows whose key none of them has, then those rows.
 * Returns the records written.
 */
export async function writeParquet(
  c: DuckDBConnection,
  target: {
    plans: ColumnPlan[];
    fallible: ColumnPlan[];
    rowOk: string;
    previous?: string;
    tmp: string;
    label: string;
    upload?: { table: string; key: string };
  },
  onProgress: (fraction: number) => void,
): Promise<number> {
  const { plans, fallible, rowOk, previous, tmp, label, upload } = target;
  const select = plans.map((p) => `${fallible.includes(p) ? p.tryExpr : p.expr} AS ${ident(p.name)}`).join(', ');
  const filter = rowOk === 'true' ? '' : ` WHERE ${rowOk}`;
  const columns = (from: string) => plans.map((p) => `${from}${ident(p.name)}`).join(', ');
  let body: string;
  if (upload) {
    const k = ident(upload.key);
    // A join keeps no order: both sides carry their position and the result is sorted by it. An anti
    // join, not NOT IN: a previous row whose key is NULL stays (NOT IN would test NULL and drop it).
    body = previous
      ? `SELECT ${columns('')} FROM (
           SELECT 0 AS __part, p.__n, ${columns('p.')} FROM (SELECT row_number() OVER () AS __n, * FROM read_parquet(${literal(previous)})) p
             ANTI JOIN (SELECT ${k} FROM ${upload.table}) u ON p.${k} = u.${k}
           UNION ALL SELECT 1 AS __part, __row AS __n, ${columns('')} FROM ${upload.table}
         ) ORDER BY __part, __n`
      : `SELECT ${columns('')} FROM ${upload.table} ORDER BY __row`;
  } else {
    body = previous
      ? `SELECT ${columns('')} FROM read_parquet(${literal(previous)}) UNION ALL SELECT ${select} FROM src${filter}`
      : `SELECT ${select} FROM src${filter}`;
  }
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

import type { DuckDBConnection } from '@duckdb/node-api';
import { AppError } from '@quarry/errors';
import { ident, literal } from '../sql';
import { duckMessage, rows } from './duck-run';
import type { ColumnPlan } from './infer-columns';
import type { RejectLog } from './load-problems';

/** The temporary table an upsert's loaded rows are staged in: its columns, and `__row` (the source position). */
export const UPLOAD_TABLE = 'upload';

/** An upsert's key must be a field of the version it writes: else no row could be matched. */
export function checkUpsertKey(key: string, fields: ReadonlyArray<{ name: string }>): void {
  if (!fields.some((f) => f.name === key)) {
    throw AppError.invalid(
      `The upsert key "${key}" is not one of the fields (${fields.map((f) => `"${f.name}"`).join(', ')})`,
    );
  }
}

/**
 * Stages an upsert's rows in UPLOAD_TABLE, each converted by its plan, so that keys are compared as the
 * values the version stores (an integer column's "07" is the key 7; a text column's is "07", not "7").
 * A row whose key is empty, or whose key an earlier row already has, is rejected (the later one, naming
 * the earlier's line) and left out, so the table holds the rows that replace or add, each key once.
 * Rows `rowOk` refuses were rejected already and are not staged. Returns how many rows were staged.
 */
export async function stageUpsert(
  c: DuckDBConnection,
  target: { plans: ColumnPlan[]; fallible: ColumnPlan[]; rowOk: string; key: string; label: string },
  rejects: RejectLog,
  maxErrors: number,
  linesOf: (records: number[]) => ReadonlyMap<number, number> | undefined,
): Promise<number> {
  const { plans, fallible, rowOk, key, label } = target;
  const k = ident(key);
  const select = plans.map((p) => `${fallible.includes(p) ? p.tryExpr : p.expr} AS ${ident(p.name)}`).join(', ');
  // Blank text is no key either: it reads back as nothing a user could tell from another blank.
  const present = `(${k} IS NOT NULL AND trim(CAST(${k} AS VARCHAR)) <> '')`;
  const refused = `NOT (${present} AND __row = __first)`;
  try {
    // Positions are taken before any row is left out: they are what linesOf maps to lines.
    await c.run(
      `CREATE TEMP TABLE ${UPLOAD_TABLE} AS SELECT *, min(__row) OVER (PARTITION BY ${k}) AS __first
         FROM (SELECT __row, ${select} FROM (SELECT row_number() OVER () AS __row, * FROM src) WHERE ${rowOk})`,
    );
  } catch (err) {
    throw AppError.invalid(`Loading ${label} failed: ${duckMessage(err)}`);
  }
  const record = `CAST(json_object(${plans.map((p) => `${literal(p.name)}, ${ident(p.name)}`).join(', ')}) AS VARCHAR)`;
  const bad = await rows(
    c,
    `SELECT __row, __first, ${present} AS present, CAST(${k} AS VARCHAR) AS v, ${record} AS text
       FROM ${UPLOAD_TABLE} WHERE ${refused} ORDER BY __row LIMIT ${Math.min(maxErrors - rejects.rejected + 1, 1_000_000)}`,
  );
  if (bad.length > 0) {
    const lines = linesOf([...new Set(bad.flatMap((r) => [Number(r.__row), Number(r.__first)]))]);
    const where = (n: number) => {
      const line = lines?.get(n);
      return line !== undefined ? { line } : { record: n };
    };
    for (const r of bad) {
      const at = where(Number(r.__row));
      const first = where(Number(r.__first));
      rejects.add({
        ...at,
        column: key,
        reason:
          r.present === true
            ? `repeats the key ${key}=${JSON.stringify(String(r.v).slice(0, 80))} of ${first.line !== undefined ? `line ${first.line}` : `record ${first.record}`}`
            : `the key field "${key}" is empty`,
        text: String(r.text),
      });
    }
    const [all] = await rows(c, `SELECT count(*) AS n FROM ${UPLOAD_TABLE} WHERE ${refused}`);
    for (let extra = Number(all.n) - bad.length; extra > 0; extra--) {
      rejects.add({ reason: 'an empty or repeated key (not listed: over the limit)', text: '' });
    }
    await c.run(`DELETE FROM ${UPLOAD_TABLE} WHERE ${refused}`);
  }
  const [staged] = await rows(c, `SELECT count(*) AS n FROM ${UPLOAD_TABLE}`);
  return Number(staged.n);
}

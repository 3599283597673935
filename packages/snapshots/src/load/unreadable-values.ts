import type { DuckDBConnection } from '@duckdb/node-api';
import { ident } from '../sql';
import { rows } from './duck-run';
import type { ColumnPlan } from './infer-columns';
import type { RejectLog } from './load-problems';

/**
 * Values a declared type cannot read: malformed rows (the first fails a strict load), each named by its
 * line where `linesOf` finds one. Returns the
 * columns whose reading can fail and the SQL test a row passes when all of them read.
 */
export async function rejectUnreadable(
  c: DuckDBConnection,
  plans: ColumnPlan[],
  rejects: RejectLog,
  maxErrors: number,
  linesOf: (records: number[]) => ReadonlyMap<number, number> | undefined,
): Promise<{ fallible: ColumnPlan[]; rowOk: string }> {
  const fallible = plans.filter((p) => p.expr !== p.tryExpr);
  const readable = (p: ColumnPlan) =>
    `(${ident(p.name)} IS NULL OR trim(CAST(${ident(p.name)} AS VARCHAR)) = '' OR ${p.checkExpr ?? p.tryExpr} IS NOT NULL)`;
  const rowOk = fallible.length > 0 ? fallible.map(readable).join(' AND ') : 'true';
  if (fallible.length > 0) {
    // Counted first, in one parallel scan: numbering every row (row_number() OVER ()) costs a pass that
    // holds the whole file in order, 2.5 s of a 3M-row load, and a source typed by its database (declared
    // types, every value readable) never needs it. With nothing unreadable the plain casts are written,
    // which read exactly what the TRY_ ones would, unfiltered.
    const [bad] = await rows(c, `SELECT count(*) AS n FROM src WHERE NOT (${rowOk})`);
    const unreadableRows = Number(bad.n);
    if (unreadableRows === 0) return { fallible: [], rowOk: 'true' };
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
      for (let extra = unreadableRows - unreadable.length; extra > 0; extra--) {
        rejects.add({ reason: 'a value its declared type cannot read (not listed: over the limit)', text: '' });
      }
    }
  }
  return { fallible, rowOk };
}

import type { IndexEntry } from '@quarry/metadata-store';
import type { FieldDef, QueryNode } from '@quarry/query-language';
import { compileWhere, ident, type SnapshotEngine } from '@quarry/snapshots';
import type { AxisValue, GroupRow } from '../domain/crosstab-grid';
import type { CrosstabSpec, TotalSpec } from '../domain/crosstab-spec';
import type { PivotEngine } from '../ports/pivot-engine.port';

function axisExpr(f: FieldDef): string {
  const col = ident(f.name);
  if (f.type === 'date') return `strftime(CAST(${col} AS DATE), '${f.grain === 'year' ? '%Y' : f.grain === 'month' ? '%Y-%m' : '%Y-%m-%d'}')`;
  if (f.type === 'string') return `nullif(${col}, '')`;
  if (f.type === 'integer' || f.type === 'number') return `CAST(${col} AS DOUBLE)`;
  return col;
}

function aggExpr(t: TotalSpec): string {
  if (t.distinctOf) return `count(DISTINCT ${t.distinctOf.type === 'string' ? `nullif(${ident(t.distinctOf.name)}, '')` : ident(t.distinctOf.name)})`;
  if (!t.field) return 'count(*)';
  const col = ident(t.field.name);
  switch (t.aggregation) {
    case 'Count':
      return t.field.type === 'string' ? `count(nullif(${col}, ''))` : `count(${col})`;
    case 'Sum':
      return `CAST(sum(${col}) AS DOUBLE)`;
    case 'Average':
      return `avg(${col})`;
    case 'Min':
      return `CAST(min(${col}) AS DOUBLE)`;
    case 'Max':
      return `CAST(max(${col}) AS DOUBLE)`;
  }
}

function toAxis(v: unknown): AxisValue {
  if (v === null || v === undefined) return null;
  if (typeof v === 'bigint') return Number(v);
  if (typeof v === 'number' || typeof v === 'boolean' || typeof v === 'string') return v;
  return String(v);
}

function toNumber(v: unknown): number | null {
  if (v === null || v === undefined) return null;
  return Number(v);
}

/** Pivots in one GROUPING SETS query over the in-memory snapshot. */
export class DuckDbPivotEngine implements PivotEngine {
  constructor(private readonly engine: SnapshotEngine) {}

  async distinctKeys(entry: IndexEntry, where: QueryNode, spec: CrosstabSpec): Promise<{ rows: number; columns: number }> {
    const { table } = await this.engine.table(entry);
    const w = compileWhere(where);
    const distinct = (fields: FieldDef[]) =>
      fields.length ? `(SELECT count(*) FROM (SELECT DISTINCT ${fields.map(axisExpr).join(', ')} FROM ${ident(table)} WHERE ${w.sql}))` : '1';
    const [r] = await this.engine.all(`SELECT ${distinct(spec.rows)} AS r, ${distinct(spec.columns.map((c) => c.field))} AS c`, w.params);
    return { rows: Number(r.r), columns: Number(r.c) };
  }

  async aggregate(entry: IndexEntry, where: QueryNode, spec: CrosstabSpec): Promise<GroupRow[]> {
    const { table } = await this.engine.table(entry);
    const w = compileWhere(where);
    const rowCols = spec.rows.map((f, i) => ({ alias: `__r${i}`, expr: axisExpr(f) }));
    const colCols = spec.columns.map((c, i) => ({ alias: `__c${i}`, expr: axisExpr(c.field) }));
    const all = [...rowCols, ...colCols];
    const r = rowCols.map((c) => c.alias).join(', ');
    const c = colCols.map((x) => x.alias).join(', ');
    const sets = colCols.length ? `(${r}, ${c}), (${r}), (${c}), ()` : `(${r}), ()`;
    const sql = `SELECT ${all.map((x) => x.alias).join(', ')}, GROUPING(${all.map((x) => x.alias).join(', ')}) AS gid, ${spec.totals.map((t, i) => `${aggExpr(t)} AS __t${i}`).join(', ')}
      FROM (SELECT ${all.map((x) => `${x.expr} AS ${x.alias}`).join(', ')}${spec.totals.some((t) => t.field || t.distinctOf) ? ', *' : ''} FROM ${ident(table)} WHERE ${w.sql})
      GROUP BY GROUPING SETS (${sets})`;
    const rows = await this.engine.all(sql, w.params);
    const nCols = colCols.length;
    const colMask = (1 << nCols) - 1;
    const allMask = (1 << all.length) - 1;
    const out: GroupRow[] = [];
    for (const row of rows) {
      const gid = Number(row.gid);
      const rowKey = rowCols.map((x) => toAxis(row[x.alias]));
      const columnKey = colCols.map((x) => toAxis(row[x.alias]));
      const values = spec.totals.map((_, i) => toNumber(row[`__t${i}`]));
      if (gid === allMask) out.push({ kind: 'grand', rowKey: [], columnKey: [], values });
      else if (gid === 0) {
        out.push({ kind: 'cell', rowKey, columnKey, values });
        if (nCols === 0) out.push({ kind: 'rowTotal', rowKey, columnKey, values });
      } else if (gid === colMask) out.push({ kind: 'rowTotal', rowKey, columnKey: [], values });
      else out.push({ kind: 'columnTotal', rowKey: [], columnKey, values });
    }
    return out;
  }
}

import type { IndexEntry } from '@quarry/metadata-store';
import type { QueryNode } from '@quarry/query-language';
import { compileWhere, ident, type LoadedTable, type Row, type SnapshotEngine } from '@quarry/snapshots';
import type { AxisValue, GroupRow } from '../../domain/axis-value';
import { crosstabCells, type AxisSpec, type CrosstabSpec } from '../../domain/crosstab-spec';
import type {
  DrillFacts,
  KeysAtLeast,
  OuterExclusion,
  PivotEngine,
  PivotResult,
  PivotRestriction,
} from '../../ports/pivot-engine.port';
import { estimateKeys, THOROUGH_SAMPLE_RECORDS } from '../pivot/pivot-key-estimate';
import { PivotPlan } from '../pivot/pivot-plan';
import {
  fromGroupingSets,
  JS_ROLLUP_MAX_WORK,
  rollUpInJs,
  twinGroupsFromCells,
  twinGroupsFromSets,
} from '../pivot/pivot-rollup';
import { memberSql, notMemberSql, type BoundWhere } from '../pivot/pivot-sql';
import { lastPeriodSql, lastStoredSql, shiftCut } from '../pivot/pivot-shift';
import { matchRollup } from './rollup-match';
import { RollupCells } from './rollup-cells';
import { DistinctBits, distinctCellsSql, JS_DISTINCT_MAX_WORK, separatorFlag } from '../pivot/pivot-distinct';
import { planTwins } from '../pivot/pivot-twin';
import { foldedGroups, type PlanFold } from '../pivot/pivot-fold';
import type { CalendarGroup } from '@quarry/contract';
import type { LastPeriod, PeriodShift } from '../../domain/period-shift';

export { KEY_SAMPLE_RECORDS, THOROUGH_SAMPLE_RECORDS } from '../pivot/pivot-key-estimate';
export { JS_ROLLUP_MAX_WORK } from '../pivot/pivot-rollup';

/**
 * Pivots over the in-memory snapshot in one statement, one scan. Without dynamic views the statement
 * returns the pre-aggregated cells and the totals are summed here from their partials: a roll-up in
 * DuckDB cost more than the whole JS pass for a few thousand cells. When there are more cells than the
 * limit could allow, or with dynamic views, the roll-up runs in DuckDB by grouping sets (see rollupSql).
 */
export class DuckDbPivotEngine implements PivotEngine {
  readonly engineName = 'duckdb';

  constructor(
    private readonly engine: SnapshotEngine,
    /** JS_ROLLUP_MAX_WORK; 0 sends every roll-up to DuckDB (tests compare both paths). */
    private readonly jsRollupMaxWork = JS_ROLLUP_MAX_WORK,
  ) {}

  /** Cells read from rollups (rollup-cells): the same statement on an immutable version reads the same cells. */
  private readonly rollupCells = new RollupCells();

  forget(name: string): void {
    this.engine.release(name);
    this.rollupCells.clear();
  }

  /** A cells statement's rows: from a rollup, kept for the next call of the same statement. */
  private cellsOf(plan: PivotPlan, sql: string, params: BoundWhere['params'], signal?: AbortSignal) {
    const run = () => this.engine.all(sql, params, signal);
    return plan.readsRollup ? this.rollupCells.read(sql, params, run) : run();
  }

  async fieldRange(
    entry: IndexEntry,
    where: QueryNode,
    field: string,
    signal?: AbortSignal,
  ): Promise<[number, number] | null> {
    const table = await this.engine.table(entry);
    const w = compileWhere(where, table);
    const col = `CAST(${ident(field)} AS DOUBLE)`;
    const [row] = await this.engine.all(
      `SELECT min(${col}) AS lo, max(${col}) AS hi FROM ${ident(table.table)} WHERE ${w.sql}`,
      w.params,
      signal,
    );
    return row && row.lo !== null && row.hi !== null ? [Number(row.lo), Number(row.hi)] : null;
  }

  async keysAtLeast(
    entry: IndexEntry,
    where: QueryNode,
    spec: CrosstabSpec,
    signal?: AbortSignal,
    opts: { thorough?: boolean } = {},
  ): Promise<KeysAtLeast> {
    if (await this.rollupWithinSample(entry, where, spec))
      return { rows: 0, outerRows: 0, columns: 0, outerColumns: 0 };
    return estimateKeys(this.engine, entry, where, spec, signal, opts);
  }

  /**
   * Whether a rollup will answer the pivot from a table no larger than the sample the estimate may read:
   * then the pivot reads no more than the estimate could, and counts its keys before it returns a cell
   * (the grouping sets' key count, the cells' limit), so the estimate would only add its own pass.
   */
  private async rollupWithinSample(entry: IndexEntry, where: QueryNode, spec: CrosstabSpec): Promise<boolean> {
    if (!entry.rollups?.length) return false;
    const table = await this.engine.table(entry);
    const rollup = matchRollup(entry, table, spec, where, new PivotPlan(table, spec, 'true'));
    const rows = rollup && table.rollups?.find((r) => r.stored === rollup.table)?.rows;
    return rows !== undefined && rows <= (table.sample?.records ?? THOROUGH_SAMPLE_RECORDS);
  }

  async pivot(
    entry: IndexEntry,
    where: QueryNode,
    spec: CrosstabSpec,
    maxCells: number,
    signal?: AbortSignal,
    restrict: PivotRestriction = {},
  ): Promise<PivotResult> {
    const table = await this.engine.table(entry);
    const w = compileWhere(where, table);
    const member = (axes: AxisSpec[], values: readonly AxisValue[] | undefined, name: string) =>
      values && axes.length
        ? [memberSql(axes[0], values, table.columnTypes, spec.timeZone, name, { shift: spec.shift })]
        : [];
    const notMember = (x: OuterExclusion | undefined, name: string) =>
      x ? [notMemberSql(x.axis, x.values, table.columnTypes, spec.timeZone, name, spec.shift)] : [];
    const kept = [
      ...member(spec.rows, restrict.rows, '__kept_rows'),
      ...member(spec.columns, restrict.columns, '__kept_columns'),
    ];
    const others = [
      ...notMember(restrict.notRows, '__other_rows'),
      ...notMember(restrict.notColumns, '__other_columns'),
      ...shiftCut(spec, table.columnTypes),
    ];
    const tests = [...kept, ...others];
    const restricted: BoundWhere = {
      sql: [w.sql, ...tests.map((t) => t.sql)].join(' AND '),
      params: Object.assign({}, w.params, ...tests.map((t) => t.params)) as BoundWhere['params'],
    };
    const scan = new PivotPlan(table, spec, restricted.sql);
    // A rollup covering the crosstab is read in place of the records, by the same SQL.
    const rollup = matchRollup(entry, table, spec, where, scan, restrict);
    const drill = this.drillFacts(table, spec);
    // Holistic totals read every level from the records: the kept keys' pass, the totals over every row
    // and column and the Other groups, each a pass of its own, are one pass over every record folded.
    if (restrict.fold && !rollup && scan.holistic && kept.length) {
      const fold: PlanFold = { keptWhere: restricted.sql };
      const flag = (axes: AxisSpec[], values: readonly AxisValue[] | undefined, name: string) =>
        values && axes.length
          ? notMemberSql(axes[0], values, table.columnTypes, spec.timeZone, name, spec.shift).sql
          : undefined;
      fold.rows = flag(spec.rows, restrict.rows, '__kept_rows');
      fold.columns = flag(spec.columns, restrict.columns, '__kept_columns');
      const everyRecord = [w.sql, ...others.map((t) => t.sql)].join(' AND ');
      const plan = new PivotPlan(table, spec, everyRecord, undefined, [], fold);
      const result = await this.pivotPlan(plan, spec, restricted, maxCells, signal);
      // Past the limit the folded groups are not the answer: the kept keys' pass counts them as before.
      if (result.groups.length) return { ...result, drill, folded: true };
    }
    // Twins need the records themselves: a pass read from a rollup leaves them to the caller's passes.
    const twins = rollup ? undefined : planTwins(restrict.twins, spec, table.columnTypes);
    const plan = rollup
      ? new PivotPlan(table, spec, restricted.sql, rollup)
      : twins
        ? new PivotPlan(table, spec, restricted.sql, undefined, twins.twins)
        : scan;
    const bound = twins ? { ...restricted, params: { ...restricted.params, ...twins.params } } : restricted;
    const result = await this.pivotPlan(plan, spec, bound, maxCells, signal);
    return { ...result, drill, ...(rollup ? { servedBy: rollup.name } : {}) };
  }

  async lastPeriod(
    entry: IndexEntry,
    where: QueryNode,
    shift: PeriodShift,
    period: CalendarGroup,
    spec: CrosstabSpec,
    signal?: AbortSignal,
  ): Promise<LastPeriod | null> {
    const table = await this.engine.table(entry);
    const w = compileWhere(where, table);
    const [stored] = await this.engine.all(lastStoredSql(table, w.sql, shift.field), w.params, signal);
    if (!stored || stored.m === null || stored.m === undefined) return null;
    const sql = lastPeriodSql(table, w.sql, shift, period, spec, String(stored.m));
    const [row] = await this.engine.all(sql, w.params, signal);
    if (!row || row.last === null || row.last === undefined) return null;
    return { last: String(row.last), key: String(row.key), safe: String(row.safe), partial: row.partial === true };
  }

  /** Which date axes are calendar dates (DATE columns): each is its own local date in any zone. */
  private drillFacts(table: LoadedTable, spec: CrosstabSpec): DrillFacts {
    const calendarDates = [...spec.rows, ...spec.columns]
      .filter((a) => a.field.type === 'date' && table.columnTypes.get(a.field.name) === 'DATE')
      .map((a) => a.field.name);
    return { calendarDates };
  }

  private async pivotPlan(
    plan: PivotPlan,
    spec: CrosstabSpec,
    w: BoundWhere,
    maxCells: number,
    signal?: AbortSignal,
  ): Promise<PivotResult> {
    const maxGroups = 2 * Math.floor(maxCells / spec.totals.length) + 1;
    const views = plan.twins.map((_, k) => plan.twinView(k));
    // Twins read in the same scan; none when the pivot is over the limit (no group comes back either).
    const read = plan.twins.length ? { twins: [] as GroupRow[][] } : {};
    if (plan.holistic) {
      const rows = await this.engine.all(plan.rawSql(maxGroups), w.params, signal);
      if (rows.length >= maxGroups) {
        // Over what a table within the limit can hold: count the keys exactly for the answer.
        const [k] = await this.engine.all(plan.rawKeysSql(), w.params, signal);
        const keys = { rows: Number(k.__nr), columns: Number(k.__nc) };
        return crosstabCells(keys, spec) > maxCells ? { keys, groups: [] } : { keys, groups: [], tooManyGroups: true };
      }
      const R = plan.rowAliases.length;
      const C = plan.colAliases.length;
      const read = fromGroupingSets(plan, rows);
      const groups = plan.fold ? foldedGroups(rows, read, { rows: R, columns: C }) : read;
      // Only the kept keys count (an Other group's key is []).
      const keys = {
        rows: groups.filter((g) => !g.columnOther && g.rowKey.length === R && g.columnKey.length === 0).length,
        columns: C ? groups.filter((g) => !g.rowOther && g.rowKey.length === 0 && g.columnKey.length === C).length : 1,
      };
      // No twin: a holistic total's twin would cost a pass of its own (planTwins).
      return { keys, groups: crosstabCells(keys, spec) > maxCells ? [] : groups };
    }
    if (plan.distinct.length === 0) {
      // Each cell holds every total: past this many cells the pivot is (blank keys merged aside) over the
      // limit, and the grouping sets path below counts it exactly without returning the cells.
      const most = Math.floor(maxCells / spec.totals.length);
      const cells = await this.cellsOf(plan, plan.cellsSql(most + 1), w.params, signal);
      // The JS roll-up is synchronous: past JS_ROLLUP_MAX_WORK (cells x levels) it would hold the thread,
      // so many levels (subtotals on deep axes) go to DuckDB, which yields and honours the deadline.
      const work = cells.length * plan.levels.length * (1 + views.length);
      if (cells.length <= most && work <= this.jsRollupMaxWork) {
        const { keys, groups } = await this.engine.turns.take(() => rollUpInJs(plan, cells));
        if (crosstabCells(keys, spec) > maxCells) return { keys, groups: [], ...read };
        if (!views.length) return { keys, groups };
        return { keys, groups, twins: await this.engine.turns.take(() => twinGroupsFromCells(views, cells)) };
      }
    }
    if (this.jsRollupMaxWork > 0 && plan.distinctInJs(JS_DISTINCT_MAX_WORK)) {
      // A rollup bounds the values its cells list: the distinct counts roll up here as the partials do.
      const most = Math.floor(maxCells / spec.totals.length);
      const cells = await this.cellsOf(plan, distinctCellsSql(plan, most + 1), w.params, signal);
      const split = cells.some((c) => plan.distinct.some((d) => c[separatorFlag(d.alias)] === true));
      const work = cells.length * plan.levels.length;
      const bits =
        cells.length <= most && work <= this.jsRollupMaxWork && !split
          ? DistinctBits.of(
              cells,
              plan.distinct.map((d) => d.alias),
              work,
            )
          : undefined;
      if (bits) {
        const { keys, groups } = await this.engine.turns.take(() => rollUpInJs(plan, cells, bits));
        return crosstabCells(keys, spec) > maxCells ? { keys, groups: [] } : { keys, groups };
      }
    }
    // Subtotals add groups beyond the cells; a table within the limit has at most twice the limit's groups
    // (its cells, then subtotals and totals, each a shown cell, and the few outer totals value order needs).
    const rows = await this.engine.all(plan.rollupSql(maxGroups), { ...w.params, max_cells: maxCells }, signal);
    return this.fromRollup(plan, spec, rows, maxCells, maxGroups);
  }

  private fromRollup(
    plan: PivotPlan,
    spec: CrosstabSpec,
    rows: Row[],
    maxCells: number,
    maxGroups: number,
  ): PivotResult {
    const keys = rows.length
      ? { rows: Number(rows[0].__nr), columns: Number(rows[0].__nc) }
      : { rows: 0, columns: plan.colAliases.length ? 0 : 1 };
    const read = plan.twins.length ? { twins: [] as GroupRow[][] } : {};
    if (rows.length >= maxGroups) return { keys, groups: [], tooManyGroups: true, ...read };
    if (crosstabCells(keys, spec) > maxCells) return { keys, groups: [], ...read };
    const twins = plan.twins.map((_, k) => plan.twinView(k));
    return {
      keys,
      groups: fromGroupingSets(plan, rows),
      ...(twins.length ? { twins: twinGroupsFromSets(twins, rows) } : {}),
    };
  }
}

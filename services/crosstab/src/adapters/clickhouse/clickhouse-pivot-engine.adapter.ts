import type { CalendarGroup } from '@quarry/contract';
import type { IndexEntry } from '@quarry/metadata-store';
import type { QueryNode } from '@quarry/query-language';
import type { AxisValue, GroupRow } from '../../domain/axis-value';
import type { LastPeriod, PeriodShift } from '../../domain/period-shift';
import { crosstabCells, type AxisSpec, type CrosstabSpec } from '../../domain/crosstab-spec';
import type {
  KeysAtLeast,
  OuterExclusion,
  PivotEngine,
  PivotResult,
  PivotRestriction,
} from '../../ports/pivot-engine.port';
import { KEY_SAMPLE_RECORDS, THOROUGH_SAMPLE_RECORDS } from '../pivot/pivot-key-estimate';
import { toGroups } from './clickhouse-groups';
import { ClickHousePivotPlan } from './clickhouse-pivot-plan';
import { chLastLocalSql, chLastPeriodSql, chLastStoredSql, chShiftCut } from './clickhouse-pivot-shift';
import { chMemberSql, chNotMemberSql, chRecordKey } from './clickhouse-pivot-sql';
import {
  clickHouseErrorCode,
  PIVOT_SETTINGS,
  TOO_MANY_ROWS,
  type ClickHouseRunner,
  type ClickHouseSource,
} from './clickhouse-runner';
import { chIdent, compileClickHouse, isCalendarDate, type ClickHouseWhere } from './compile-clickhouse';

/**
 * The PivotEngine on ClickHouse (docs/scaling.md): one GROUPING SETS statement per pivot over the
 * version's records, in-process through chDB or on a server or cluster. Everything above the port (cell
 * limit, outer keys chosen first, showAs, sorting, rendering, drill queries) is the domain's, unchanged.
 */
export class ClickHousePivotEngine implements PivotEngine {
  readonly engineName = 'clickhouse';

  constructor(private readonly runner: ClickHouseRunner) {}

  forget(name: string): void {
    this.runner.forget(name);
  }

  close(): Promise<void> {
    return this.runner.close();
  }

  private async where(entry: IndexEntry, where: QueryNode): Promise<ClickHouseSource & { w: ClickHouseWhere }> {
    const source = await this.runner.source(entry);
    return { ...source, w: compileClickHouse(where, source.columnTypes) };
  }

  async fieldRange(
    entry: IndexEntry,
    where: QueryNode,
    field: string,
    signal?: AbortSignal,
  ): Promise<[number, number] | null> {
    const { from, w } = await this.where(entry, where);
    const col = `toFloat64(${chIdent(field)})`;
    const [row] = await this.runner.rows(
      `SELECT minOrNull(${col}) AS lo, maxOrNull(${col}) AS hi FROM ${from} WHERE ${w.sql}`,
      w.params,
      PIVOT_SETTINGS,
      signal,
    );
    return row && row.lo !== null && row.hi !== null ? [Number(row.lo), Number(row.hi)] : null;
  }

  /**
   * Lower bounds from a subset of KEY_SAMPLE_RECORDS records (THOROUGH_SAMPLE_RECORDS when thorough)
   * spread evenly over the version: every k-th record where it is stored, so a file sorted by an axis's
   * key shows its keys from end to end (its first records might hold one key). Filtered, their keys
   * counted exactly with uniqExact: every key of a subset is a key of the index, so the bound never
   * exceeds what the pivot finds; `uniq` (approximate) could. The runner says how the subset is read
   * (chDB keeps the first level in memory; a server reads it from the table's parts).
   */
  async keysAtLeast(
    entry: IndexEntry,
    where: QueryNode,
    spec: CrosstabSpec,
    signal?: AbortSignal,
    opts: { thorough?: boolean } = {},
  ): Promise<KeysAtLeast> {
    if (entry.recordCount <= KEY_SAMPLE_RECORDS) return { rows: 0, outerRows: 0, columns: 0, outerColumns: 0 };
    const { columnTypes, w } = await this.where(entry, where);
    const sampled = opts.thorough ? THOROUGH_SAMPLE_RECORDS : KEY_SAMPLE_RECORDS;
    const every = Math.max(1, Math.floor(entry.recordCount / sampled));
    // The first level is kept where the runner can (read by every estimate); the thorough one is not.
    const subset = await this.runner.subset(entry, every, !opts.thorough);
    const key = (a: AxisSpec, alias: string) => `${chRecordKey(a, columnTypes, spec.timeZone)} AS ${alias}`;
    const rows = spec.rows.map((_, i) => `__r${i}`);
    const cols = spec.columns.map((_, i) => `__c${i}`);
    const keys = [...spec.rows.map((a, i) => key(a, rows[i])), ...spec.columns.map((a, i) => key(a, cols[i]))];
    // A tuple of two or more is never null (of one it is its value): a blank key counts as one key, as the pivot groups it.
    const distinct = (aliases: string[]) => (aliases.length ? `uniqExact(tuple(${aliases.join(', ')}, 0))` : '1');
    const [row] = await this.runner.rows(
      `SELECT ${distinct(rows)} AS nr, ${distinct(rows.slice(0, 1))} AS nor, ${distinct(cols)} AS nc, ${distinct(cols.slice(0, 1))} AS noc, count() AS kept
FROM (SELECT ${keys.length ? keys.join(', ') : '1 AS __one'} FROM ${subset} WHERE ${w.sql})`,
      w.params,
      PIVOT_SETTINGS,
      signal,
    );
    return {
      rows: Number(row.nr),
      outerRows: Number(row.nor),
      columns: Number(row.nc),
      outerColumns: Number(row.noc),
      moreToSee: !opts.thorough && every > 1 && Number(row.kept) < sampled / 4,
    };
  }

  /**
   * The last period of a period comparison, as the DuckDB adapter finds it (pivot-shift.ts): the largest
   * stored time, the last record's local time from the records near it, then that period's key, the
   * stored time before which no record can shift into it, and whether its comparison is cut.
   */
  async lastPeriod(
    entry: IndexEntry,
    where: QueryNode,
    shift: PeriodShift,
    period: CalendarGroup,
    spec: CrosstabSpec,
    signal?: AbortSignal,
  ): Promise<LastPeriod | null> {
    const { from, columnTypes, w } = await this.where(entry, where);
    const run = async (sql: string, params: ClickHouseWhere['params']) =>
      (await this.runner.rows(sql, { ...w.params, ...params }, PIVOT_SETTINGS, signal))[0];
    const stored = await run(chLastStoredSql(from, w.sql, shift.field), {});
    if (!stored || stored.m === null || stored.m === undefined) return null;
    const near = { __last_stored: String(stored.m) };
    const lastLocal = await run(chLastLocalSql(from, w.sql, shift.field, columnTypes, spec.timeZone), near);
    if (!lastLocal || lastLocal.last === null || lastLocal.last === undefined) return null;
    const last = String(lastLocal.last);
    const row = await run(chLastPeriodSql(from, w.sql, shift, period, spec, columnTypes), {
      ...near,
      __last_local: last,
    });
    return { last, key: String(row.key), safe: String(row.safe), partial: Number(row.partial) === 1 };
  }

  async pivot(
    entry: IndexEntry,
    where: QueryNode,
    spec: CrosstabSpec,
    maxCells: number,
    signal?: AbortSignal,
    restrict: PivotRestriction = {},
  ): Promise<PivotResult> {
    const { from, columnTypes, w } = await this.where(entry, where);
    const member = (axes: AxisSpec[], values: readonly AxisValue[] | undefined, name: string) =>
      values && axes.length ? [chMemberSql(axes[0], values, columnTypes, spec.timeZone, name, spec.shift)] : [];
    const notMember = (x: OuterExclusion | undefined, name: string) =>
      x ? [chNotMemberSql(x.axis, x.values, columnTypes, spec.timeZone, name, spec.shift)] : [];
    const tests = [
      ...member(spec.rows, restrict.rows, '__kept_rows'),
      ...member(spec.columns, restrict.columns, '__kept_columns'),
      ...notMember(restrict.notRows, '__other_rows'),
      ...notMember(restrict.notColumns, '__other_columns'),
      ...chShiftCut(spec, columnTypes),
    ];
    const sql = [w.sql, ...tests.map((t) => t.sql)].join(' AND ');
    const params = Object.assign({}, w.params, ...tests.map((t) => t.params)) as ClickHouseWhere['params'];
    const plan = new ClickHousePivotPlan(from, columnTypes, spec, sql);
    const calendarDates = [...spec.rows, ...spec.columns]
      .filter((a) => a.field.type === 'date' && isCalendarDate(columnTypes.get(a.field.name)))
      .map((a) => a.field.name);
    // A table within the limit has at most twice the limit's groups (cells, then subtotals and totals).
    const maxGroups = 2 * Math.floor(maxCells / spec.totals.length) + 1;
    let rows;
    try {
      rows = await this.runner.rows(
        plan.groupsSql(maxGroups),
        params,
        // Never more groups in memory than a table within the limit can hold: past it the statement stops.
        { ...PIVOT_SETTINGS, max_rows_to_group_by: maxGroups, group_by_overflow_mode: 'throw' },
        signal,
      );
    } catch (err) {
      if (clickHouseErrorCode(err) !== TOO_MANY_ROWS) throw err;
      rows = undefined;
    }
    if (!rows || rows.length >= maxGroups) {
      // Over what a table within the limit can hold: count the keys exactly for the answer.
      const [k] = await this.runner.rows(plan.keysSql(), params, PIVOT_SETTINGS, signal);
      const keys = { rows: Number(k.nr), columns: Number(k.nc) };
      const over = crosstabCells(keys, spec) > maxCells;
      return over
        ? { keys, groups: [], drill: { calendarDates } }
        : { keys, groups: [], tooManyGroups: true, drill: { calendarDates } };
    }
    const groups: GroupRow[] = toGroups(plan, rows);
    const R = plan.rowAliases.length;
    const C = plan.colAliases.length;
    const keys = {
      rows: groups.filter((g) => g.rowKey.length === R && g.columnKey.length === 0).length,
      columns: C ? groups.filter((g) => g.rowKey.length === 0 && g.columnKey.length === C).length : 1,
    };
    return { keys, groups: crosstabCells(keys, spec) > maxCells ? [] : groups, drill: { calendarDates } };
  }
}

import { pivotLevels, type AxisSpec, type CrosstabSpec, type TotalSpec } from '../../domain/crosstab-spec';
import type { FieldDef } from '@quarry/query-language';
import { chIdent } from './compile-clickhouse';
import { chAxisLabel, chRecordKey } from './clickhouse-pivot-sql';

/** How one total's value follows from the columns the statement returns for it. */
export interface ClickHouseTotal {
  /** Column expressions (aggregates), each selected as `__t<i>_<j>`. */
  aggregates: string[];
  value: (cols: readonly unknown[]) => number | null;
  /** The value of a group without records (the grand total of a filter that matches nothing). */
  empty: number | null;
}

const num = (v: unknown) => (v === null || v === undefined ? null : Number(v));

/**
 * A ClickHouse value column of `f`: what the aggregate reads. Blank text is no value (counted like null).
 */
const measured = (f: FieldDef) => (f.type === 'string' ? `nullIf(${chIdent(f.name)}, '')` : chIdent(f.name));

/**
 * One total as ClickHouse aggregates (docs/scaling.md's translation): integers summed in Int128, never in
 * Int64 (which wraps) or Float64 (which rounds past 2^53); doubles by Kahan summation, as DuckDB's fsum;
 * medians and percentiles by quantileExactInclusive, DuckDB's quantile_cont; distinct counts by
 * uniqExact. Each level reads its own records, so no total is made of other groups' values.
 */
export function chTotal(t: TotalSpec): ClickHouseTotal {
  if (!t.aggregation) return { aggregates: [], value: () => null, empty: null };
  if (t.distinctOf) return { aggregates: [`uniqExact(${measured(t.distinctOf)})`], value: (c) => num(c[0]), empty: 0 };
  if (!t.field) return { aggregates: ['count()'], value: (c) => num(c[0]), empty: 0 };
  const v = measured(t.field);
  const integer = t.field.type === 'integer';
  const sum = integer ? `sumOrNull(toInt128(${v}))` : `sumKahanOrNull(toFloat64(${v}))`;
  switch (t.aggregation) {
    case 'Count':
    case 'CountDistinct':
      return { aggregates: [`count(${v})`], value: (c) => num(c[0]), empty: 0 };
    case 'Sum':
      // Int128 comes as text: Number() rounds it once to the nearest double, as DuckDB's HUGEINT does.
      return { aggregates: [sum], value: (c) => num(c[0]), empty: null };
    case 'Average':
      return {
        aggregates: [sum, `count(${v})`],
        value: (c) => (Number(c[1] ?? 0) > 0 ? Number(c[0]) / Number(c[1]) : null),
        empty: null,
      };
    case 'Min':
      return { aggregates: [`toFloat64(minOrNull(${v}))`], value: (c) => num(c[0]), empty: null };
    case 'Max':
      return { aggregates: [`toFloat64(maxOrNull(${v}))`], value: (c) => num(c[0]), empty: null };
    case 'Median':
      return { aggregates: [`quantileExactInclusiveOrNull(0.5)(${v})`], value: (c) => num(c[0]), empty: null };
    case 'Percentile':
      return {
        aggregates: [`quantileExactInclusiveOrNull(${(t.percentile ?? 50) / 100})(${v})`],
        value: (c) => num(c[0]),
        empty: null,
      };
    case 'StdDev':
      // A sample deviation of one value is undefined: NULL as in DuckDB, where ClickHouse gives nan.
      return {
        aggregates: [`if(count(${v}) > 1, stddevSampStable(${v}), NULL)`],
        value: (c) => num(c[0]),
        empty: null,
      };
  }
}

/**
 * The pivot as one ClickHouse statement: the filtered records grouped by every level the spec needs in
 * one GROUPING SETS pass (with group_by_use_nulls, a rolled-up key is NULL and GROUPING() tells it from a
 * blank key), every total read from each level's own records.
 */
export class ClickHousePivotPlan {
  readonly axes: AxisSpec[];
  readonly rowAliases: string[];
  readonly colAliases: string[];
  readonly levels: Array<[number, number]>;
  readonly totals: ClickHouseTotal[];

  constructor(
    private readonly from: string,
    private readonly columnTypes: ReadonlyMap<string, string>,
    readonly spec: CrosstabSpec,
    private readonly where: string,
  ) {
    this.axes = [...spec.rows, ...spec.columns];
    this.rowAliases = spec.rows.map((_, i) => `__r${i}`);
    this.colAliases = spec.columns.map((_, i) => `__c${i}`);
    this.levels = pivotLevels(spec);
    this.totals = spec.totals.map(chTotal);
  }

  private get aliases(): string[] {
    return [...this.rowAliases, ...this.colAliases];
  }

  /** The aliases of each total's columns, in the statement's order. */
  totalColumns(): string[][] {
    return this.totals.map((t, i) => t.aggregates.map((_, j) => `__t${i}_${j}`));
  }

  private keyed(): string {
    const keys = this.axes.map(
      (a, i) => `${chRecordKey(a, this.columnTypes, this.spec.timeZone, this.spec.shift)} AS ${this.aliases[i]}`,
    );
    return `SELECT ${keys.length ? keys.join(', ') : '1 AS __one'}, * FROM ${this.from} WHERE ${this.where}`;
  }

  /** Every group of every level, at most `maxGroups` of them. */
  groupsSql(maxGroups: number): string {
    const aliases = this.aliases;
    const columns = this.totalColumns();
    const aggregates = this.totals.flatMap((t, i) => t.aggregates.map((sql, j) => `${sql} AS ${columns[i][j]}`));
    const labelled = this.axes.map((a, i) => `${chAxisLabel(a, aliases[i])} AS ${aliases[i]}`);
    const outer = [...labelled, 'gid', ...columns.flat()];
    if (!aliases.length) return `SELECT ${['0 AS gid', ...aggregates].join(', ')} FROM (${this.keyed()})`;
    const sets = this.levels
      .map(([r, c]) => `(${[...this.rowAliases.slice(0, r), ...this.colAliases.slice(0, c)].join(', ')})`)
      .join(', ');
    return `SELECT ${outer.join(', ')}
FROM (SELECT ${aliases.join(', ')}, GROUPING(${aliases.join(', ')}) AS gid${aggregates.length ? `, ${aggregates.join(', ')}` : ''}
  FROM (${this.keyed()})
  GROUP BY GROUPING SETS (${sets})
  LIMIT ${maxGroups})`;
  }

  /** The row and column key counts, exactly, for an answer that stopped at maxGroups. */
  keysSql(): string {
    const count = (cols: string[]) => (cols.length ? `uniqExact(tuple(${cols.join(', ')}, 0))` : '1');
    return `SELECT ${count(this.rowAliases)} AS nr, ${count(this.colAliases)} AS nc FROM (${this.keyed()})`;
  }
}

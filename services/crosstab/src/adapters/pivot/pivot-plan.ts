import { type FieldDef } from '@quarry/query-language';
import { ident, type LoadedTable } from '@quarry/snapshots';
import { pivotLevels, type AxisSpec, type CrosstabSpec, type TotalSpec } from '../../domain/crosstab-spec';
import { HOLISTIC, type Acc, type PartialKind } from './pivot-partials';
import { axisLabel, groupedKey } from './pivot-sql';
import { movedAlias, twinAlias, TWIN_COUNT, type PlanTwin, type TwinView } from './pivot-twin';
import { foldColumns, foldedKey, foldedSet, foldFlags, type PlanFold } from './pivot-fold';

/**
 * How a column's values are added up. Integers: DuckDB's sum, exact in HUGEINT. Doubles: Kahan-Babuska
 * summation (fsum), because a plain sum of doubles depends on the order DuckDB's threads add them
 * in; the compensated sum's error does not grow with the number of values, so it is nearer the exact
 * sum and the order shows far less often (two calls can still differ in the last bit now and then).
 */
function sumOf(field: { type: string }): 'sum' | 'fsum' {
  return field.type === 'number' ? 'fsum' : 'sum';
}

/** Where a pivot's pre-aggregate reads: a rollup's table, each partial aggregate re-added from its columns. */
export interface RollupSource {
  name: string;
  /** The rollup's table, as SQL. */
  table: string;
  /** The SQL of each partial the plan needs over the records, as the same partial over the rollup. */
  partials: ReadonlyMap<string, string>;
  /** Each rollup row is one group of the pre-aggregate: read as it is, `partials` naming its columns. */
  oneGroupPerRow?: true;
  /** Rows of the rollup's table: at most this many (cell, value) pairs for a distinct count. */
  rows?: number;
}

/** The grouping id and GROUP BY of a pivot's levels; without any axis, one group (gid 0) of every record. */
function grouping(aliases: string[], sets: string): { gid: string; groupBy: string } {
  if (aliases.length === 0) return { gid: '0 AS gid', groupBy: '' };
  return { gid: `GROUPING(${aliases.join(', ')}) AS gid`, groupBy: `GROUP BY GROUPING SETS (${sets})` };
}

/**
 * What the pivot needs from each filtered record, shared by both ways of finishing it: the grouped keys,
 * the fields of dynamic views (distinct counts), and partial aggregates from which every total follows
 * (Sum, Count, Min and Max of the partials; Average as their sum over their count).
 */
export class PivotPlan {
  readonly axes: AxisSpec[];
  readonly rowAliases: string[];
  readonly colAliases: string[];
  /** (row depth, column depth) of every level the pivot computes (see pivotLevels). */
  readonly levels: Array<[number, number]>;
  readonly partials: Array<{ sql: string; alias: string; kind: PartialKind }> = [];
  readonly distinct: Array<{ alias: string; field: FieldDef }> = [];
  /** Per total: how its value follows from the partials (cells path) and its roll-up SQL (grouping sets path). */
  readonly totals: Array<{
    value: (acc: readonly Acc[], distinct?: readonly number[]) => number | null;
    rollup: string;
  }>;
  /** Each total's roll-up SQL over a twin's partials (see pivot-twin), by twin. */
  private readonly twinRollups: Array<(k: number) => string>;

  constructor(
    private readonly table: LoadedTable,
    readonly spec: CrosstabSpec,
    private readonly where: string,
    /** A rollup the pre-aggregate reads instead of the records (rollup-match). */
    private readonly source?: RollupSource,
    /** Subsets of the records whose groups are read in the same scan (none with a rollup source). */
    readonly twins: readonly PlanTwin[] = [],
    /** Outer keys read as one Other row or column (pivot-fold): the raw path only. */
    readonly fold?: PlanFold,
  ) {
    if (source && twins.length) throw new Error('a pivot read from a rollup has no twins');
    this.axes = [...spec.rows, ...spec.columns];
    this.rowAliases = spec.rows.map((_, i) => `__r${i}`);
    this.colAliases = spec.columns.map((_, i) => `__c${i}`);
    this.levels = pivotLevels(spec);
    const made = spec.totals.map((t) => this.total(t));
    this.totals = made.map((t) => ({ value: t.value, rollup: t.rollup((i) => this.partials[i].alias, '') }));
    this.twinRollups = made.map(
      (t) => (k) => t.rollup((i) => twinAlias(this.partials[i].alias, k), ` FILTER (WHERE ${TWIN_COUNT(k)} > 0)`),
    );
    this.holistic = spec.totals.some((t) => t.aggregation && HOLISTIC.has(t.aggregation));
  }

  /** A median, percentile or standard deviation: no partial adds up to them, every level reads its records. */
  readonly holistic: boolean;

  private partial(kind: PartialKind, sql: string): number {
    const at = this.partials.findIndex((p) => p.sql === sql);
    if (at >= 0) return at;
    this.partials.push({ sql, alias: `__m${this.partials.length}`, kind });
    return this.partials.length - 1;
  }

  /**
   * A total's value from the partials, and its roll-up SQL given the partials' aliases and a filter on
   * the distinct values counted (a twin counts those its records hold).
   */
  private total(t: TotalSpec): {
    value: (acc: readonly Acc[], distinct?: readonly number[]) => number | null;
    rollup: (alias: (i: number) => string, distinctFilter: string) => string;
  } {
    const num = (v: Acc) => (v === null ? null : Number(v));
    const none = { value: () => null, rollup: () => 'NULL' };
    // Calculated totals are evaluated from the others once every level is known (applyFormulas).
    if (!t.aggregation) return none;
    // Only the raw path (rawSql) computes these.
    if (HOLISTIC.has(t.aggregation)) return none;
    if (t.distinctOf) {
      const field = t.distinctOf;
      let k = this.distinct.findIndex((x) => x.field.name === field.name);
      if (k < 0) {
        k = this.distinct.length;
        this.distinct.push({ alias: `__d${k}`, field });
      }
      const counted = field.type === 'string' ? `nullif(__d${k}, '')` : `__d${k}`;
      // The JS roll-up counts the values its cells listed (distinctCellsSql); the grouping sets count in SQL.
      return {
        value: (_, distinct) => distinct?.[k] ?? null,
        rollup: (_, filter) => `count(DISTINCT ${counted})${filter}`,
      };
    }
    if (!t.field || t.aggregation === 'Count') {
      const col = t.field ? ident(t.field.name) : '';
      const i = this.partial(
        'count',
        !t.field ? 'count(*)' : t.field.type === 'string' ? `count(nullif(${col}, ''))` : `count(${col})`,
      );
      return { value: (acc) => Number(acc[i] ?? 0), rollup: (alias) => `coalesce(sum(${alias(i)}), 0)` };
    }
    const col = ident(t.field.name);
    const sum = sumOf(t.field);
    switch (t.aggregation) {
      case 'Sum': {
        const i = this.partial('sum', `${sum}(${col})`);
        // No cast to DOUBLE in SQL: DuckDB's HUGEINT to DOUBLE is not correctly rounded (an integer sum
        // near 2^54 came back 2 off); the driver's bigint becomes the nearest double in JS.
        return { value: (acc) => num(acc[i]), rollup: (alias) => `${sum}(${alias(i)})` };
      }
      case 'Average': {
        const s = this.partial('sum', `${sum}(${col})`);
        const n = this.partial('count', `count(${col})`);
        return {
          value: (acc) => (Number(acc[n] ?? 0) > 0 ? Number(acc[s]) / Number(acc[n]) : null),
          rollup: (alias) => `CAST(${sum}(${alias(s)}) AS DOUBLE) / nullif(sum(${alias(n)}), 0)`,
        };
      }
      case 'Min':
      case 'Max': {
        const kind = t.aggregation === 'Min' ? 'min' : 'max';
        const i = this.partial(kind, `${kind}(${col})`);
        return { value: (acc) => num(acc[i]), rollup: (alias) => `CAST(${kind}(${alias(i)}) AS DOUBLE)` };
      }
      default:
        // CountDistinct has distinctOf (above); the holistic ones returned first.
        return none;
    }
  }

  /**
   * The filtered records pre-aggregated at the finest grain the pivot needs: row keys × column keys
   * (× the values of each dynamic view's field). One scan; only the columns used are read.
   */
  preAggregate(): string {
    const aliases = [...this.rowAliases, ...this.colAliases];
    const grain = [
      ...this.axes.map(
        (a, i) => `${groupedKey(a, this.table.columnTypes, this.spec.timeZone, this.spec.shift)} AS ${aliases[i]}`,
      ),
      ...this.distinct.map((d) => `${ident(d.field.name)} AS ${d.alias}`),
    ];
    const partial = (sql: string) => this.source?.partials.get(sql) ?? sql;
    // Each twin's partials over its records alone, in the same groups (one scan for both). Each record's
    // flag is computed once, beside its columns: a FILTER written out per aggregate cost a test each.
    const twins = this.twins.flatMap((_, k) => [
      ...this.partials.map((p) => `${p.sql} FILTER (WHERE __w${k}) AS ${twinAlias(p.alias, k)}`),
      `count(*) FILTER (WHERE __w${k}) AS ${TWIN_COUNT(k)}`,
    ]);
    const select = [...grain, ...this.partials.map((p) => `${partial(p.sql)} AS ${p.alias}`), ...twins];
    // No axis (an Other pass of a crosstab whose only row axis is left out): one group of every record.
    // A rollup whose rows are already the pivot's groups is read as it is; twins read the records.
    const groupBy =
      grain.length && !this.source?.oneGroupPerRow ? ` GROUP BY ${grain.map((_, i) => i + 1).join(', ')}` : '';
    const flags = this.twins.map((tw, k) => `${tw.sql} AS __w${k}`);
    const from = flags.length
      ? `(SELECT *, ${flags.join(', ')} FROM ${ident(this.table.table)} WHERE ${this.where})`
      : `${this.source?.table ?? ident(this.table.table)} WHERE ${this.where}`;
    return `SELECT ${select.join(', ')} FROM ${from}${groupBy}`;
  }

  labelled(): string[] {
    const aliases = [...this.rowAliases, ...this.colAliases];
    return [
      ...this.axes.map((a, i) => `${axisLabel(a, aliases[i], this.spec.shift)} AS ${aliases[i]}`),
      ...this.movedLabels(),
    ];
  }

  /** The keys a twin moves (a compared period's), labelled as moved: grouped with their own key, one to one. */
  private movedLabels(): string[] {
    const aliases = [...this.rowAliases, ...this.colAliases];
    return this.twins.flatMap((tw, k) => {
      const moved = tw.moved;
      if (!moved) return [];
      return this.axes.flatMap((a, i) =>
        a.field.name === moved.field
          ? [`${axisLabel(a, aliases[i], { ...moved, onKeys: true })} AS ${movedAlias(aliases[i], k)}`]
          : [],
      );
    });
  }

  /** The aliases of the moved keys beside an axis alias (grouped with it). */
  private movedWith(alias: string): string[] {
    const at = [...this.rowAliases, ...this.colAliases].indexOf(alias);
    return this.twins.flatMap((tw, k) =>
      tw.moved && this.axes[at].field.name === tw.moved.field ? [movedAlias(alias, k)] : [],
    );
  }

  /** The twin carried in the partials' columns as the roll-up reads groups (aliases of moved keys and partials). */
  twinView(k: number): TwinView {
    const moved = this.twins[k].moved;
    const swap = (alias: string, i: number) =>
      moved && this.axes[i].field.name === moved.field ? movedAlias(alias, k) : alias;
    const R = this.rowAliases.length;
    return {
      axes: this.axes,
      levels: this.levels,
      rowAliases: this.rowAliases.map((a, i) => swap(a, i)),
      colAliases: this.colAliases.map((a, i) => swap(a, R + i)),
      partials: this.partials.map((p) => ({ alias: twinAlias(p.alias, k), kind: p.kind })),
      totals: this.totals,
      count: TWIN_COUNT(k),
      computes: (i) => this.twins[k].totals.has(i),
    };
  }

  /** Every twin's totals by total and its record count, as roll-up SQL (grouping sets path). */
  private twinTotalsSql(): string[] {
    return this.twins.flatMap((tw, k) => [
      ...this.totals.map(
        (_, i) => `${tw.totals.has(i) ? this.twinRollups[i](k) : 'NULL'} AS ${twinAlias(`__t${i}`, k)}`,
      ),
      `coalesce(sum(${TWIN_COUNT(k)}), 0) AS ${TWIN_COUNT(k)}`,
    ]);
  }

  /** A level's grouping set: its keys and the moved keys beside them. */
  private groupingSet(r: number, c: number): string {
    const cols = [...this.rowAliases.slice(0, r), ...this.colAliases.slice(0, c)];
    return `(${cols.flatMap((a) => [a, ...this.movedWith(a)]).join(', ')})`;
  }

  /**
   * Every total straight from the filtered records at each level by grouping sets: for medians,
   * percentiles and standard deviations, which no partial sums to. Keys are counted first, as in
   * rollupSql; blank text is merged with null per record.
   */
  rawSql(maxGroups: number): string {
    const aliases = [...this.rowAliases, ...this.colAliases];
    const types = this.table.columnTypes;
    const fold = this.fold;
    const keys = this.axes.map((a, i) => {
      const key = groupedKey(a, types, this.spec.timeZone, this.spec.shift);
      const merged = a.field.type === 'string' && !a.bin && !a.dateGroup ? `nullif(${key}, '')` : key;
      return `${foldedKey(fold, i < this.rowAliases.length, merged)} AS ${aliases[i]}`;
    });
    const measured = new Map<string, string>();
    const column = (f: FieldDef) => {
      let alias = measured.get(f.name);
      if (!alias) {
        alias = `__v${measured.size}`;
        measured.set(f.name, alias);
      }
      return alias;
    };
    const aggregates = this.spec.totals.map((t) => {
      if (!t.aggregation) return 'NULL';
      if (t.distinctOf) {
        const v = column(t.distinctOf);
        return `count(DISTINCT ${t.distinctOf.type === 'string' ? `nullif(${v}, '')` : v})`;
      }
      if (!t.field) return 'count(*)';
      const v = column(t.field);
      // No cast to DOUBLE per record: quantile_cont, avg and stddev_samp of integers are doubles already,
      // and a cast of every record is what a scan can least afford.
      const num = v;
      switch (t.aggregation) {
        case 'Count':
        case 'CountDistinct':
          return t.field.type === 'string' ? `count(nullif(${v}, ''))` : `count(${v})`;
        case 'Sum':
          return `${sumOf(t.field)}(${v})`;
        case 'Average':
          // Compensated sum over count, as the roll-up path divides (favg rounds differently).
          return t.field.type === 'number' ? `fsum(${num}) / nullif(count(${num}), 0)` : `avg(${num})`;
        case 'Min':
          return `CAST(min(${v}) AS DOUBLE)`;
        case 'Max':
          return `CAST(max(${v}) AS DOUBLE)`;
        case 'Median':
          return `quantile_cont(${num}, 0.5)`;
        case 'Percentile':
          return `quantile_cont(${num}, ${(t.percentile ?? 50) / 100})`;
        case 'StdDev':
          return `stddev_samp(${num})`;
      }
    });
    const carried = [...measured].map(([name, alias]) => `${ident(name)} AS ${alias}`);
    const sets = this.levels
      .map(
        ([r, c]) =>
          `(${[...foldedSet(fold, r, c), ...this.rowAliases.slice(0, r), ...this.colAliases.slice(0, c)].join(', ')})`,
      )
      .join(', ');
    const labelled = this.axes.map((a, i) => `${axisLabel(a, aliases[i], this.spec.shift)} AS ${aliases[i]}`);
    // One pass, streamed: the keys are counted from the groups that come back (at most maxGroups), as a
    // hand-written GROUPING SETS query would run; materialising the records first cost 2.5x (bench).
    // A fold's flags are computed once per record, beside its columns, and its keys read them.
    const flags = foldColumns(fold);
    const records = fold
      ? `(SELECT *, ${foldFlags(fold).join(', ')} FROM ${ident(this.table.table)} WHERE ${this.where})`
      : `${ident(this.table.table)} WHERE ${this.where}`;
    const source = `SELECT ${[...keys, ...flags, ...carried].join(', ')} FROM ${records}`;
    const g = grouping(aliases, sets);
    return `SELECT ${[...labelled, ...flags, 'gid', ...aggregates.map((_, i) => `__t${i}`)].join(', ')}
FROM (SELECT ${[...aliases, ...flags, g.gid, ...aggregates.map((sql, i) => `${sql} AS __t${i}`)].join(', ')}
  FROM (${source})
  ${g.groupBy}
  LIMIT ${maxGroups})`;
  }

  /** The row and column key counts of the raw path, for an answer that stopped at maxGroups. */
  rawKeysSql(): string {
    const keys = this.axes.map((a, i) => {
      const key = groupedKey(a, this.table.columnTypes, this.spec.timeZone, this.spec.shift);
      const alias = [...this.rowAliases, ...this.colAliases][i];
      return `${a.field.type === 'string' && !a.bin && !a.dateGroup ? `nullif(${key}, '')` : key} AS ${alias}`;
    });
    const distinctCount = (cols: string[]) =>
      cols.length ? `(SELECT count(*) FROM (SELECT DISTINCT ${cols.join(', ')} FROM x))` : '1';
    const where = this.fold?.keptWhere ?? this.where;
    return `WITH x AS MATERIALIZED (SELECT ${keys.join(', ')} FROM ${ident(this.table.table)} WHERE ${where})
SELECT ${distinctCount(this.rowAliases)} AS __nr, ${distinctCount(this.colAliases)} AS __nc`;
  }

  /**
   * Without dynamic views the pre-aggregate is the cells themselves: at most `limit` of them come back,
   * in key order. The roll-up adds doubles in the order the cells arrive, and a hash aggregate's order
   * varies from call to call: in a fixed order the same question gives the same last digit every time.
   */
  cellsSql(limit: number): string {
    const order = this.axes.length ? ` ORDER BY ${this.axes.map((_, i) => i + 1).join(', ')}` : '';
    const twins = this.twins.flatMap((_, k) => [...this.partials.map((p) => twinAlias(p.alias, k)), TWIN_COUNT(k)]);
    return `SELECT ${[...this.labelled(), ...this.partials.map((p) => p.alias), ...twins].join(', ')} FROM (${this.preAggregate()})${order} LIMIT ${limit}`;
  }

  /** Whether the pre-aggregate reads a rollup rather than the records. */
  get readsRollup(): boolean {
    return this.source !== undefined;
  }

  /**
   * Whether the cells can carry their distinct values to the JS roll-up: only from a rollup, whose rows
   * bound how many values come back, within `maxWork` additions, and for text fields (equal texts are
   * equal values; a number's text is not one-to-one with its value).
   */
  distinctInJs(maxWork: number): boolean {
    const rows = this.source?.rows;
    return (
      this.distinct.length > 0 &&
      rows !== undefined &&
      rows * this.levels.length * this.distinct.length <= maxWork &&
      this.distinct.every((d) => d.field.type === 'string')
    );
  }

  /**
   * With dynamic views the totals are rolled up in SQL from the materialised pre-aggregate by grouping
   * sets, a distinct count as the distinct values of its rows at that level (never a sum of distinct
   * counts). `k` counts the keys first; over the cell limit the roll-up reads nothing and only the
   * counts come back. The materialised CTE measured 2-12% faster than the same plan through a temporary
   * table (bench/README.md), and it is one statement.
   */
  rollupSql(maxGroups: number): string {
    const aliases = [...this.rowAliases, ...this.colAliases];
    const distinctCount = (cols: string[]) =>
      cols.length ? `(SELECT count(*) FROM (SELECT DISTINCT ${cols.join(', ')} FROM x))` : '1';
    const sets = this.levels.map(([r, c]) => this.groupingSet(r, c)).join(', ');
    const carried = [
      ...this.distinct.map((d) => d.alias),
      ...this.partials.map((p) => p.alias),
      ...this.twins.flatMap((_, k) => [...this.partials.map((p) => twinAlias(p.alias, k)), TWIN_COUNT(k)]),
    ];
    const moved = aliases.flatMap((a) => this.movedWith(a));
    const g = grouping(aliases, sets);
    const totals = [...this.totals.map((t, i) => `${t.rollup} AS __t${i}`), ...this.twinTotalsSql()];
    return `WITH p AS MATERIALIZED (${this.preAggregate()}),
  x AS (SELECT ${[...this.labelled(), ...carried].join(', ')} FROM p),
  k AS MATERIALIZED (SELECT ${distinctCount(this.rowAliases)} AS nr, ${distinctCount(this.colAliases)} AS nc)
SELECT ${[...aliases, ...moved, g.gid, ...totals].join(', ')}, (SELECT nr FROM k) AS __nr, (SELECT nc FROM k) AS __nc
FROM x WHERE (SELECT nr * greatest(nc, 1) FROM k) * ${this.spec.totals.length} <= $max_cells
${g.groupBy}
LIMIT ${maxGroups}`;
  }
}

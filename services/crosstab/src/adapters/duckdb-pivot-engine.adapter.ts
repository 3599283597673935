import { setImmediate as yieldToLoop } from 'node:timers/promises';
import { AppError } from '@quarry/errors';
import type { IndexEntry } from '@quarry/metadata-store';
import { isNumeric, type FieldDef, type QueryNode } from '@quarry/query-language';
import {
  compileWhere,
  ident,
  listParam,
  type DuckDBValue,
  type LoadedTable,
  type Row,
  type SnapshotEngine,
} from '@quarry/snapshots';
import type { AxisValue, GroupRow } from '../domain/axis-value';
import {
  crosstabCells,
  pivotLevels,
  type Aggregation,
  type AxisSpec,
  type CrosstabSpec,
  type TotalSpec,
} from '../domain/crosstab-spec';

/** Aggregations no partial adds up to: every level reads its own records (never a median of medians). */
const HOLISTIC: ReadonlySet<Aggregation> = new Set(['Median', 'Percentile', 'StdDev']);
import type {
  DrillFacts,
  KeysAtLeast,
  PivotEngine,
  PivotKeys,
  PivotResult,
  PivotRestriction,
} from '../ports/pivot-engine.port';

/**
 * Records the key estimate samples of a version without a stored sample (read into memory, or written
 * before there was one): DuckDB's system sampling reads whole vectors, so this many records cost the
 * same few milliseconds at 3M records as at 120M (bench/scale.bench.js).
 */
export const KEY_SAMPLE_RECORDS = 100_000;
/**
 * The thorough sample of such a version, for a selective filter (4M records of 120M: 50-60 ms once
 * their pages are in DuckDB's buffer, up to ~2 s the first time a column is read). Attached versions
 * keep their own sample, contiguous and read at open (LoadedTable.sample).
 */
export const THOROUGH_SAMPLE_RECORDS = 4_000_000;

const DATE_FORMAT = { day: '%Y-%m-%d', month: '%Y-%m', year: '%Y' } as const;

const sqlText = (s: string) => `'${s.replace(/'/g, "''")}'`;
/** A double as SQL: the shortest text that reads back as the same double. */
const sqlNumber = (n: number) => `CAST(${JSON.stringify(n)} AS DOUBLE)`;

/**
 * A date field's values as wall-clock time in the crosstab's zone. Timestamps are stored in UTC; a
 * DATE has no time of day and is its own local date.
 */
function localTime(col: string, columnType: string | undefined, timeZone: string): string {
  if (columnType === 'DATE') return col;
  if (columnType?.startsWith('TIMESTAMP WITH TIME ZONE')) return `timezone(${sqlText(timeZone)}, ${col})`;
  if (timeZone === 'UTC') return col;
  return `timezone(${sqlText(timeZone)}, timezone('UTC', ${col}))`;
}

const lpad = (sql: string, n: number) => `lpad(CAST(${sql} AS VARCHAR), ${n}, '0')`;

/**
 * An axis value as the pre-aggregate groups it: the stored value; for dates the start of its day, month
 * or year, or of its date group; for bins the bin's index. No row is formatted as text: `axisLabel`
 * formats once per group.
 */
function groupedKey(a: AxisSpec, columnTypes: ReadonlyMap<string, string>, timeZone: string): string {
  const f = a.field;
  const col = ident(f.name);
  if (a.bin) {
    // floor((x - o) / w), corrected so that o + k·w <= x < o + (k+1)·w holds exactly in doubles: the
    // drill-through range of bin k is written with those two bounds and must select the same records.
    const x = `CAST(${col} AS DOUBLE)`;
    const o = sqlNumber(a.bin.origin);
    const w = sqlNumber(a.bin.width);
    const k = `floor((${x} - ${o}) / ${w})`;
    return `(${k} + CASE WHEN ${x} < ${o} + ${k} * ${w} THEN -1 WHEN ${x} >= ${o} + (${k} + 1) * ${w} THEN 1 ELSE 0 END)`;
  }
  if (f.type !== 'date') return col;
  const type = columnTypes.get(f.name);
  if (a.dateGroup) {
    const local = localTime(col, type, timeZone);
    switch (a.dateGroup) {
      case 'monthOfYear':
        return `month(${local})`;
      case 'dayOfWeek':
        return `isodow(${local})`;
      case 'hourOfDay':
        return `hour(${local})`;
      default:
        return `date_trunc('${a.dateGroup}', ${local})`;
    }
  }
  const grain = f.grain ?? 'day';
  if (grain !== 'day') return `date_trunc('${grain}', ${col})`;
  return type === 'DATE' ? col : `CAST(${col} AS DATE)`;
}

/** The value reported for a grouped key: blank text merged with null, numbers as doubles, dates as text. */
function axisLabel(a: AxisSpec, key: string): string {
  const f = a.field;
  if (a.bin) return `CAST(${key} AS DOUBLE)`;
  switch (a.dateGroup) {
    case undefined:
      break;
    case 'year':
      return `strftime(${key}, '%Y')`;
    case 'quarter':
      return `strftime(${key}, '%Y') || '-Q' || quarter(${key})`;
    case 'month':
      return `strftime(${key}, '%Y-%m')`;
    case 'week':
      return `${lpad(`isoyear(${key})`, 4)} || '-W' || ${lpad(`week(${key})`, 2)}`;
    case 'day':
      return `strftime(${key}, '%Y-%m-%d')`;
    case 'hour':
      return `strftime(${key}, '%Y-%m-%dT%H')`;
    case 'monthOfYear':
    case 'hourOfDay':
      return lpad(key, 2);
    case 'dayOfWeek':
      return `CAST(${key} AS VARCHAR)`;
  }
  if (f.type === 'date') return `strftime(${key}, '${DATE_FORMAT[f.grain ?? 'day']}')`;
  if (f.type === 'string') return `nullif(${key}, '')`;
  if (isNumeric(f.type)) return `CAST(${key} AS DOUBLE)`;
  return key;
}

/** A filter and its bound parameters (compileWhere's, and lists of kept outer keys). */
interface BoundWhere {
  sql: string;
  params: Record<string, DuckDBValue>;
}

/**
 * SQL true for the records whose key on `a` is one of `values` (as the pivot reports keys), with the
 * values bound as one list parameter `$name`: a semi-join on a hash of them, 0.16 s for 24,000 kept
 * values over 600,000 records where the same values written as an IN list took 19 s.
 */
function memberSql(
  a: AxisSpec,
  values: readonly AxisValue[],
  columnTypes: ReadonlyMap<string, string>,
  timeZone: string,
  name: string,
): { sql: string; params: Record<string, DuckDBValue> } {
  const key = groupedKey(a, columnTypes, timeZone);
  const present = values.filter((v): v is string | number | boolean => v !== null && v !== '');
  // The reported key of a bin is its lower bound: back to the bin's index, which the records carry.
  const bin = a.bin;
  const tested = bin ? key : axisLabel(a, key);
  const listed = bin ? present.map((v) => Math.round((Number(v) - bin.origin) / bin.width)) : present;
  const tests: string[] = [];
  const params: Record<string, DuckDBValue> = {};
  if (listed.length) {
    tests.push(`${tested} IN (SELECT unnest($${name}))`);
    params[name] = listParam(listed);
  }
  if (present.length < values.length) tests.push(`${tested} IS NULL`);
  return { sql: tests.length ? `(${tests.join(' OR ')})` : 'false', params };
}

/** What the engine reports for a key: for a bin its lower bound (from its index), else the label. */
function keyOf(a: AxisSpec, v: unknown): AxisValue {
  const value = toAxis(v);
  if (a.bin && typeof value === 'number') return binStart(a, a.bin, value);
  return value;
}

/**
 * Bin k's lower bound. Its index must be an exact integer whose bounds differ as doubles: a width too
 * small for the data (1e-300 from -2^53) sends records to an infinite index, or to bins whose two bounds
 * are one number, which no range (and no drill query) can tell apart.
 */
function binStart(a: AxisSpec, bin: { width: number; origin: number }, k: number): number {
  const low = bin.origin + k * bin.width;
  const high = bin.origin + (k + 1) * bin.width;
  if (!Number.isSafeInteger(k) || !Number.isFinite(low) || !Number.isFinite(high) || !(low < high))
    throw AppError.invalid(
      `${a.param}.bin: width ${bin.width} from origin ${bin.origin} is too fine for ${JSON.stringify(a.field.name)} (a value falls in bin number ${k}, whose bounds cannot be told apart); use a wider width or an origin nearer the data`,
    );
  // Without float noise (0.30000000000000004 is 0.3), unless that would name a neighbouring bin.
  for (const digits of [15, 16]) {
    const short = Number(low.toPrecision(digits));
    if (Math.round((short - bin.origin) / bin.width) === k) return short;
  }
  return low;
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

type PartialKind = 'sum' | 'count' | 'min' | 'max';
/** A partial as DuckDB returns it: exact integers (BIGINT, HUGEINT) come as bigint. */
type Acc = bigint | number | null;

const SAFE = BigInt(Number.MAX_SAFE_INTEGER);

/**
 * A partial as the roll-up holds it: a bigint that fits a double exactly becomes a number, because
 * adding bigints allocates each time and was most of a 100,000-cell roll-up's time and garbage
 * (DuckDB returns every count and integer sum as a bigint).
 */
function intake(v: unknown): Acc {
  if (typeof v === 'bigint') return v >= -SAFE && v <= SAFE ? Number(v) : v;
  return v as Acc;
}

function combine(kind: PartialKind, a: Acc, b: Acc): Acc {
  if (a === null) return b;
  if (b === null) return a;
  if (kind === 'sum' || kind === 'count') {
    if (typeof a === 'number' && typeof b === 'number') {
      const sum = a + b;
      // Integers stay exact: past 2^53 their sum goes on as a bigint.
      return Number.isSafeInteger(sum) || !Number.isInteger(a) || !Number.isInteger(b) ? sum : BigInt(a) + BigInt(b);
    }
    if (typeof a === 'bigint' && typeof b === 'bigint') return a + b;
    const n = typeof a === 'number' ? a : (b as number);
    const big = typeof a === 'bigint' ? a : (b as bigint);
    return Number.isInteger(n) ? big + BigInt(n) : Number(big) + n;
  }
  const less = a < b;
  return (kind === 'min') === less ? a : b;
}

/**
 * What the pivot needs from each filtered record, shared by both ways of finishing it: the grouped keys,
 * the fields of dynamic views (distinct counts), and partial aggregates from which every total follows
 * (Sum, Count, Min and Max of the partials; Average as their sum over their count).
 */
class PivotPlan {
  readonly axes: AxisSpec[];
  readonly rowAliases: string[];
  readonly colAliases: string[];
  /** (row depth, column depth) of every level the pivot computes (see pivotLevels). */
  readonly levels: Array<[number, number]>;
  readonly partials: Array<{ sql: string; alias: string; kind: PartialKind }> = [];
  readonly distinct: Array<{ alias: string; field: FieldDef }> = [];
  /** Per total: how its value follows from the partials (cells path) and its roll-up SQL (grouping sets path). */
  readonly totals: Array<{ value: (acc: readonly Acc[]) => number | null; rollup: string }>;

  constructor(
    private readonly table: LoadedTable,
    readonly spec: CrosstabSpec,
    private readonly where: string,
  ) {
    this.axes = [...spec.rows, ...spec.columns];
    this.rowAliases = spec.rows.map((_, i) => `__r${i}`);
    this.colAliases = spec.columns.map((_, i) => `__c${i}`);
    this.levels = pivotLevels(spec);
    this.totals = spec.totals.map((t) => this.total(t));
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

  private total(t: TotalSpec): { value: (acc: readonly Acc[]) => number | null; rollup: string } {
    const num = (v: Acc) => (v === null ? null : Number(v));
    const alias = (i: number) => this.partials[i].alias;
    // Calculated totals are evaluated from the others once every level is known (applyFormulas).
    if (!t.aggregation) return { value: () => null, rollup: 'NULL' };
    // Only the raw path (rawSql) computes these.
    if (HOLISTIC.has(t.aggregation)) return { value: () => null, rollup: 'NULL' };
    if (t.distinctOf) {
      const field = t.distinctOf;
      let d = this.distinct.find((x) => x.field.name === field.name);
      if (!d) {
        d = { alias: `__d${this.distinct.length}`, field };
        this.distinct.push(d);
      }
      // Only the grouping sets path carries dynamic views.
      return {
        value: () => null,
        rollup: `count(DISTINCT ${field.type === 'string' ? `nullif(${d.alias}, '')` : d.alias})`,
      };
    }
    if (!t.field || t.aggregation === 'Count') {
      const col = t.field ? ident(t.field.name) : '';
      const i = this.partial(
        'count',
        !t.field ? 'count(*)' : t.field.type === 'string' ? `count(nullif(${col}, ''))` : `count(${col})`,
      );
      return { value: (acc) => Number(acc[i] ?? 0), rollup: `coalesce(sum(${alias(i)}), 0)` };
    }
    const col = ident(t.field.name);
    switch (t.aggregation) {
      case 'Sum': {
        const i = this.partial('sum', `sum(${col})`);
        // No cast to DOUBLE in SQL: DuckDB's HUGEINT to DOUBLE is not correctly rounded (an integer sum
        // near 2^54 came back 2 off); the driver's bigint becomes the nearest double in JS.
        return { value: (acc) => num(acc[i]), rollup: `sum(${alias(i)})` };
      }
      case 'Average': {
        const s = this.partial('sum', `sum(${col})`);
        const n = this.partial('count', `count(${col})`);
        return {
          value: (acc) => (Number(acc[n] ?? 0) > 0 ? Number(acc[s]) / Number(acc[n]) : null),
          rollup: `CAST(sum(${alias(s)}) AS DOUBLE) / nullif(sum(${alias(n)}), 0)`,
        };
      }
      case 'Min':
      case 'Max': {
        const kind = t.aggregation === 'Min' ? 'min' : 'max';
        const i = this.partial(kind, `${kind}(${col})`);
        return { value: (acc) => num(acc[i]), rollup: `CAST(${kind}(${alias(i)}) AS DOUBLE)` };
      }
      default:
        // CountDistinct has distinctOf (above); the holistic ones returned first.
        return { value: () => null, rollup: 'NULL' };
    }
  }

  /**
   * The filtered records pre-aggregated at the finest grain the pivot needs: row keys × column keys
   * (× the values of each dynamic view's field). One scan; only the columns used are read.
   */
  private preAggregate(): string {
    const aliases = [...this.rowAliases, ...this.colAliases];
    const grain = [
      ...this.axes.map((a, i) => `${groupedKey(a, this.table.columnTypes, this.spec.timeZone)} AS ${aliases[i]}`),
      ...this.distinct.map((d) => `${ident(d.field.name)} AS ${d.alias}`),
    ];
    const select = [...grain, ...this.partials.map((p) => `${p.sql} AS ${p.alias}`)];
    return `SELECT ${select.join(', ')} FROM ${ident(this.table.table)} WHERE ${this.where} GROUP BY ${grain.map((_, i) => i + 1).join(', ')}`;
  }

  private labelled(): string[] {
    const aliases = [...this.rowAliases, ...this.colAliases];
    return this.axes.map((a, i) => `${axisLabel(a, aliases[i])} AS ${aliases[i]}`);
  }

  /**
   * Every total straight from the filtered records at each level by grouping sets: for medians,
   * percentiles and standard deviations, which no partial sums to. Keys are counted first, as in
   * rollupSql; blank text is merged with null per record.
   */
  rawSql(maxGroups: number): string {
    const aliases = [...this.rowAliases, ...this.colAliases];
    const types = this.table.columnTypes;
    const keys = this.axes.map((a, i) => {
      const key = groupedKey(a, types, this.spec.timeZone);
      return `${a.field.type === 'string' && !a.bin && !a.dateGroup ? `nullif(${key}, '')` : key} AS ${aliases[i]}`;
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
      // and the cast cost a median 60 ms on 3M records (bench/crosstab-analytics.bench.js).
      const num = v;
      switch (t.aggregation) {
        case 'Count':
        case 'CountDistinct':
          return t.field.type === 'string' ? `count(nullif(${v}, ''))` : `count(${v})`;
        case 'Sum':
          return `sum(${v})`;
        case 'Average':
          return `avg(${num})`;
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
      .map(([r, c]) => `(${[...this.rowAliases.slice(0, r), ...this.colAliases.slice(0, c)].join(', ')})`)
      .join(', ');
    const labelled = this.axes.map((a, i) => `${axisLabel(a, aliases[i])} AS ${aliases[i]}`);
    // One pass, streamed: the keys are counted from the groups that come back (at most maxGroups), as a
    // hand-written GROUPING SETS query would run; materialising the records first cost 2.5x (bench).
    const source = `SELECT ${[...keys, ...carried].join(', ')} FROM ${ident(this.table.table)} WHERE ${this.where}`;
    return `SELECT ${[...labelled, 'gid', ...aggregates.map((_, i) => `__t${i}`)].join(', ')}
FROM (SELECT ${aliases.join(', ')}, GROUPING(${aliases.join(', ')}) AS gid, ${aggregates.map((sql, i) => `${sql} AS __t${i}`).join(', ')}
  FROM (${source})
  GROUP BY GROUPING SETS (${sets})
  LIMIT ${maxGroups})`;
  }

  /** The row and column key counts of the raw path, for an answer that stopped at maxGroups. */
  rawKeysSql(): string {
    const keys = this.axes.map((a, i) => {
      const key = groupedKey(a, this.table.columnTypes, this.spec.timeZone);
      const alias = [...this.rowAliases, ...this.colAliases][i];
      return `${a.field.type === 'string' && !a.bin && !a.dateGroup ? `nullif(${key}, '')` : key} AS ${alias}`;
    });
    const distinctCount = (cols: string[]) =>
      cols.length ? `(SELECT count(*) FROM (SELECT DISTINCT ${cols.join(', ')} FROM x))` : '1';
    return `WITH x AS MATERIALIZED (SELECT ${keys.join(', ')} FROM ${ident(this.table.table)} WHERE ${this.where})
SELECT ${distinctCount(this.rowAliases)} AS __nr, ${distinctCount(this.colAliases)} AS __nc`;
  }

  /**
   * Without dynamic views the pre-aggregate is the cells themselves: at most `limit` of them come back,
   * in key order. The roll-up adds doubles in the order the cells arrive, and a hash aggregate's order
   * varies from call to call: in a fixed order the same question gives the same last digit every time.
   */
  cellsSql(limit: number): string {
    const order = this.axes.length ? ` ORDER BY ${this.axes.map((_, i) => i + 1).join(', ')}` : '';
    return `SELECT ${[...this.labelled(), ...this.partials.map((p) => p.alias)].join(', ')} FROM (${this.preAggregate()})${order} LIMIT ${limit}`;
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
    const sets = this.levels
      .map(([r, c]) => `(${[...this.rowAliases.slice(0, r), ...this.colAliases.slice(0, c)].join(', ')})`)
      .join(', ');
    const carried = [...this.distinct.map((d) => d.alias), ...this.partials.map((p) => p.alias)];
    return `WITH p AS MATERIALIZED (${this.preAggregate()}),
  x AS (SELECT ${[...this.labelled(), ...carried].join(', ')} FROM p),
  k AS MATERIALIZED (SELECT ${distinctCount(this.rowAliases)} AS nr, ${distinctCount(this.colAliases)} AS nc)
SELECT ${aliases.join(', ')}, GROUPING(${aliases.join(', ')}) AS gid, ${this.totals.map((t, i) => `${t.rollup} AS __t${i}`).join(', ')}, (SELECT nr FROM k) AS __nr, (SELECT nc FROM k) AS __nc
FROM x WHERE (SELECT nr * greatest(nc, 1) FROM k) * ${this.spec.totals.length} <= $max_cells
GROUP BY GROUPING SETS (${sets})
LIMIT ${maxGroups}`;
  }
}

/**
 * Sums the cells' partials into every level the pivot computes: totals, subtotals and the grand total
 * (exact for integers).
 */
/**
 * Rows between two yields of the JS roll-up: about 2 ms of work each, so a 100,000-cell pivot lets the
 * service's other calls run every few milliseconds instead of holding its loop ~200 ms (issue #27).
 */
const ROLLUP_SLICE = 2000;
/** Slots of the roll-up's flat group index at most (16 MB); a larger key space is indexed by a Map. */
const DENSE_GROUP_INDEX = 4_000_000;

/**
 * The distinct key prefixes of one side (rows or columns), each interned once as a small integer: a
 * cell's key at every depth is then a node of this tree, and a group is found by numbers, not by texts
 * made per cell and level (which cost ~3 us a cell and most of the service's garbage; issue #27).
 */
class KeyTree {
  /** The key of each node, from the root (node 0, the empty key). */
  readonly keys: AxisValue[][] = [[]];
  readonly parent: number[] = [-1];
  private readonly children: Array<Map<AxisValue, number> | undefined> = [undefined];

  /** The node under `node` for `value`. Blank text and null are one key upstream; JSON made NaN and ±Infinity null, and so does this. */
  child(node: number, value: AxisValue): number {
    const k = typeof value === 'number' && !Number.isFinite(value) ? null : value;
    let map = this.children[node];
    if (!map) {
      map = new Map();
      this.children[node] = map;
    }
    let id = map.get(k);
    if (id === undefined) {
      id = this.keys.length;
      map.set(k, id);
      this.keys.push([...this.keys[node], value]);
      this.parent.push(node);
      this.children.push(undefined);
    }
    return id;
  }

  /** The ancestor `up` levels above `node`. */
  up(node: number, up: number): number {
    let n = node;
    for (let i = 0; i < up; i++) n = this.parent[n];
    return n;
  }
}

async function rollUpInJs(plan: PivotPlan, rows: Row[]): Promise<{ keys: PivotKeys; groups: GroupRow[] }> {
  const kinds = plan.partials.map((p) => p.kind);
  const nRows = plan.rowAliases.length;
  const nCols = plan.colAliases.length;
  const rowTree = new KeyTree();
  const colTree = new KeyTree();
  // First pass: every cell's full row and column key as a node of its tree.
  const rowNode = new Int32Array(rows.length);
  const colNode = new Int32Array(rows.length);
  for (let at = 0; at < rows.length; at++) {
    if (at % (4 * ROLLUP_SLICE) === 4 * ROLLUP_SLICE - 1) await yieldToLoop();
    const row = rows[at];
    let r = 0;
    for (let i = 0; i < nRows; i++) r = rowTree.child(r, keyOf(plan.axes[i], row[plan.rowAliases[i]]));
    let c = 0;
    for (let i = 0; i < nCols; i++) c = colTree.child(c, keyOf(plan.axes[nRows + i], row[plan.colAliases[i]]));
    rowNode[at] = r;
    colNode[at] = c;
  }
  // Second pass: each cell's partials into its group at every level; a group is (level, row node,
  // column node) as one number (levels x nodes x nodes stays far below 2^53 within the cell limit).
  const NR = rowTree.keys.length;
  const NC = colTree.keys.length;
  // Where the key space is small enough (any pivot within the cell limit on two axes), a flat array
  // finds a group: a Map of 100,000 groups took half of the roll-up's time in lookups.
  const space = plan.levels.length * NR * NC;
  const dense = space <= DENSE_GROUP_INDEX ? new Int32Array(space).fill(-1) : undefined;
  const sparse = dense ? undefined : new Map<number, number>();
  const aliases = plan.partials.map((p) => p.alias);
  const found: Array<{ rowKey: AxisValue[]; columnKey: AxisValue[]; acc: Acc[] }> = [];
  let rowKeys = 0;
  let colKeys = 0;
  for (let at = 0; at < rows.length; at++) {
    if (at % ROLLUP_SLICE === ROLLUP_SLICE - 1) await yieldToLoop();
    const row = rows[at];
    for (let level = 0; level < plan.levels.length; level++) {
      const [r, c] = plan.levels[level];
      const rn = rowTree.up(rowNode[at], nRows - r);
      const cn = colTree.up(colNode[at], nCols - c);
      const key = (level * NR + rn) * NC + cn;
      const seen = dense ? dense[key] : (sparse?.get(key) ?? -1);
      if (seen >= 0) {
        const acc = found[seen].acc;
        for (let i = 0; i < acc.length; i++) acc[i] = combine(kinds[i], acc[i], intake(row[aliases[i]]));
      } else {
        if (dense) dense[key] = found.length;
        else sparse?.set(key, found.length);
        found.push({
          rowKey: rowTree.keys[rn],
          columnKey: colTree.keys[cn],
          acc: aliases.map((a) => intake(row[a])),
        });
        if (r === nRows && c === 0) rowKeys++;
        if (r === 0 && c === nCols && nCols > 0) colKeys++;
      }
    }
  }
  const groups: GroupRow[] = [];
  for (const g of found) {
    if (groups.length % (4 * ROLLUP_SLICE) === 4 * ROLLUP_SLICE - 1) await yieldToLoop();
    groups.push({ rowKey: g.rowKey, columnKey: g.columnKey, values: plan.totals.map((t) => t.value(g.acc)) });
  }
  if (rows.length === 0)
    groups.push({ rowKey: [], columnKey: [], values: plan.totals.map((t) => t.value(plan.partials.map(() => null))) });
  return { keys: { rows: rowKeys, columns: nCols ? colKeys : 1 }, groups };
}

/**
 * Each row of the grouping sets statement as a group: GROUPING() says how deep its row and column keys
 * go (always a prefix). Keys are interned, so the groups share their key arrays as the JS roll-up's do.
 */
function fromGroupingSets(plan: PivotPlan, rows: Row[]): GroupRow[] {
  const aliases = [...plan.rowAliases, ...plan.colAliases];
  const nRows = plan.rowAliases.length;
  const groupedOut = (gid: number, i: number) => (gid & (1 << (aliases.length - 1 - i))) !== 0;
  const rowTree = new KeyTree();
  const colTree = new KeyTree();
  return rows.map((row) => {
    const gid = Number(row.gid);
    let r = 0;
    for (let i = 0; i < nRows && !groupedOut(gid, i); i++) r = rowTree.child(r, keyOf(plan.axes[i], row[aliases[i]]));
    let c = 0;
    for (let i = nRows; i < aliases.length && !groupedOut(gid, i); i++)
      c = colTree.child(c, keyOf(plan.axes[i], row[aliases[i]]));
    return {
      rowKey: rowTree.keys[r],
      columnKey: colTree.keys[c],
      values: plan.totals.map((_, i) => toNumber(row[`__t${i}`])),
    };
  });
}

/**
 * Where the key estimate reads: the version's stored sample (its first level, or all of it when
 * thorough), else a system sample of the records. `more`: a thorough look would read more records.
 */
function sampleSource(
  table: LoadedTable,
  recordCount: number,
  thorough: boolean,
): { from: { sql: string; where: string; more: boolean }; sampled: number } {
  const s = table.sample;
  if (s) {
    const sampled = thorough ? s.records : s.first;
    // The level prunes by the row groups' zone maps: the first level reads only its own pages.
    return {
      from: { sql: s.table, where: thorough ? 'true' : s.firstLevel, more: !thorough && s.records > s.first },
      sampled,
    };
  }
  const sampled = thorough ? THOROUGH_SAMPLE_RECORDS : KEY_SAMPLE_RECORDS;
  const percent = Math.min(100, (sampled / Math.max(recordCount, 1)) * 100);
  return {
    from: {
      sql: `${table.stored} TABLESAMPLE ${percent.toFixed(6)}% (system)`,
      where: 'true',
      more: !thorough && percent < 100,
    },
    sampled,
  };
}

/**
 * The most (cell, level) additions the JS roll-up may do: the 100,000 cells of the cell limit times the
 * four levels of a pivot without subtotals, the bound that held before subtotals existed (~0.3 s).
 */
export const JS_ROLLUP_MAX_WORK = 400_000;

/**
 * Pivots over the in-memory snapshot in one statement, one scan. Without dynamic views the statement
 * returns the pre-aggregated cells and the totals are summed here from their partials: a roll-up in
 * DuckDB cost more than the whole JS pass for a few thousand cells. When there are more cells than the
 * limit could allow, or with dynamic views, the roll-up runs in DuckDB by grouping sets (see rollupSql).
 */
export class DuckDbPivotEngine implements PivotEngine {
  constructor(
    private readonly engine: SnapshotEngine,
    /** JS_ROLLUP_MAX_WORK; 0 sends every roll-up to DuckDB (tests compare both paths). */
    private readonly jsRollupMaxWork = JS_ROLLUP_MAX_WORK,
  ) {}

  forget(name: string): void {
    this.engine.release(name);
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
    // A small index is pivoted whole in about the time a sample would take: nothing to estimate.
    if (entry.recordCount <= KEY_SAMPLE_RECORDS) return { rows: 0, outerRows: 0, columns: 0, outerColumns: 0 };
    const table = await this.engine.table(entry);
    const w = compileWhere(where, table);
    const key = (a: AxisSpec, alias: string) => {
      const k = groupedKey(a, table.columnTypes, spec.timeZone);
      return `${a.field.type === 'string' && !a.bin && !a.dateGroup ? `nullif(${k}, '')` : k} AS ${alias}`;
    };
    const rows = spec.rows.map((_, i) => `__r${i}`);
    const cols = spec.columns.map((_, i) => `__c${i}`);
    // row(...) is never null, so a blank key counts as one key, as the pivot groups it.
    const distinct = (aliases: string[]) => (aliases.length ? `count(DISTINCT row(${aliases.join(', ')}))` : '1');
    // Every key a sample holds is a key of the index: a lower bound, in time bounded by the sample.
    const { from, sampled } = sampleSource(table, entry.recordCount, opts.thorough === true);
    const keys = [...spec.rows.map((a, i) => key(a, rows[i])), ...spec.columns.map((a, i) => key(a, cols[i]))];
    // One aggregate over the sampled records (a CTE read four times planned and ran 1.5-2x slower).
    const [row] = await this.engine.all(
      `SELECT ${distinct(rows)} AS nr, ${distinct(rows.slice(0, 1))} AS nor, ${distinct(cols)} AS nc, ${distinct(cols.slice(0, 1))} AS noc, count(*) AS kept
FROM (SELECT ${keys.length ? keys.join(', ') : '1 AS __one'} FROM ${from.sql} WHERE ${from.where} AND (${w.sql}))`,
      w.params,
      signal,
    );
    const out = {
      rows: Number(row.nr),
      outerRows: Number(row.nor),
      columns: Number(row.nc),
      outerColumns: Number(row.noc),
      // The filter kept under a quarter of what was sampled, and a larger sample is possible.
      moreToSee: from.more && Number(row.kept) < sampled / 4,
    };
    // Of every record, the load counted each field's keys exactly (attached versions; a date by its grain).
    const exact = (a: AxisSpec) =>
      where.kind === 'all' && !a.bin && !a.dateGroup ? (table.distinctKeys?.get(a.field.name) ?? 0) : 0;
    const most = (axes: AxisSpec[]) => Math.max(0, ...axes.map(exact));
    if (spec.rows.length) {
      out.rows = Math.max(out.rows, most(spec.rows));
      out.outerRows = Math.max(out.outerRows, exact(spec.rows[0]));
    }
    if (spec.columns.length) {
      out.columns = Math.max(out.columns, most(spec.columns));
      out.outerColumns = Math.max(out.outerColumns, exact(spec.columns[0]));
    }
    return out;
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
      values && axes.length ? [memberSql(axes[0], values, table.columnTypes, spec.timeZone, name)] : [];
    const tests = [
      ...member(spec.rows, restrict.rows, '__kept_rows'),
      ...member(spec.columns, restrict.columns, '__kept_columns'),
    ];
    const restricted: BoundWhere = {
      sql: [w.sql, ...tests.map((t) => t.sql)].join(' AND '),
      params: Object.assign({}, w.params, ...tests.map((t) => t.params)) as BoundWhere['params'],
    };
    const plan = new PivotPlan(table, spec, restricted.sql);
    const drill = this.drillFacts(table, spec);
    const result = await this.pivotPlan(plan, spec, restricted, maxCells, signal);
    return { ...result, drill };
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
    if (plan.holistic) {
      const rows = await this.engine.all(plan.rawSql(maxGroups), w.params, signal);
      if (rows.length >= maxGroups) {
        // Over what a table within the limit can hold: count the keys exactly for the answer.
        const [k] = await this.engine.all(plan.rawKeysSql(), w.params, signal);
        const keys = { rows: Number(k.__nr), columns: Number(k.__nc) };
        return crosstabCells(keys, spec) > maxCells ? { keys, groups: [] } : { keys, groups: [], tooManyGroups: true };
      }
      const groups = fromGroupingSets(plan, rows);
      const R = plan.rowAliases.length;
      const C = plan.colAliases.length;
      const keys = {
        rows: groups.filter((g) => g.rowKey.length === R && g.columnKey.length === 0).length,
        columns: C ? groups.filter((g) => g.rowKey.length === 0 && g.columnKey.length === C).length : 1,
      };
      return { keys, groups: crosstabCells(keys, spec) > maxCells ? [] : groups };
    }
    if (plan.distinct.length === 0) {
      // Each cell holds every total: past this many cells the pivot is (blank keys merged aside) over the
      // limit, and the grouping sets path below counts it exactly without returning the cells.
      const most = Math.floor(maxCells / spec.totals.length);
      const cells = await this.engine.all(plan.cellsSql(most + 1), w.params, signal);
      // The JS roll-up is synchronous: past JS_ROLLUP_MAX_WORK (cells x levels) it would hold the thread,
      // so many levels (subtotals on deep axes) go to DuckDB, which yields and honours the deadline.
      if (cells.length <= most && cells.length * plan.levels.length <= this.jsRollupMaxWork) {
        const { keys, groups } = await this.engine.turns.take(() => rollUpInJs(plan, cells));
        return { keys, groups: crosstabCells(keys, spec) > maxCells ? [] : groups };
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
    if (rows.length >= maxGroups) return { keys, groups: [], tooManyGroups: true };
    return { keys, groups: crosstabCells(keys, spec) > maxCells ? [] : fromGroupingSets(plan, rows) };
  }
}

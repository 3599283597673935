import { evaluateFormula } from '@quarry/contract';
import type { FieldDef } from '@quarry/query-language';
import type { AxisValue, GroupRow } from './axis-value';
import type { DrillFacts } from '../ports/pivot-engine.port';
import type { AxisOrder, CrosstabSpec, FilterSpec, ShowAs } from './crosstab-spec';
import type { DrillContext } from './drill-query';

export type Values = Array<number | null>;

/**
 * The crosstab as every format shows it: the row and column keys in display order (a subtotal's key is
 * shorter than the field list, placed after its group), and the shown value of every (row, column),
 * where the key [] is the Total row or column. Renderers read only this.
 */
export interface PivotTable {
  spec: CrosstabSpec;
  rows: AxisValue[][];
  /** Empty without column fields: the Total column is the only one. */
  columns: AxisValue[][];
  /** The shown values (after showAs) at a row key and a column key. */
  at(rowKey: readonly AxisValue[], columnKey: readonly AxisValue[]): Values;
  /** Values of the outermost row (column) level that rowLimit (columnLimit) left out. */
  rowsOmitted: number;
  columnsOmitted: number;
  /** How many values the outermost row (column) level has before the limit (after the filter). */
  outerRows: number;
  outerColumns: number;
  /** Values of the outermost row (column) level that rowFilter (columnFilter) left out. */
  rowsFilteredOut: number;
  columnsFilteredOut: number;
  /** What drill-through queries of its keys need (format json). */
  drill: DrillContext;
}

const isBlank = (v: AxisValue) => v === null || v === '';
const norm = (k: readonly AxisValue[]) => k.map((v) => (v === '' ? null : v));
/**
 * The text of a key, kept per key array: renderers ask for every (row, column) with the same arrays, and
 * making the JSON of both keys per cell was most of a 100,000-cell table's time.
 */
const keyTexts = new WeakMap<readonly AxisValue[], string>();
const textOf = (key: readonly AxisValue[]): string => {
  if (key.length === 0) return '[]';
  let text = keyTexts.get(key);
  if (text === undefined) {
    text = JSON.stringify(norm(key));
    keyTexts.set(key, text);
  }
  return text;
};
const keyText = (rowKey: readonly AxisValue[], columnKey: readonly AxisValue[]) =>
  `${textOf(rowKey)}|${textOf(columnKey)}`;
/**
 * A value as the engine computed it, every digit kept (JSON, XLSX and the client carry it whole; display
 * rounds for itself): only what is not a number at all (a division by zero's NaN or Infinity) is blank.
 */
const finite = (v: number | null) => (v === null || !Number.isFinite(v) ? null : v);

/** Label order of one level: blank last whatever the direction; text case-insensitively, then exactly. */
export function compareLabels(a: AxisValue, b: AxisValue, type: FieldDef['type']): number {
  if (isBlank(a) || isBlank(b)) return isBlank(a) === isBlank(b) ? 0 : isBlank(a) ? 1 : -1;
  if (type === 'integer' || type === 'number') return (a as number) - (b as number);
  if (type === 'boolean') return Number(a) - Number(b);
  const x = String(a).toLowerCase();
  const y = String(b).toLowerCase();
  if (x !== y) return x < y ? -1 : 1;
  return String(a) < String(b) ? -1 : String(a) > String(b) ? 1 : 0;
}

interface AxisPlan {
  types: Array<FieldDef['type']>;
  reverse: boolean[];
  order: AxisOrder;
  limit: number | null;
  filter: FilterSpec | null;
  subtotals: boolean;
  /** The raw total of a key at its own depth (the Total column of a row, the Total row of a column). */
  total: (key: AxisValue[]) => Values;
}

/**
 * Orders the full keys of one axis level by level and cuts the outermost level to the limit. By label,
 * each level in `direction` (a column level's `reverse` flips it again); by value, siblings by their
 * own total of the measure, ties by label ascending, empty totals last.
 */
function arrangeAxis(
  keys: AxisValue[][],
  plan: AxisPlan,
): { keys: AxisValue[][]; omitted: number; outer: number; filteredOut: number } {
  const depth = plan.types.length;
  if (depth === 0) return { keys: [], omitted: 0, outer: 0, filteredOut: 0 };
  const out: AxisValue[][] = [];
  let omitted = 0;
  let outer = 0;
  let filteredOut = 0;
  const walk = (prefix: AxisValue[], members: AxisValue[][], level: number) => {
    const children = new Map<string, { value: AxisValue; members: AxisValue[][] }>();
    for (const k of members) {
      const id = JSON.stringify(norm([k[level]]));
      const child = children.get(id);
      if (child) child.members.push(k);
      else children.set(id, { value: k[level], members: [k] });
    }
    const byLabel = (a: AxisValue, b: AxisValue) => compareLabels(a, b, plan.types[level]);
    let ordered = [...children.values()];
    if (plan.order.by === 'label') {
      const sign = (plan.order.direction === 'desc' ? -1 : 1) * (plan.reverse[level] ? -1 : 1);
      ordered.sort((a, b) => {
        if (isBlank(a.value) !== isBlank(b.value)) return isBlank(a.value) ? 1 : -1;
        return sign * byLabel(a.value, b.value);
      });
    } else {
      const sign = plan.order.direction === 'desc' ? -1 : 1;
      // Each sibling's measure once, not per comparison.
      const withMeasure = ordered.map((c) => ({ c, m: plan.total([...prefix, c.value])[plan.order.measure] ?? null }));
      withMeasure.sort((a, b) => {
        const x = a.m;
        const y = b.m;
        if (x === null || y === null) return x === y ? byLabel(a.c.value, b.c.value) : x === null ? 1 : -1;
        return x !== y ? sign * (x - y) : byLabel(a.c.value, b.c.value);
      });
      ordered = withMeasure.map((x) => x.c);
    }
    if (level === 0) {
      const filter = plan.filter;
      if (filter) {
        const before = ordered.length;
        ordered = ordered.filter((c) => passes(plan.total([c.value])[filter.measure] ?? null, filter));
        filteredOut = before - ordered.length;
      }
      outer = ordered.length;
      if (plan.limit !== null && ordered.length > plan.limit) {
        omitted = ordered.length - plan.limit;
        ordered = ordered.slice(0, plan.limit);
      }
    }
    for (const child of ordered) {
      const key = [...prefix, child.value];
      if (level + 1 === depth) out.push(key);
      else {
        walk(key, child.members, level + 1);
        if (plan.subtotals) out.push(key);
      }
    }
  };
  walk([], keys, 0);
  return { keys: out, omitted, outer, filteredOut };
}

/** A group's total against a filter; an empty total passes none. */
export function passes(total: number | null, f: Pick<FilterSpec, 'op' | 'value'>): boolean {
  if (total === null) return false;
  switch (f.op) {
    case '>':
      return total > f.value;
    case '>=':
      return total >= f.value;
    case '<':
      return total < f.value;
    case '<=':
      return total <= f.value;
    case '=':
      return total === f.value;
    case '!=':
      return total !== f.value;
  }
}

/**
 * Calculated totals of every group, from the other totals of the same group (so a total's ratio is a
 * ratio of totals, never a sum of ratios), in an order where each follows what it reads.
 */
function applyFormulas(spec: CrosstabSpec, values: Values): Values {
  if (spec.formulaOrder.length === 0) return values;
  const out = [...values];
  for (const i of spec.formulaOrder) {
    const f = spec.totals[i].formula;
    if (!f) continue;
    const v = evaluateFormula(f.node, (name) => {
      const j = f.refs.get(name.toLowerCase());
      return j === undefined ? null : out[j];
    });
    out[i] = v === null || !Number.isFinite(v) ? null : v;
  }
  return out;
}

/** percent of `denominator`, or empty where either side is empty or the denominator is 0. */
function percent(value: number | null, denominator: number | null | undefined): number | null {
  if (value === null || denominator === null || denominator === undefined || denominator === 0) return null;
  return (value / denominator) * 100;
}

/** What rowLimit / columnLimit and the filters did to an outer level when it was chosen before the pivot. */
export interface OuterCounts {
  omitted: number;
  filteredOut: number;
  outer: number;
}

/** Assembles the table from the engine's groups: order, limits, subtotals and "show values as". */
export function buildPivotTable(
  spec: CrosstabSpec,
  groups: GroupRow[],
  opts: {
    subtotals?: boolean;
    drill?: DrillFacts;
    /** The outer levels chosen before the pivot (groups hold only the kept values): their counts. */
    outer?: { rows?: OuterCounts; columns?: OuterCounts };
  } = {},
): PivotTable {
  const R = spec.rows.length;
  const C = spec.columns.length;
  // By row key, then by column key: a lookup makes no text of its own.
  const raw = new Map<string, Map<string, Values>>();
  const rowKeys: AxisValue[][] = [];
  const colKeys: AxisValue[][] = [];
  for (const g of groups) {
    const rowText = textOf(g.rowKey);
    let byColumn = raw.get(rowText);
    if (!byColumn) {
      byColumn = new Map();
      raw.set(rowText, byColumn);
    }
    byColumn.set(textOf(g.columnKey), applyFormulas(spec, g.values).map(finite));
    if (g.rowKey.length === R && g.columnKey.length === 0) rowKeys.push(g.rowKey);
    if (C > 0 && g.rowKey.length === 0 && g.columnKey.length === C) colKeys.push(g.columnKey);
  }
  const empty: Values = spec.totals.map(() => null);
  const rawAt = (r: readonly AxisValue[], c: readonly AxisValue[]) => raw.get(textOf(r))?.get(textOf(c)) ?? empty;
  const subtotals = opts.subtotals ?? spec.subtotals;
  const rows = arrangeAxis(rowKeys, {
    types: spec.rows.map((a) => a.keyType),
    reverse: spec.rows.map((a) => a.reverse),
    order: spec.rowOrder,
    limit: spec.rowLimit,
    filter: spec.rowFilter,
    subtotals,
    total: (k) => rawAt(k, []),
  });
  const columns = arrangeAxis(colKeys, {
    types: spec.columns.map((a) => a.keyType),
    reverse: spec.columns.map((a) => a.reverse),
    order: spec.columnOrder,
    limit: spec.columnLimit,
    filter: spec.columnFilter,
    subtotals,
    total: (k) => rawAt([], k),
  });
  const grand = rawAt([], []);
  // "Previous" is the row above in row order within the same outer group: the sibling before it (same
  // depth, same outer keys). The first of its group has none.
  const previous = new Map<string, AxisValue[]>();
  const lastOf = new Map<string, AxisValue[]>();
  for (const key of rows.keys) {
    const group = `${key.length}:${JSON.stringify(norm(key.slice(0, -1)))}`;
    const prev = lastOf.get(group);
    if (prev) previous.set(keyText(key, []), prev);
    lastOf.set(group, key);
  }
  const runs = new Map<string, number | null>();
  /** The running total down the rows of the group up to this row, empty while nothing was summed. */
  const running = (r: readonly AxisValue[], c: readonly AxisValue[], m: number): number | null => {
    const chain: Array<readonly AxisValue[]> = [];
    let sum: number | null = null;
    for (let k: readonly AxisValue[] | undefined = r; k; k = previous.get(keyText(k, []))) {
      const known = runs.get(`${m}|${keyText(k, c)}`);
      if (known !== undefined) {
        sum = known;
        break;
      }
      chain.push(k);
    }
    for (const k of chain.reverse()) {
      const v = rawAt(k, c)[m];
      sum = v === null ? sum : (sum ?? 0) + v;
      runs.set(`${m}|${keyText(k, c)}`, sum);
    }
    return sum;
  };
  const show = (
    mode: ShowAs,
    m: number,
    value: number | null,
    r: readonly AxisValue[],
    c: readonly AxisValue[],
  ): number | null => {
    switch (mode) {
      case 'value':
        return value;
      case 'percentOfGrandTotal':
        return finite(percent(value, grand[m]));
      case 'percentOfRowTotal':
        return finite(percent(value, rawAt(r, [])[m]));
      case 'percentOfColumnTotal':
        return finite(percent(value, rawAt([], c)[m]));
      case 'runningTotal':
        return finite(running(r, c, m));
      case 'differenceFromPrevious': {
        const prev = previous.get(keyText(r, []));
        const before = prev ? rawAt(prev, c)[m] : null;
        return value === null || before === null ? null : finite(value - before);
      }
      case 'percentDifferenceFromPrevious': {
        const prev = previous.get(keyText(r, []));
        const before = prev ? rawAt(prev, c)[m] : null;
        return value === null || before === null || before === 0 ? null : finite(((value - before) / before) * 100);
      }
    }
  };
  return {
    spec,
    rows: rows.keys,
    columns: columns.keys,
    at: (r, c) => rawAt(r, c).map((v, m) => show(spec.totals[m].showAs, m, v, r, c)),
    rowsOmitted: opts.outer?.rows?.omitted ?? rows.omitted,
    columnsOmitted: opts.outer?.columns?.omitted ?? columns.omitted,
    outerRows: opts.outer?.rows?.outer ?? rows.outer,
    outerColumns: opts.outer?.columns?.outer ?? columns.outer,
    rowsFilteredOut: opts.outer?.rows?.filteredOut ?? rows.filteredOut,
    columnsFilteredOut: opts.outer?.columns?.filteredOut ?? columns.filteredOut,
    drill: {
      timeZone: spec.timeZone,
      memo: new Map(),
      calendarDate: (field) => opts.drill?.calendarDates.includes(field) ?? false,
    },
  };
}

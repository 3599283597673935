import { evaluateFormula } from '@quarry/contract';
import type { FieldDef } from '@quarry/query-language';
import { axisText, type AxisValue, type GroupRow } from './axis-value';
import type { DrillFacts } from '../ports/pivot-engine.port';
import type { AxisOrder, AxisSpec, CrosstabSpec, FilterSpec } from './crosstab-spec';
import type { DrillContext } from './drill-query';
import { otherKey } from './other-key';
import { shownValues } from './shown-values';

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
/** The Other row's (column's) text: a real key's text is a JSON array, so none can read the same. */
const OTHER_TEXT = 'other';
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
  /** Per level: a manual order of its keys, listed first. */
  manual: Array<ReadonlyArray<string | number | boolean | null> | undefined>;
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
    const manual = plan.manual[level];
    if (manual) ordered = manualFirst(ordered, manual, plan.reverse[level]);
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

/** A key as a manual order lists it: blank is null, anything else its text (a bin's 30 and "30" alike). */
const manualText = (v: AxisValue | undefined) => (v === null || v === undefined || v === '' ? '\u0000' : String(v));

/**
 * The listed keys first, in the list's order (reversed by the axis's reverse), then the others in the
 * order they had: the default order. A listed value no key has is simply absent.
 */
function manualFirst<T extends { value: AxisValue }>(
  ordered: T[],
  manual: ReadonlyArray<string | number | boolean | null>,
  reverse: boolean,
): T[] {
  const list = reverse ? [...manual].reverse() : manual;
  const rank = new Map<string, number>();
  list.forEach((v, i) => rank.set(manualText(v), i));
  const listed: Array<{ c: T; at: number }> = [];
  const rest: T[] = [];
  for (const c of ordered) {
    const at = rank.get(manualText(c.value));
    if (at === undefined) rest.push(c);
    else listed.push({ c, at });
  }
  return [...listed.sort((a, b) => a.at - b.at).map((x) => x.c), ...rest];
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
    const rowText = g.rowOther ? OTHER_TEXT : textOf(g.rowKey);
    let byColumn = raw.get(rowText);
    if (!byColumn) {
      byColumn = new Map();
      raw.set(rowText, byColumn);
    }
    byColumn.set(g.columnOther ? OTHER_TEXT : textOf(g.columnKey), applyFormulas(spec, g.values).map(finite));
    if (g.rowOther || g.columnOther) continue;
    if (g.rowKey.length === R && g.columnKey.length === 0) rowKeys.push(g.rowKey);
    if (C > 0 && g.rowKey.length === 0 && g.columnKey.length === C) colKeys.push(g.columnKey);
  }
  const empty: Values = spec.totals.map(() => null);
  const rawAt = (r: readonly AxisValue[], c: readonly AxisValue[]) => raw.get(textOf(r))?.get(textOf(c)) ?? empty;
  const subtotals = opts.subtotals ?? spec.subtotals;
  const rows = arrangeAxis(rowKeys, {
    types: spec.rows.map((a) => a.keyType),
    reverse: spec.rows.map((a) => a.reverse),
    manual: spec.rows.map((a) => a.order),
    order: spec.rowOrder,
    limit: spec.rowLimit,
    filter: spec.rowFilter,
    subtotals,
    total: (k) => rawAt(k, []),
  });
  const columns = arrangeAxis(colKeys, {
    types: spec.columns.map((a) => a.keyType),
    reverse: spec.columns.map((a) => a.reverse),
    manual: spec.columns.map((a) => a.order),
    order: spec.columnOrder,
    limit: spec.columnLimit,
    filter: spec.columnFilter,
    subtotals,
    total: (k) => rawAt([], k),
  });
  // The Other row (column) last, when rowLimit (columnLimit) or the filter left values out and its groups came.
  const withOther = (
    keys: AxisValue[][],
    axis: AxisSpec | undefined,
    wanted: boolean,
    counts: OuterCounts,
    seen: boolean,
  ): AxisValue[][] => {
    const count = counts.omitted + counts.filteredOut;
    if (!wanted || !seen || count === 0 || !axis) return keys;
    const kept = [...new Map(keys.map((k) => [textOf([k[0]]), k[0]])).values()];
    const texts = new Set(kept.map((v) => axisText(axis, v)));
    const key = otherKey({ count, kept }, (label) => texts.has(label));
    keyTexts.set(key, OTHER_TEXT);
    return [...keys, key];
  };
  const rowCounts = opts.outer?.rows ?? rows;
  const columnCounts = opts.outer?.columns ?? columns;
  const shownRows = withOther(
    rows.keys,
    spec.rows[0],
    spec.otherRow,
    rowCounts,
    groups.some((g) => g.rowOther),
  );
  const shownColumns = withOther(
    columns.keys,
    spec.columns[0],
    spec.otherColumn,
    columnCounts,
    groups.some((g) => g.columnOther),
  );
  const show = shownValues({ totals: spec.totals, rawAt, rows: shownRows, columns: shownColumns, textOf });
  return {
    spec,
    rows: shownRows,
    columns: shownColumns,
    at: (r, c) => rawAt(r, c).map((v, m) => show(spec.totals[m].showAs, m, v, r, c)),
    rowsOmitted: rowCounts.omitted,
    columnsOmitted: columnCounts.omitted,
    outerRows: rowCounts.outer,
    outerColumns: columnCounts.outer,
    rowsFilteredOut: rowCounts.filteredOut,
    columnsFilteredOut: columnCounts.filteredOut,
    drill: {
      timeZone: spec.timeZone,
      memo: new Map(),
      calendarDate: (field) => opts.drill?.calendarDates.includes(field) ?? false,
    },
  };
}

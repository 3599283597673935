/*
 * CROSSTAB.EXECUTE's analytics computed in plain JS over the records, written from the contract's words
 * (docs/api.md) and not from the planner: date groups from wall-clock parts (Intl), ISO weeks by the
 * Thursday rule, bins by their bounds, medians and percentiles by sorting, formulas per group, filters
 * on the outermost groups, showAs over the rows as displayed. Its answer has the shape of the JSON
 * table, so a test compares the two cell by cell.
 */
import type { Rec } from './datasets';

export type OracleAgg =
  'Sum' | 'Count' | 'Average' | 'Min' | 'Max' | 'Median' | 'Percentile' | 'StdDev' | 'CountDistinct';

export interface OracleAxis {
  field: string;
  dateGroup?: string;
  bin?: { width: number; origin: number };
  /** How the field's values compare on a plain axis. */
  type: 'string' | 'number' | 'date';
  /** For dates: values are calendar dates (YYYY-MM-DD), not instants. */
  calendar?: boolean;
}

export type OracleTotal =
  | { agg: OracleAgg; field?: string; percentile?: number; showAs?: string }
  /** A ratio or difference of two earlier totals (by index). */
  | { formula: { op: '/' | '-' | '+'; a: number; b: number }; showAs?: string };

export interface OracleSpec {
  rows: OracleAxis[];
  columns: OracleAxis[];
  totals: OracleTotal[];
  timeZone: string;
  subtotals: boolean;
  rowFilter?: { measure: number; op: string; value: number };
}

type Key = Array<string | number | null>;
const blank = (v: unknown) => v === null || v === undefined || v === '';
const round12 = (n: number) => Number(n.toPrecision(12));

function wall(ms: number, timeZone: string) {
  const parts = new Intl.DateTimeFormat('en-US', {
    timeZone,
    hourCycle: 'h23',
    year: 'numeric',
    month: 'numeric',
    day: 'numeric',
    hour: 'numeric',
  }).formatToParts(new Date(ms));
  const get = (t: string) => Number(parts.find((p) => p.type === t)!.value);
  return { y: get('year'), m: get('month'), d: get('day'), h: get('hour') };
}

const p2 = (n: number) => String(n).padStart(2, '0');

function isoWeek(y: number, m: number, d: number): string {
  const date = new Date(Date.UTC(y, m - 1, d));
  const dow = ((date.getUTCDay() + 6) % 7) + 1;
  const thursday = new Date(date.getTime() + (4 - dow) * 86_400_000);
  const start = Date.UTC(thursday.getUTCFullYear(), 0, 1);
  const week = Math.floor((thursday.getTime() - start) / 86_400_000 / 7) + 1;
  return `${thursday.getUTCFullYear()}-W${p2(week)}`;
}

export function axisKey(a: OracleAxis, v: unknown, timeZone: string): string | number | null {
  if (blank(v)) return null;
  if (a.bin) {
    const x = Number(v);
    const { width: w, origin: o } = a.bin;
    let k = Math.floor((x - o) / w);
    if (x < o + k * w) k--;
    else if (x >= o + (k + 1) * w) k++;
    return round12(o + k * w);
  }
  if (a.dateGroup) {
    const text = String(v);
    const c = a.calendar
      ? { y: +text.slice(0, 4), m: +text.slice(5, 7), d: +text.slice(8, 10), h: 0 }
      : wall(Date.parse(`${text.replace(' ', 'T').slice(0, 19)}Z`), timeZone);
    const dow = ((new Date(Date.UTC(c.y, c.m - 1, c.d)).getUTCDay() + 6) % 7) + 1;
    switch (a.dateGroup) {
      case 'year':
        return String(c.y);
      case 'quarter':
        return `${c.y}-Q${Math.floor((c.m - 1) / 3) + 1}`;
      case 'month':
        return `${c.y}-${p2(c.m)}`;
      case 'week':
        return isoWeek(c.y, c.m, c.d);
      case 'day':
        return `${c.y}-${p2(c.m)}-${p2(c.d)}`;
      case 'hour':
        return `${c.y}-${p2(c.m)}-${p2(c.d)}T${p2(c.h)}`;
      case 'monthOfYear':
        return p2(c.m);
      case 'dayOfWeek':
        return String(dow);
      case 'hourOfDay':
        return p2(c.h);
    }
  }
  if (a.type === 'number') return Number(v);
  if (a.type === 'date') return String(v).slice(0, 10);
  return String(v);
}

function quantile(xs: number[], p: number): number | null {
  if (xs.length === 0) return null;
  const s = [...xs].sort((a, b) => a - b);
  const pos = (s.length - 1) * p;
  const lo = Math.floor(pos);
  const hi = Math.ceil(pos);
  return s[lo] + (s[hi] - s[lo]) * (pos - lo);
}

function aggregate(records: Rec[], t: OracleTotal, done: Array<number | null>): number | null {
  if ('formula' in t) {
    const a = done[t.formula.a];
    const b = done[t.formula.b];
    if (a === null || b === null) return null;
    if (t.formula.op === '/') return b === 0 ? null : a / b;
    return t.formula.op === '-' ? a - b : a + b;
  }
  if (t.agg === 'Count') return t.field ? records.filter((r) => !blank(r[t.field!])).length : records.length;
  if (t.agg === 'CountDistinct') return new Set(records.map((r) => r[t.field!]).filter((v) => !blank(v))).size;
  const xs = records
    .map((r) => r[t.field!])
    .filter((v) => !blank(v))
    .map(Number);
  if (xs.length === 0) return null;
  const sum = xs.reduce((a, b) => a + b, 0);
  switch (t.agg) {
    case 'Sum':
      return sum;
    case 'Average':
      return sum / xs.length;
    case 'Min':
      return Math.min(...xs);
    case 'Max':
      return Math.max(...xs);
    case 'Median':
      return quantile(xs, 0.5);
    case 'Percentile':
      return quantile(xs, t.percentile! / 100);
    case 'StdDev': {
      if (xs.length < 2) return null;
      const mean = sum / xs.length;
      return Math.sqrt(xs.reduce((a, x) => a + (x - mean) ** 2, 0) / (xs.length - 1));
    }
  }
}

function compareKeys(a: string | number | null, b: string | number | null): number {
  if (a === null || b === null) return a === b ? 0 : a === null ? 1 : -1;
  if (typeof a === 'number' && typeof b === 'number') return a - b;
  const x = String(a).toLowerCase();
  const y = String(b).toLowerCase();
  if (x !== y) return x < y ? -1 : 1;
  return String(a) < String(b) ? -1 : String(a) > String(b) ? 1 : 0;
}

function passes(v: number | null, f: { op: string; value: number }): boolean {
  if (v === null) return false;
  switch (f.op) {
    case '>':
      return v > f.value;
    case '>=':
      return v >= f.value;
    case '<':
      return v < f.value;
    case '<=':
      return v <= f.value;
    case '=':
      return v === f.value;
    default:
      return v !== f.value;
  }
}

export interface OracleTable {
  columns: Key[];
  rows: Array<{ key: Key; cells: Array<Array<number | null>>; total: Array<number | null>; subtotal?: true }>;
  columnTotals: Array<Array<number | null>>;
  grandTotal: Array<number | null>;
  rowsFilteredOut: number;
}

export function analyticsOracle(records: Rec[], spec: OracleSpec): OracleTable {
  const rk = (r: Rec): Key => spec.rows.map((a) => axisKey(a, r[a.field], spec.timeZone));
  const ck = (r: Rec): Key => spec.columns.map((a) => axisKey(a, r[a.field], spec.timeZone));
  const keyed = records.map((r) => ({ r, row: rk(r), col: ck(r) }));
  const same = (k: Key, prefix: Key) => prefix.every((v, i) => v === k[i]);
  // Every record in the group of each (row prefix, column prefix) it belongs to.
  const buckets = new Map<string, Rec[]>();
  for (const x of keyed)
    for (let i = 0; i <= x.row.length; i++)
      for (let j = 0; j <= x.col.length; j++) {
        const id = JSON.stringify([x.row.slice(0, i), x.col.slice(0, j)]);
        const b = buckets.get(id);
        if (b) b.push(x.r);
        else buckets.set(id, [x.r]);
      }
  const memo = new Map<string, Array<number | null>>();
  const values = (rowPrefix: Key, colPrefix: Key): Array<number | null> => {
    const id = JSON.stringify([rowPrefix, colPrefix]);
    const known = memo.get(id);
    if (known) return known;
    const rs = buckets.get(id) ?? [];
    const done: Array<number | null> = [];
    // A cell no record falls in is empty (null), a count included: there is no group to count.
    for (const t of spec.totals) done.push(rs.length ? aggregate(rs, t, done) : null);
    memo.set(id, done);
    return done;
  };
  const uniq = (keys: Key[]) => [...new Map(keys.map((k) => [JSON.stringify(k), k])).values()];
  const sortKeys = (keys: Key[]) =>
    keys.sort((a, b) => {
      for (let i = 0; i < a.length; i++) {
        const c = compareKeys(a[i], b[i]);
        if (c) return c;
      }
      return 0;
    });
  let rowKeys = sortKeys(uniq(keyed.map((x) => x.row)));
  const colKeys = spec.columns.length ? sortKeys(uniq(keyed.map((x) => x.col))) : [];
  let rowsFilteredOut = 0;
  if (spec.rowFilter) {
    const f = spec.rowFilter;
    const outer = uniq(rowKeys.map((k) => k.slice(0, 1)));
    const kept = outer.filter((o) => passes(values(o, [])[f.measure], f));
    rowsFilteredOut = outer.length - kept.length;
    rowKeys = rowKeys.filter((k) => kept.some((o) => o[0] === k[0]));
  }
  // Rows as displayed: with subtotals, each outer group's subtotal after its rows, innermost first.
  const displayed: Array<{ key: Key; subtotal: boolean }> = [];
  const R = spec.rows.length;
  rowKeys.forEach((k, i) => {
    displayed.push({ key: k, subtotal: false });
    if (!spec.subtotals) return;
    const next = rowKeys[i + 1];
    for (let depth = R - 1; depth >= 1; depth--) {
      const prefix = k.slice(0, depth);
      if (!next || !same(next, prefix)) displayed.push({ key: prefix, subtotal: true });
    }
  });
  const colsDisplayed: Key[] = [];
  const C = spec.columns.length;
  colKeys.forEach((k, i) => {
    colsDisplayed.push(k);
    if (!spec.subtotals) return;
    const next = colKeys[i + 1];
    for (let depth = C - 1; depth >= 1; depth--) {
      const prefix = k.slice(0, depth);
      if (!next || !same(next, prefix)) colsDisplayed.push(prefix);
    }
  });
  const raw = (r: Key, c: Key) => values(r, c);
  const grand = raw([], []);
  // showAs over the rows as displayed: "previous" is the row above with the same depth and outer keys.
  const previous = new Map<string, Key>();
  const last = new Map<string, Key>();
  for (const { key } of displayed) {
    const group = `${key.length}:${JSON.stringify(key.slice(0, -1))}`;
    const prev = last.get(group);
    if (prev) previous.set(JSON.stringify(key), prev);
    last.set(group, key);
  }
  // The running total of a row: its own value added to the one of the row above in its group.
  const runs = new Map<string, number | null>();
  const running = (r: Key, c: Key, m: number): number | null => {
    const id = JSON.stringify([r, c, m]);
    if (runs.has(id)) return runs.get(id)!;
    const prev = previous.get(JSON.stringify(r));
    const before = prev ? running(prev, c, m) : null;
    const x = raw(r, c)[m];
    const sum = x === null ? before : (before ?? 0) + x;
    runs.set(id, sum);
    return sum;
  };
  const shown = (r: Key, c: Key): Array<number | null> =>
    raw(r, c).map((v, m) => {
      const mode = spec.totals[m].showAs ?? 'value';
      const pct = (d: number | null) => (v === null || d === null || d === 0 ? null : (v / d) * 100);
      const prev = previous.get(JSON.stringify(r));
      switch (mode) {
        case 'percentOfGrandTotal':
          return pct(grand[m]);
        case 'percentOfRowTotal':
          return pct(raw(r, [])[m]);
        case 'percentOfColumnTotal':
          return pct(raw([], c)[m]);
        case 'runningTotal':
          return running(r, c, m);
        case 'differenceFromPrevious': {
          const b = prev ? raw(prev, c)[m] : null;
          return v === null || b === null ? null : v - b;
        }
        case 'percentDifferenceFromPrevious': {
          const b = prev ? raw(prev, c)[m] : null;
          return v === null || b === null || b === 0 ? null : ((v - b) / b) * 100;
        }
        default:
          return v;
      }
    });
  return {
    columns: colsDisplayed,
    rows: displayed.map(({ key, subtotal }) => ({
      key,
      cells: colsDisplayed.map((c) => shown(key, c)),
      total: shown(key, []),
      ...(subtotal ? { subtotal: true as const } : {}),
    })),
    columnTotals: colsDisplayed.map((c) => shown([], c)),
    grandTotal: shown([], []),
    rowsFilteredOut,
  };
}

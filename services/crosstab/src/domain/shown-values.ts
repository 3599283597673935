import type { AxisValue } from './axis-value';
import type { ShowAs, TotalSpec } from './crosstab-spec';
import { otherOf } from './other-key';

type Value = number | null;
type Key = readonly AxisValue[];

/**
 * A value as the engine computed it, every digit kept: only what is not a number at all (a division by
 * zero's NaN or Infinity) is blank.
 */
const finite = (v: Value) => (v === null || !Number.isFinite(v) ? null : v);

/** percent of `denominator`, or empty where either side is empty or the denominator is 0. */
function percent(value: Value, denominator: Value | undefined): Value {
  if (value === null || denominator === null || denominator === undefined || denominator === 0) return null;
  return finite((value / denominator) * 100);
}

/** What "show values as" reads of a table: its raw values, its keys in display order, and key texts. */
export interface ShownContext {
  totals: readonly TotalSpec[];
  rawAt: (r: Key, c: Key) => Value[];
  /** Rows and columns as drawn (subtotals among them, the Other row or column last). */
  rows: readonly Key[];
  columns: readonly Key[];
  textOf: (key: Key) => string;
}

/** The siblings of a key: the same depth and the same outer keys (the Other key has none). */
const siblingGroup = (key: Key, textOf: (key: Key) => string) => `${key.length}:${textOf(key.slice(0, -1))}`;

/**
 * The shown value of every mode but `value`, from the raw values. Modes along the row order (running
 * total, differences, moving average) go down the rows within each column and within the same outer
 * group; ranks are among siblings. The Other row (column) is none of the keys in that order: it is
 * ranked, averaged and differenced nowhere, but the cells inside it are ranked along it as any row's
 * (column's) are: rankInRow fills the Other row as rankInColumn fills the Other column.
 */
export function shownValues(ctx: ShownContext): (mode: ShowAs, m: number, value: Value, r: Key, c: Key) => Value {
  const { rawAt, textOf } = ctx;
  const grand = rawAt([], []);
  // "Previous" is the row above in row order within the same outer group: the sibling before it.
  const previous = new Map<string, Key>();
  const lastOf = new Map<string, Key>();
  const rowSiblings = new Map<string, Key[]>();
  const columnSiblings = new Map<string, Key[]>();
  for (const key of ctx.rows) {
    if (otherOf(key)) continue;
    const group = siblingGroup(key, textOf);
    const prev = lastOf.get(group);
    if (prev) previous.set(textOf(key), prev);
    lastOf.set(group, key);
    const siblings = rowSiblings.get(group);
    if (siblings) siblings.push(key);
    else rowSiblings.set(group, [key]);
  }
  for (const key of ctx.columns) {
    if (otherOf(key)) continue;
    const group = siblingGroup(key, textOf);
    const siblings = columnSiblings.get(group);
    if (siblings) siblings.push(key);
    else columnSiblings.set(group, [key]);
  }
  const runs = new Map<string, Value>();
  /** The running total down the rows of the group up to this row, empty while nothing was summed. */
  const running = (r: Key, c: Key, m: number): Value => {
    const chain: Key[] = [];
    let sum: Value = null;
    for (let k: Key | undefined = r; k; k = previous.get(textOf(k))) {
      const known = runs.get(`${m}|${textOf(k)}|${textOf(c)}`);
      if (known !== undefined) {
        sum = known;
        break;
      }
      chain.push(k);
    }
    for (const k of chain.reverse()) {
      const v = rawAt(k, c)[m];
      sum = v === null ? sum : (sum ?? 0) + v;
      runs.set(`${m}|${textOf(k)}|${textOf(c)}`, sum);
    }
    return sum;
  };
  const movingAverage = (r: Key, c: Key, m: number, window: number): Value => {
    let sum = 0;
    let n = 0;
    let k: Key | undefined = r;
    for (let i = 0; i < window && k; i++, k = previous.get(textOf(k))) {
      const v = rawAt(k, c)[m];
      if (v !== null) {
        sum += v;
        n++;
      }
    }
    return n ? finite(sum / n) : null;
  };
  // Each sibling set's values of one measure at one place, largest first, once.
  const ranked = new Map<string, number[]>();
  const rank = (id: string, value: Value, values: () => Value[]): Value => {
    if (value === null) return null;
    let sorted = ranked.get(id);
    if (!sorted) {
      sorted = values()
        .filter((v): v is number => v !== null)
        .sort((a, b) => b - a);
      ranked.set(id, sorted);
    }
    // RANK.EQ: 1 + how many are larger, so ties share the best rank and the next rank is skipped.
    let lo = 0;
    let hi = sorted.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (sorted[mid] > value) lo = mid + 1;
      else hi = mid;
    }
    return lo + 1;
  };
  const parentOf = (k: Key): Key => (k.length === 0 || otherOf(k) ? [] : k.slice(0, -1));
  const previousValue = (r: Key, c: Key, m: number): Value => {
    const prev = previous.get(textOf(r));
    return prev ? rawAt(prev, c)[m] : null;
  };
  return (mode, m, value, r, c) => {
    switch (mode) {
      case 'value':
        return value;
      case 'percentOfGrandTotal':
        return percent(value, grand[m]);
      case 'percentOfRowTotal':
        return percent(value, rawAt(r, [])[m]);
      case 'percentOfColumnTotal':
        return percent(value, rawAt([], c)[m]);
      case 'percentOfParentRow':
        return percent(value, rawAt(parentOf(r), c)[m]);
      case 'percentOfParentColumn':
        return percent(value, rawAt(r, parentOf(c))[m]);
    }
    // The Other row takes no part in the row order, but the cells inside it are ranked along it.
    if (mode === 'rankInRow') {
      if (c.length === 0 || otherOf(c)) return null;
      const group = siblingGroup(c, textOf);
      return rank(`${m}|${textOf(r)}|${group}`, value, () =>
        (columnSiblings.get(group) ?? []).map((k) => rawAt(r, k)[m]),
      );
    }
    if (otherOf(r)) return null;
    switch (mode) {
      case 'runningTotal':
        return finite(running(r, c, m));
      case 'differenceFromPrevious': {
        const before = previousValue(r, c, m);
        return value === null || before === null ? null : finite(value - before);
      }
      case 'percentDifferenceFromPrevious': {
        const before = previousValue(r, c, m);
        return value === null || before === null || before === 0 ? null : finite(((value - before) / before) * 100);
      }
      case 'movingAverage':
        return movingAverage(r, c, m, ctx.totals[m].window ?? 1);
      case 'rankInColumn': {
        if (r.length === 0) return null;
        const group = siblingGroup(r, textOf);
        return rank(`${m}|${group}|${textOf(c)}`, value, () =>
          (rowSiblings.get(group) ?? []).map((k) => rawAt(k, c)[m]),
        );
      }
    }
  };
}

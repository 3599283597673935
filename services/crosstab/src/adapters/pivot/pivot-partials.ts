import type { Aggregation, AxisSpec } from '../../domain/crosstab-spec';

// Exact partial aggregates: what each cell carries so every level's total adds up from them.

/** Aggregations no partial adds up to: every level reads its own records (never a median of medians). */
export const HOLISTIC: ReadonlySet<Aggregation> = new Set(['Median', 'Percentile', 'StdDev']);

export type PartialKind = 'sum' | 'count' | 'min' | 'max';
/** A partial as DuckDB returns it: exact integers (BIGINT, HUGEINT) come as bigint. */
export type Acc = bigint | number | null;

const SAFE = BigInt(Number.MAX_SAFE_INTEGER);

/**
 * A partial as the roll-up holds it: a bigint that fits a double exactly becomes a number, because
 * adding bigints allocates each time and was most of a 100,000-cell roll-up's time and garbage
 * (DuckDB returns every count and integer sum as a bigint).
 */
export function intake(v: unknown): Acc {
  if (typeof v === 'bigint') return v >= -SAFE && v <= SAFE ? Number(v) : v;
  return v as Acc;
}

export function combine(kind: PartialKind, a: Acc, b: Acc): Acc {
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

/** What the JS roll-up reads of a plan: the pivot's own cells, or a twin's (pivot-twin). */
export interface RollupView {
  axes: readonly AxisSpec[];
  rowAliases: readonly string[];
  colAliases: readonly string[];
  levels: ReadonlyArray<readonly [number, number]>;
  partials: ReadonlyArray<{ alias: string; kind: PartialKind }>;
  /** The columns holding each cell's distinct values (pivot-distinct), one per counted field; none without. */
  distinct?: ReadonlyArray<{ alias: string }>;
  /** A total from its group's partials and, per counted field, how many distinct values the group holds. */
  totals: ReadonlyArray<{ value: (acc: readonly Acc[], distinct?: readonly number[]) => number | null }>;
}

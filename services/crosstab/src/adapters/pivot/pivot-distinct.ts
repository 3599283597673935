import { Int32List } from './int32-list';
import type { PivotPlan } from './pivot-plan';
import { TextInterner } from './text-interner';

/**
 * Distinct counts rolled up in JS: each cell brings the distinct values it holds (one text, the values
 * joined by DISTINCT_SEPARATOR), every value is interned once as a small integer, and each group keeps a
 * bitset of the integers its cells hold, so a subtotal counts the union of its cells' values (never a sum
 * of their counts). Used where the number of values is bounded in advance: a rollup's rows (the
 * pre-aggregate has one row per cell and value, at most the rollup's rows).
 */

/** Joins a cell's values in DuckDB's string_agg; a value holding it sends the pivot to the SQL roll-up. */
export const DISTINCT_SEPARATOR = '\u001f';

/**
 * The most (value, level) additions the JS distinct roll-up may do: past it the grouping sets statement
 * counts in DuckDB, which yields to other calls and honours the deadline.
 */
export const JS_DISTINCT_MAX_WORK = 1_000_000;

/**
 * A plan's cells as its cellsSql, each with its distinct values of every counted field joined (blank text
 * left out, as the count leaves it) and whether one of them holds the separator (then the caller counts
 * in SQL). The pre-aggregate's rows (one per cell and value) are added up per cell.
 */
export function distinctCellsSql(plan: PivotPlan, limit: number): string {
  const aliases = [...plan.rowAliases, ...plan.colAliases];
  const sep = `chr(${DISTINCT_SEPARATOR.charCodeAt(0)})`;
  const readd = (p: { sql: string; alias: string; kind: string }) => {
    const agg = p.kind === 'min' || p.kind === 'max' ? p.kind : p.sql.startsWith('fsum(') ? 'fsum' : 'sum';
    return `${agg}(${p.alias}) AS ${p.alias}`;
  };
  const lists = plan.distinct.flatMap((d) => [
    `string_agg(nullif(${d.alias}, ''), ${sep}) AS ${d.alias}`,
    `bool_or(contains(${d.alias}, ${sep})) AS ${separatorFlag(d.alias)}`,
  ]);
  const groupBy = aliases.length ? ` GROUP BY ${aliases.join(', ')}` : '';
  const cells = `SELECT ${[...aliases, ...plan.partials.map(readd), ...lists].join(', ')} FROM (${plan.preAggregate()})${groupBy}`;
  const order = plan.axes.length ? ` ORDER BY ${plan.axes.map((_, i) => i + 1).join(', ')}` : '';
  const carried = [
    ...plan.partials.map((p) => p.alias),
    ...plan.distinct.flatMap((d) => [d.alias, separatorFlag(d.alias)]),
  ];
  return `SELECT ${[...plan.labelled(), ...carried].join(', ')} FROM (${cells})${order} LIMIT ${limit}`;
}

/** The column saying a cell's values of a counted field hold the separator. */
export const separatorFlag = (alias: string) => `${alias}_sep`;

/** The most bitset words all groups may hold (32 MB); a larger domain of values counts in SQL. */
const MAX_WORDS = 8_000_000;

/** Per counted field: every cell's codes in one list, cell `at`'s from starts[at] to starts[at + 1]. */
interface FieldCodes {
  codes: Int32List;
  starts: Int32Array;
  /** Bitset words per group. */
  words: number;
  /** Every group's bitset, group g's words from g * words. */
  bits: Uint32Array;
}

export class DistinctBits {
  private constructor(private readonly fields: FieldCodes[]) {}

  /**
   * Interns every cell's values of each counted field (`aliases`) for at most `groups` groups; undefined
   * when their bitsets would pass MAX_WORDS.
   */
  static of(rows: ReadonlyArray<Record<string, unknown>>, aliases: readonly string[], groups: number) {
    const sep = DISTINCT_SEPARATOR.charCodeAt(0);
    const read = aliases.map((alias) => {
      const texts = new TextInterner();
      const codes = new Int32List();
      const starts = new Int32Array(rows.length + 1);
      rows.forEach((row, at) => {
        const joined = row[alias];
        if (joined !== null && joined !== undefined) texts.codes(String(joined), sep, codes);
        starts[at + 1] = codes.length;
      });
      return { codes, starts, words: Math.max(1, Math.ceil(texts.size / 32)) };
    });
    if (read.reduce((n, f) => n + f.words, 0) * groups > MAX_WORDS) return undefined;
    return new DistinctBits(read.map((f) => ({ ...f, bits: new Uint32Array(f.words * groups) })));
  }

  /** Adds cell `at`'s values to group `group` (numbered from 0, below the `groups` given). */
  add(group: number, at: number): void {
    for (const { codes, starts, words, bits } of this.fields) {
      const base = group * words;
      for (let i = starts[at]; i < starts[at + 1]; i++) {
        const code = codes.at(i);
        bits[base + (code >>> 5)] |= 1 << (code & 31);
      }
    }
  }

  /** How many distinct values each counted field has in a group. */
  counts(group: number): number[] {
    return this.fields.map(({ words, bits }) => {
      let n = 0;
      for (let i = group * words; i < (group + 1) * words; i++) {
        let v = bits[i];
        v -= (v >>> 1) & 0x55555555;
        v = (v & 0x33333333) + ((v >>> 2) & 0x33333333);
        n += (((v + (v >>> 4)) & 0x0f0f0f0f) * 0x01010101) >>> 24;
      }
      return n;
    });
  }
}
